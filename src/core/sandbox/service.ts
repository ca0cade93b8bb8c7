import type { Writable } from 'node:stream';
import type { ExecArgs } from './exec-args.js';
import { inspectPlanPaths, pinWorkdir } from './planner.js';
import { runnerCall, runnerExec } from './runner-client.js';
import type { ExecHandle, ExecOutcome } from './runner-client.js';
import type { VmStatus } from './runner-daemon.js';
import type { SandboxSettings } from './settings.js';
import { VM_NAME } from './settings.js';
import { UNAVAILABLE_EXIT_CODE, UNAVAILABLE_PREFIX, unavailableMessage, unavailableReason } from './unavailable.js';
import { resolveVmConfig } from './vm-config.js';

/** What the `docdex sandbox ...` commands call; each resolves the wanted VM from settings and asks the runner. */

export async function sandboxUp(settings: SandboxSettings): Promise<VmStatus> {
  const config = await resolveVmConfig(settings);
  return (await runnerCall(settings.stateDir, { op: 'up', config })) as VmStatus;
}

export async function sandboxDown(settings: SandboxSettings): Promise<{ stopped: boolean }> {
  return (await runnerCall(settings.stateDir, { op: 'down' })) as { stopped: boolean };
}

/** Status with a live attestation against the current settings when a VM runs and the settings resolve. */
export async function sandboxStatus(settings: SandboxSettings): Promise<VmStatus & { configError?: string }> {
  let configError: string | undefined;
  const config = await resolveVmConfig(settings, { create: false }).catch((error: unknown) => {
    // The reason only: a status must not claim "enforcement is on" (the prefix) when it may be off.
    configError = unavailableReason((error as Error).message);
    return undefined;
  });
  const status = (await runnerCall(settings.stateDir, config ? { op: 'status', config } : { op: 'status' })) as VmStatus;
  return { ...status, name: status.name || VM_NAME, ...(configError ? { configError } : {}) };
}

/**
 * Runs one command in the VM. Never runs anything on the host: every failure before the guest command starts
 * (configuration, working directory outside the roots, runner, boot, attestation) yields exit code 125 and
 * the fail-closed message.
 */
export function sandboxExec(settings: SandboxSettings, args: ExecArgs, io: { stdout: Writable; stderr: Writable }): ExecHandle {
  let inner: ExecHandle | undefined;
  const queued: number[] = [];
  const done = (async (): Promise<ExecOutcome> => {
    let config;
    try {
      config = await resolveVmConfig(settings);
    } catch (error) {
      return failed(error);
    }
    const cwd = args.workdir.toString('utf8');
    const facts = await inspectPlanPaths(cwd, settings.roots);
    const pin = pinWorkdir(cwd, facts.realCwd, facts.roots);
    if (!pin.ok) return { exitCode: UNAVAILABLE_EXIT_CODE, unavailable: pin.message };
    inner = runnerExec(settings.stateDir, { op: 'exec', config }, { cwd: Buffer.from(pin.workdir, 'utf8'), argv: args.argv, env: args.env, timeoutMs: args.timeoutMs }, io);
    for (const s of queued.splice(0)) inner.signal(s);
    return inner.done;
  })();
  return {
    done,
    signal(signal: number) {
      if (inner) inner.signal(signal);
      else queued.push(signal);
    },
  };
}

function failed(error: unknown): ExecOutcome {
  const message = error instanceof Error ? error.message : String(error);
  const hint = (error as { hint?: string }).hint;
  return {
    exitCode: UNAVAILABLE_EXIT_CODE,
    unavailable: message.startsWith(UNAVAILABLE_PREFIX) ? message : unavailableMessage(message),
    ...(hint ? { hint } : {}),
  };
}
