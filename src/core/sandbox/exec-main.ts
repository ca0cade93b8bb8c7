/**
 * Lean process entry for `sandbox exec`, which the shell shim calls once per agent command:
 *   node dist/core/sandbox/exec-main.js sandbox exec -w DIR [-e K=V ...] -- sh -c CMD
 * Same arguments, environment, output and exit codes as `docdex sandbox exec`, without loading the oclif
 * command tree (which costs a few hundred milliseconds per command).
 */
import { loadConfig } from '../config.js';
import { rawProcessArgs } from './exec-args.js';
import { runSandboxExecCli } from './exec-cli.js';
import { sandboxSettings } from './settings.js';

const SIGNALS = { SIGINT: 2, SIGTERM: 15, SIGHUP: 1 } as const;

const raw = rawProcessArgs(process.argv);
const start = raw.length >= 2 && raw[0]!.toString() === 'sandbox' && raw[1]!.toString() === 'exec' ? 2 : 0;
process.exitCode = await runSandboxExecCli(raw.slice(start), () => sandboxSettings(loadConfig()), {
  stdout: process.stdout,
  stderr: process.stderr,
  onSignal: (forward) => {
    const entries = Object.entries(SIGNALS).map(([name, n]) => [name, () => forward(n)] as const);
    for (const [name, h] of entries) process.on(name, h);
    return () => {
      for (const [name, h] of entries) process.off(name, h);
    };
  },
});
