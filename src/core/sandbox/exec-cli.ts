import type { Writable } from 'node:stream';
import { parseExecArgs } from './exec-args.js';
import { sandboxExec } from './service.js';
import type { SandboxSettings } from './settings.js';
import { UNAVAILABLE_EXIT_CODE, UNAVAILABLE_PREFIX, unavailableMessage } from './unavailable.js';

export interface ExecCliIo {
  stdout: Writable;
  stderr: Writable;
  /** Registers a forwarder for the caller's signals (SIGINT, SIGTERM, SIGHUP); returns the unregister function. */
  onSignal?: (forward: (signal: number) => void) => () => void;
}

/**
 * `sandbox exec` behind both entries (the oclif command and the lean exec-main.js the shim calls): parses
 * the raw argument bytes after `sandbox exec`, runs the command and returns the exit code. Messages go to
 * the given stderr unwrapped, because callers match the fail-closed message at the start of a line.
 */
export async function runSandboxExecCli(args: readonly Buffer[], settings: SandboxSettings | (() => SandboxSettings), io: ExecCliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseExecArgs(args);
    const handle = sandboxExec(typeof settings === 'function' ? settings() : settings, parsed, io);
    const unregister = io.onSignal?.((signal) => handle.signal(signal));
    const outcome = await handle.done.finally(() => unregister?.());
    if (outcome.unavailable) io.stderr.write(`${outcome.unavailable}\n${outcome.hint ? `Hint: ${outcome.hint}\n` : ''}`);
    else if (outcome.end?.kind === 'timeout') io.stderr.write(`sandbox exec: command timed out after ${parsed.timeoutMs} ms\n`);
    else if (outcome.end?.kind === 'spawn-failed') io.stderr.write(`sandbox exec: ${outcome.end.message}\n`);
    return outcome.exitCode;
  } catch (error) {
    const message = (error as Error).message;
    io.stderr.write(`${message.startsWith(UNAVAILABLE_PREFIX) ? message : unavailableMessage(message)}\n`);
    return UNAVAILABLE_EXIT_CODE;
  }
}
