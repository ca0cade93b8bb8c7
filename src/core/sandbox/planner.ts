import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';
import { outsideRootsMessage, unavailableMessage } from './unavailable.js';

/**
 * The sandbox planner: decides, for one shell spawn of the agent server, whether it runs in the microVM (and
 * in which guest directory), passes through to the host shell, or is refused. The decision functions are
 * pure; `inspectPlanPaths` gathers the filesystem facts they need.
 *
 * The shell environment hook only sees cwd, sessionID and callID (spec, Mechanism 7). A call id marks a
 * session shell (bash tool or `!command`); without one the spawn is a pseudo-terminal or another surface
 * that the spec keeps on the host.
 */

export interface RootFacts {
  /** The root as configured, which is also its path inside the guest. */
  path: string;
  /** realpath of the root; undefined when it does not exist. */
  real: string | undefined;
  isSymlink: boolean;
}

export interface PlanInput {
  /** The enforcement stamp the agent server child was started with (MGR_SANDBOX_ENFORCED). */
  enforced: boolean;
  callId?: string | undefined;
  cwd: string;
  /** realpath of cwd; undefined when it does not exist. Symlinks are resolved so a link out of a root stays out. */
  realCwd: string | undefined;
  roots: readonly RootFacts[];
  /** Set when capability detection or preparation already failed: every session shell is refused. */
  unavailableReason?: string | undefined;
  /** Allow-listed variables to pass with `-e` (see credentials.ts), resolved for this command. */
  env?: Readonly<Record<string, string>>;
}

export type ShellPlan = { action: 'host'; reason: 'not-enforced' | 'no-call-id' } | { action: 'sandbox'; workdir: string; env: Record<string, string> } | { action: 'refuse'; message: string };

export type WorkdirPin = { ok: true; workdir: string } | { ok: false; message: string };

/**
 * Maps a host directory to its guest directory. Roots are shared at identical paths, so the guest path is
 * the root as configured plus the path below it; the check runs on resolved paths, so a repository
 * symlinked into the roots from elsewhere is outside.
 */
export function pinWorkdir(cwd: string, realCwd: string | undefined, roots: readonly RootFacts[]): WorkdirPin {
  for (const root of roots) {
    if (root.isSymlink) return { ok: false, message: unavailableMessage(`the sandbox root ${root.path} is a symlink; roots must be real directories`) };
    if (root.real === undefined) return { ok: false, message: unavailableMessage(`the sandbox root ${root.path} does not exist`) };
  }
  if (realCwd === undefined) return { ok: false, message: unavailableMessage(`the working directory ${cwd} does not exist`) };
  for (const root of roots) {
    const rel = path.relative(root.real!, realCwd);
    // "..foo" is a name inside the root; only ".." itself or "../..." leaves it.
    if (rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel))) {
      return { ok: true, workdir: rel === '' ? root.path : path.join(root.path, rel) };
    }
  }
  return {
    ok: false,
    message: outsideRootsMessage(
      cwd,
      roots.map((r) => r.path),
      realCwd,
    ),
  };
}

export function planShell(input: PlanInput): ShellPlan {
  if (!input.enforced) return { action: 'host', reason: 'not-enforced' };
  if (input.callId === undefined || input.callId === '') return { action: 'host', reason: 'no-call-id' };
  if (input.unavailableReason !== undefined) return { action: 'refuse', message: unavailableMessage(input.unavailableReason) };
  const pin = pinWorkdir(input.cwd, input.realCwd, input.roots);
  if (!pin.ok) return { action: 'refuse', message: pin.message };
  return { action: 'sandbox', workdir: pin.workdir, env: { ...(input.env ?? {}) } };
}

/** Environment the `mgr-sandbox.js` shell.env hook injects for a plan; the shim reads exactly these. */
export const WORKDIR_VAR = 'MGR_SANDBOX_WORKDIR';
export const REFUSE_VAR = 'MGR_SANDBOX_REFUSE';
export const ENV_PREFIX = 'MGR_SANDBOX_ENV_';
/**
 * Fail-closed markers, both set to the nonce of the agent server start (rendered into the plugin and the shim):
 * the plugin puts PLANNED_VAR on every spawn its shell.env hook sees, and HOOKED_VAR into the agent server's
 * own environment once that hook has fired. The shim hands a spawn to the host shell only with one of them, so
 * a spawn the plugin never saw (plugin not loaded, hook not called) is refused instead of running on the host.
 */
export const PLANNED_VAR = 'MGR_SANDBOX_PLANNED';
export const HOOKED_VAR = 'MGR_SANDBOX_HOOKED';

export function shellEnvFor(plan: ShellPlan): Record<string, string> {
  switch (plan.action) {
    case 'host':
      return {};
    case 'refuse':
      return { [REFUSE_VAR]: plan.message };
    case 'sandbox': {
      const env: Record<string, string> = { [WORKDIR_VAR]: plan.workdir };
      for (const [k, v] of Object.entries(plan.env)) env[`${ENV_PREFIX}${k}`] = v;
      return env;
    }
  }
}

export async function inspectRoot(root: string): Promise<RootFacts> {
  const info = await lstat(root).catch(() => undefined);
  return {
    path: root,
    isSymlink: info?.isSymbolicLink() ?? false,
    real: info ? await realpath(root).catch(() => undefined) : undefined,
  };
}

export async function inspectPlanPaths(cwd: string, roots: readonly string[]): Promise<{ realCwd: string | undefined; roots: RootFacts[] }> {
  const [realCwd, facts] = await Promise.all([realpath(cwd).catch(() => undefined), Promise.all(roots.map(inspectRoot))]);
  return { realCwd, roots: facts };
}
