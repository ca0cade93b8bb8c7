import { constants, existsSync } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';
import type pg from 'pg';
import { readAgentServerState } from '../agent-server/state.js';
import type { AgentServerState } from '../agent-server/supervisor.js';
import { z } from 'zod';
import { DEFAULT_USER_ID, readSettings, setSandboxPreferences } from '../agent/settings.js';
import { UserError } from '../errors.js';
import { findExecMain } from './enforcement.js';
import { requireImage, resolveImageRef } from './images.js';
import { storedRegistryImage } from './oci-pull.js';
import type { SandboxSettings } from './settings.js';
import { unavailableReason } from './unavailable.js';

/**
 * The user's sandbox switches (spec: States and transitions, "sandbox disabled → enforced"): turning
 * enforcement on checks that this host can run the microVM first, and every answer says whether the running
 * agent server already enforces the setting, or which (re)start applies it. The CLI (`docdex sandbox
 * enable|disable|status`), `GET/PUT /api/settings/sandbox` and the dashboard's settings screen all call these;
 * the agent's `mgr` tool reaches none of them (PATCH /api/internal/settings refuses the `sandbox` key).
 */

export const SandboxHostCheck = z
  .object({
    supported: z.boolean().describe('False when the microVM cannot run here: enabling is refused and problems says why'),
    accel: z.enum(['kvm', 'tcg']).describe('kvm when /dev/kvm is usable (the first boot still probes it), else tcg: QEMU software emulation'),
    problems: z.array(z.string()),
    notes: z.array(z.string()).describe('True but worth knowing: software emulation, no image built yet'),
  })
  .meta({ id: 'SandboxHostCheck' });
export type SandboxHostCheck = z.infer<typeof SandboxHostCheck>;

export interface HostCheckOptions {
  /** The directories searched for the host tools; default $PATH. */
  searchPath?: string;
  kvmDevice?: string;
  platform?: NodeJS.Platform;
}

/** Host tools and the Debian package that has each (sandbox/README.md, Host requirements). */
const HOST_TOOLS: ReadonlyArray<readonly [string, string]> = [
  ['qemu-system-x86_64', 'qemu-system-x86'],
  ['bwrap', 'bubblewrap'],
  ['mkfs.ext4', 'e2fsprogs'],
  ['cc', 'gcc and libc6-dev'],
];
/** What pulling a registry image takes (sandbox/scripts/pull-image.sh). */
const PULL_TOOLS: ReadonlyArray<readonly [string, string]> = [
  ['skopeo', 'skopeo'],
  ['umoci', 'umoci'],
];
/** Needed only until the kernel is cached: build-kernel.sh fetches Debian's without installing it. */
const KERNEL_TOOLS: ReadonlyArray<readonly [string, string]> = [
  ['apt-get', 'apt'],
  ['dpkg-deb', 'dpkg'],
  ['xz', 'xz-utils'],
];

const INSTALL_HINT =
  'Install what is missing (Debian: apt-get install --no-install-recommends qemu-system-x86 bubblewrap busybox-static gcc libc6-dev e2fsprogs xz-utils), then run `docdex sandbox enable` again; sandbox/README.md lists the host requirements.';

async function usable(file: string, mode: number): Promise<boolean> {
  return access(file, mode).then(
    () => true,
    () => false,
  );
}

async function onPath(command: string, searchPath: string): Promise<boolean> {
  for (const dir of searchPath.split(path.delimiter).filter(Boolean)) {
    if (await usable(path.join(dir, command), constants.X_OK)) return true;
  }
  return false;
}

async function missingTools(tools: ReadonlyArray<readonly [string, string]>, searchPath: string): Promise<string[]> {
  const missing: string[] = [];
  for (const [command, pkg] of tools) if (!(await onPath(command, searchPath))) missing.push(`${command} (${pkg})`);
  return missing;
}

/**
 * The image SANDBOX_IMAGE names, when it is not stored yet: a local one missing refuses the first command; a
 * registry one is pulled by the first boot, which needs skopeo and umoci.
 */
async function imageNote(settings: SandboxSettings, searchPath: string): Promise<string | undefined> {
  try {
    const image = await resolveImageRef(settings.cacheDir, settings.image);
    if (image.kind === 'local') await requireImage(settings.cacheDir, image);
    else if (!(await storedRegistryImage(settings.cacheDir, image.ref))) {
      const missing = await missingTools(PULL_TOOLS, searchPath);
      if (missing.length > 0)
        return `SANDBOX_IMAGE=${image.ref} is a registry image and this host lacks ${missing.join(', ')} to pull it: every sandboxed command is refused until they are installed.`;
      return `SANDBOX_IMAGE=${image.ref} is pulled from ${image.oci.registry} when the microVM first boots (within SANDBOX_START_TIMEOUT_MS).`;
    }
    return undefined;
  } catch (error) {
    const hint = (error as UserError).hint;
    return `${unavailableReason((error as Error).message)}: every sandboxed command is refused until it exists.${hint ? ` ${hint}` : ''}`;
  }
}

/**
 * Whether this host can run the microVM, without booting it: the host tools, the kernel (cached or
 * downloadable), a built docdex (the shim runs its exec entry) and the accelerator. Without a usable /dev/kvm
 * the VM runs under TCG, which keeps commands off the host but is slower and, by QEMU's own account, not a
 * security boundary: a note, not a refusal (SANDBOX_ACCEL=auto falls back the same way). SANDBOX_ACCEL=kvm
 * without /dev/kvm is a refusal.
 */
export async function checkSandboxHost(settings: SandboxSettings, options: HostCheckOptions = {}): Promise<SandboxHostCheck> {
  const searchPath = options.searchPath ?? process.env.PATH ?? '';
  const kvmDevice = options.kvmDevice ?? '/dev/kvm';
  const problems: string[] = [];
  const notes: string[] = [];
  if ((options.platform ?? process.platform) !== 'linux') problems.push('the microVM needs a Linux host');
  const missing = await missingTools(HOST_TOOLS, searchPath);
  if (!existsSync('/bin/busybox')) missing.push('/bin/busybox (busybox-static)');
  if (!existsSync(path.join(settings.cacheDir, 'kernel', 'current', 'vmlinux'))) missing.push(...(await missingTools(KERNEL_TOOLS, searchPath)));
  if (missing.length > 0) problems.push(`missing ${missing.join(', ')}`);
  if (findExecMain() === undefined) problems.push('docdex is not built (dist/core/sandbox/exec-main.js, which the shell shim runs, is missing; run `npm run build`)');
  const kvm = await usable(kvmDevice, constants.R_OK | constants.W_OK);
  if (settings.accel === 'kvm' && !kvm) problems.push(`SANDBOX_ACCEL=kvm but ${kvmDevice} is missing or not accessible`);
  const accel = kvm && settings.accel !== 'tcg' ? 'kvm' : 'tcg';
  if (accel === 'tcg') {
    notes.push(
      `${settings.accel === 'tcg' ? 'SANDBOX_ACCEL=tcg' : `no usable ${kvmDevice}`}: commands run in the microVM under QEMU's software emulation (TCG), which is slower and not a security boundary of its own (sandbox/README.md)`,
    );
  }
  const image = await imageNote(settings, searchPath);
  if (image !== undefined) notes.push(image);
  return { supported: problems.length === 0, accel, problems, notes };
}

export const SandboxSwitchState = z
  .object({
    enabled: z.boolean(),
    gitCredentials: z.boolean().describe('Forward git credentials and the git identity into the microVM (applies to the next command)'),
    gitIdentity: z.object({ name: z.string().optional(), email: z.string().optional() }),
    agentServer: z.object({
      status: z.enum(['stopped', 'starting', 'running', 'backoff', 'stopping', 'failed']),
      enforced: z.boolean().nullable().describe('The stamp of the child last started: what a running server enforces, whatever the setting says now'),
    }),
    takesEffect: z
      .enum(['now', 'on-restart', 'on-start'])
      .describe('now: the running agent server enforces the setting; on-restart: a running server was started with the other one; on-start: none runs'),
  })
  .meta({ id: 'SandboxSwitches' });
export type SandboxSwitchState = z.infer<typeof SandboxSwitchState>;

export const SandboxSwitchChange = z.object({ enabled: z.boolean(), gitCredentials: z.boolean() }).partial().strict().meta({ id: 'SandboxSwitchChange' });
export type SandboxSwitchChange = z.infer<typeof SandboxSwitchChange>;

const LIVE: ReadonlySet<AgentServerState> = new Set(['starting', 'running', 'backoff']);

export async function readSandboxSwitches(pool: pg.Pool, userId = DEFAULT_USER_ID): Promise<SandboxSwitchState> {
  const [{ preferences }, server] = await Promise.all([readSettings(pool, userId), readAgentServerState(pool)]);
  const enabled = preferences.sandbox.enabled;
  const identity = preferences.gitIdentity;
  const live = LIVE.has(server.status);
  return {
    enabled,
    gitCredentials: preferences.sandbox.gitCredentials,
    gitIdentity: {
      ...(typeof identity.name === 'string' ? { name: identity.name } : {}),
      ...(typeof identity.email === 'string' ? { email: identity.email } : {}),
    },
    agentServer: { status: server.status, enforced: server.sandboxEnforced },
    // A server started before the stamp was recorded (null) is treated as not enforcing: restarting is safe.
    takesEffect: !live ? ('on-start' as const) : (server.sandboxEnforced ?? false) === enabled ? ('now' as const) : ('on-restart' as const),
  };
}

/**
 * Changes the switches. Turning enforcement on checks the host first and refuses (nothing written) when the
 * microVM cannot run here; the returned check carries the notes to show. Turning it off needs no check.
 */
export async function changeSandboxSwitches(
  pool: pg.Pool,
  settings: SandboxSettings,
  change: SandboxSwitchChange,
  options: { userId?: string; host?: HostCheckOptions } = {},
): Promise<{ state: SandboxSwitchState; host?: SandboxHostCheck }> {
  const userId = options.userId ?? DEFAULT_USER_ID;
  let host: SandboxHostCheck | undefined;
  if (change.enabled === true) {
    host = await checkSandboxHost(settings, options.host);
    if (!host.supported) {
      throw new UserError(`Sandbox enforcement stays off: this host cannot run the microVM (${host.problems.join('; ')}).`, { code: 'sandbox_host_unsupported', hint: INSTALL_HINT });
    }
  }
  const patch = { ...(change.enabled === undefined ? {} : { enabled: change.enabled }), ...(change.gitCredentials === undefined ? {} : { gitCredentials: change.gitCredentials }) };
  if (Object.keys(patch).length > 0) await setSandboxPreferences(pool, userId, patch);
  return { state: await readSandboxSwitches(pool, userId), ...(host ? { host } : {}) };
}

/** What the switches mean right now, in sentences, for the CLI and the dashboard alike. */
export function describeSandboxSwitches(state: SandboxSwitchState): string[] {
  const who = state.gitIdentity.name || state.gitIdentity.email ? `${state.gitIdentity.name ?? '?'} <${state.gitIdentity.email ?? '?'}>` : 'not set';
  const lines = [
    `Sandbox enforcement is ${state.enabled ? 'on' : 'off'} in the settings.`,
    `Git credential forwarding: ${state.gitCredentials ? 'on' : 'off'} (applies to the next command); git identity: ${who}.`,
  ];
  const runs = state.agentServer.enforced === true ? 'runs every agent bash command in the microVM' : 'runs agent bash commands on the host';
  if (state.takesEffect === 'now') lines.push(`The running agent server ${runs}.`);
  else if (state.takesEffect === 'on-restart') {
    lines.push(`The running agent server was started ${state.agentServer.enforced === true ? 'with' : 'without'} it and still ${runs}: restart it to apply the setting (\`docdex agent restart\`).`);
  } else lines.push(`The agent server is ${state.agentServer.status}; the setting applies when it starts (\`docdex agent start\`).`);
  return lines;
}
