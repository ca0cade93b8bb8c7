import type pg from 'pg';
import { loadGitCredentials } from '../agent-server/git-credentials.js';
import { DEFAULT_USER_ID, readStoredPreferences } from '../agent/settings.js';
import { resolveForwardedEnv } from './credentials.js';
import type { CredentialPreferences } from './credentials.js';
import { inspectPlanPaths, planShell, shellEnvFor } from './planner.js';
import type { ShellPlan } from './planner.js';
import { readSandboxRepoSettings, repoIdForWorkdir } from './repo-settings.js';
import { sandboxUp } from './service.js';
import type { SandboxSettings } from './settings.js';
import { UNAVAILABLE_PREFIX, unavailableMessage } from './unavailable.js';

/**
 * What `POST /api/internal/sandbox/shell` decides for one shell spawn of an enforced agent server: the
 * planner's pure decision (planner.ts) fed with live facts: resolved paths, the git credentials of the
 * repo the command runs in (resolved per command, so a settings change applies to the next command), and a
 * VM that is up and attested. Only an enforced child calls this route, so enforcement is taken as given: the
 * stamp lives in that child's environment, not in the setting.
 */

export interface ShellPlanRequest {
  cwd: string;
  callId?: string | undefined;
  sessionId?: string | undefined;
}

export interface ShellPlanResponse {
  action: ShellPlan['action'];
  /** Exactly the variables the plugin injects for the shim (MGR_SANDBOX_*). */
  env: Record<string, string>;
  workdir?: string;
  message?: string;
  /** Hosts whose credentials were forwarded, in order (no secrets). */
  forwardedHosts?: string[];
}

export interface ShellPlannerDeps {
  pool: pg.Pool;
  settings: SandboxSettings;
  userId?: string;
  /** Boots or attests the VM; default `sandboxUp`. Throws when the sandbox cannot be prepared. */
  ensureVm?: (settings: SandboxSettings) => Promise<unknown>;
  warn?: (message: string) => void;
}

function respond(plan: ShellPlan, forwardedHosts?: string[]): ShellPlanResponse {
  const env = shellEnvFor(plan);
  if (plan.action === 'sandbox') return { action: 'sandbox', env, workdir: plan.workdir, ...(forwardedHosts ? { forwardedHosts } : {}) };
  if (plan.action === 'refuse') return { action: 'refuse', env, message: plan.message };
  return { action: 'host', env };
}

function refuse(message: string): ShellPlanResponse {
  return respond({ action: 'refuse', message: message.startsWith(UNAVAILABLE_PREFIX) ? message : unavailableMessage(message) });
}

async function credentialPreferences(pool: pg.Pool, userId: string, repoId: number | undefined): Promise<CredentialPreferences> {
  const [stored, set] = await Promise.all([readStoredPreferences(pool, userId), loadGitCredentials(pool, userId)]);
  const sandbox = stored.sandbox as { gitCredentials?: unknown } | undefined;
  const identity = stored.gitIdentity as { name?: unknown; email?: unknown } | undefined;
  return {
    sandbox: { gitCredentials: sandbox?.gitCredentials === true },
    // A credential bound to another repo is never sent: it would hand that repo's access to this one.
    gitCredentials: set.gitCredentials.filter((c) => c.repoId === undefined || c.repoId === repoId),
    ...(set.defaultGitCredentialId === undefined ? {} : { defaultGitCredentialId: set.defaultGitCredentialId }),
    gitIdentity: {
      ...(typeof identity?.name === 'string' ? { name: identity.name } : {}),
      ...(typeof identity?.email === 'string' ? { email: identity.email } : {}),
    },
  };
}

export async function planSessionShell(deps: ShellPlannerDeps, request: ShellPlanRequest): Promise<ShellPlanResponse> {
  const { settings } = deps;
  const base = { enforced: true, callId: request.callId, cwd: request.cwd };
  if (request.callId === undefined || request.callId === '') return respond(planShell({ ...base, realCwd: undefined, roots: [] }));
  const facts = await inspectPlanPaths(request.cwd, settings.roots);
  const pinned = planShell({ ...base, realCwd: facts.realCwd, roots: facts.roots });
  if (pinned.action !== 'sandbox') return respond(pinned);

  const repoId = await repoIdForWorkdir(deps.pool, settings.roots, pinned.workdir);
  const userId = deps.userId ?? DEFAULT_USER_ID;
  const [preferences, repoSettings] = await Promise.all([credentialPreferences(deps.pool, userId, repoId), repoId === undefined ? undefined : readSandboxRepoSettings(deps.pool, repoId)]);
  const repoCredentialId = repoId === undefined ? undefined : preferences.gitCredentials?.find((c) => (c as { repoId?: number }).repoId === repoId)?.id;
  const forwarded = resolveForwardedEnv({
    preferences,
    ...(repoSettings ? { repoSettings } : {}),
    ...(repoCredentialId === undefined ? {} : { repoCredentialId }),
  });
  for (const warning of forwarded.warnings) deps.warn?.(warning);

  try {
    await (deps.ensureVm ?? sandboxUp)(settings);
  } catch (error) {
    return refuse(error instanceof Error ? error.message : String(error));
  }
  return respond({ ...pinned, env: forwarded.env }, forwarded.enabled ? forwarded.hosts : undefined);
}
