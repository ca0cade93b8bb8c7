import { describeSandboxSwitches } from '../core/sandbox/switch.js';
import type { SandboxHostCheck, SandboxSwitchState } from '../core/sandbox/switch.js';

/** The `--json` of the sandbox switch commands (snake_case, as every command's `--json`). */
export interface SandboxSwitchJson {
  enabled: boolean;
  git_credentials: boolean;
  git_identity: { name: string | null; email: string | null };
  agent_server: { status: string; enforced: boolean | null };
  takes_effect: SandboxSwitchState['takesEffect'];
  host?: { supported: boolean; accel: string; problems: string[]; notes: string[] };
}

export function sandboxSwitchJson(state: SandboxSwitchState, host?: SandboxHostCheck): SandboxSwitchJson {
  return {
    enabled: state.enabled,
    git_credentials: state.gitCredentials,
    git_identity: { name: state.gitIdentity.name ?? null, email: state.gitIdentity.email ?? null },
    agent_server: { status: state.agentServer.status, enforced: state.agentServer.enforced },
    takes_effect: state.takesEffect,
    ...(host ? { host: { supported: host.supported, accel: host.accel, problems: host.problems, notes: host.notes } } : {}),
  };
}

/** The lines a switch command prints: the state in sentences, then what the host check noted. */
export function sandboxSwitchLines(state: SandboxSwitchState, host?: SandboxHostCheck): string[] {
  return [...describeSandboxSwitches(state), ...(host?.notes ?? []).map((note) => `Note: ${note}`)];
}
