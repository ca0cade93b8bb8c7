import type { PgBoss } from 'pg-boss';
import type pg from 'pg';
import { opencodeClient } from '../../core/agent-server/client.js';
import type { OpencodePart } from '../../core/agent-server/client.js';
import { listGitCredentials } from '../../core/agent-server/git-credentials.js';
import { listAgentSessions } from '../../core/agent-server/sessions.js';
import { listReposOrdered } from '../../core/agent/repos.js';
import type { Repo, RepoContext } from '../../core/agent/repos.js';
import { listAllSchedules, listRuns } from '../../core/agent/schedules.js';
import { DEFAULT_USER_ID, setGitIdentity } from '../../core/agent/settings.js';
import { listSkills } from '../../core/agent/skills.js';
import { readManagerToken } from '../../core/agent/token.js';
import { workspaceLayout } from '../../core/agent/workspace.js';
import type { Config } from '../../core/config.js';
import type { ConnectionInfo } from '../../core/db/connect.js';
import { UserError } from '../../core/errors.js';
import { createBoss } from '../../core/queue/boss.js';
import { sandboxSettings } from '../../core/sandbox/settings.js';
import { changeSandboxSwitches, describeSandboxSwitches, readSandboxSwitches } from '../../core/sandbox/switch.js';
import type { HostCheckOptions } from '../../core/sandbox/switch.js';
import type { AgentRepoRow, DashboardData, ToolCallRow } from './types.js';

type AgentPort = Pick<DashboardData, 'agentRepos' | 'agentSessions' | 'agentToolCalls' | 'agentSchedules' | 'agentSkills' | 'agentSettings' | 'setSandbox' | 'setGitIdentity'>;

export interface AgentDataOptions {
  /** What the sandbox host check looks at (tests point it at a host that cannot run the microVM). */
  sandboxHost?: HostCheckOptions;
}

function repoRow(repo: Repo): AgentRepoRow {
  return {
    id: repo.id,
    name: repo.localPath,
    source: repo.isWorktree ? null : (repo.repoUrl ?? repo.sourcePath ?? null),
    status: repo.cloneStatus,
    error: repo.cloneError ?? null,
    branch: repo.branch ?? repo.defaultBranch ?? null,
    local: repo.isLocal === true && repo.isWorktree !== true,
    worktrees: [],
  };
}

/** Repositories in the user's order, each with the worktrees made from it. */
export function groupWorktrees(repos: Repo[]): AgentRepoRow[] {
  const rows = new Map<number, AgentRepoRow>();
  for (const repo of repos) if (!repo.isWorktree) rows.set(repo.id, repoRow(repo));
  const orphans: AgentRepoRow[] = [];
  for (const repo of repos) {
    if (!repo.isWorktree) continue;
    const parent = repo.sourceRepoId === undefined ? undefined : rows.get(repo.sourceRepoId);
    if (parent) parent.worktrees.push(repoRow(repo));
    else orphans.push(repoRow(repo));
  }
  return [...rows.values(), ...orphans];
}

function callSummary(part: OpencodePart): string {
  const input = part.state?.input as Record<string, unknown> | undefined;
  if (typeof input?.command === 'string') return input.command;
  if (part.state?.title) return part.state.title;
  return input === undefined ? '' : JSON.stringify(input);
}

/** The tool calls of a session's messages, in order, with the sandbox marker read from the call's metadata. */
export function toolCalls(parts: OpencodePart[]): ToolCallRow[] {
  return parts
    .filter((p) => p.type === 'tool')
    .map((p) => {
      return {
        id: p.callID ?? String(p.id ?? ''),
        tool: p.tool ?? '?',
        summary: callSummary(p),
        status: p.state?.status ?? 'unknown',
        sandbox: p.state?.metadata?.sandbox === true,
      };
    });
}

/** All but the last 4 characters hidden: enough to tell two tokens apart, never enough to use one. */
export function maskToken(token: string): string {
  return `${'•'.repeat(12)}${token.slice(-4)}`;
}

/**
 * The agent half of the dashboard's port: repositories, sessions (from the running opencode server, like
 * `docdex agent sessions`), schedules, skills and the settings a user may turn, each through the core
 * function the CLI and the REST API call.
 */
export function createAgentData(db: { pool: pg.Pool; info: ConnectionInfo }, config: Config, options: AgentDataOptions = {}): AgentPort {
  const { pool } = db;
  const ctx: RepoContext = { pool, workspace: workspaceLayout(config) };
  // Schedules ask pg-boss for their next run time, a pure computation: this instance is never started.
  let boss: PgBoss | undefined;
  const scheduleContext = () => ({ ...ctx, boss: (boss ??= createBoss(db.info, { max: 1, instanceName: 'docdex-dashboard' })) });
  const summary = async () => describeSandboxSwitches(await readSandboxSwitches(pool));

  return {
    agentRepos: async () => groupWorktrees(await listReposOrdered(ctx)),
    async agentSessions({ limit }) {
      try {
        return { running: true, sessions: await listAgentSessions(config, { limit }) };
      } catch (error) {
        if (error instanceof UserError && error.code === 'agent_server_down') return { running: false, message: error.message, hint: error.hint ?? null };
        throw error;
      }
    },
    async agentToolCalls(session) {
      const messages = await opencodeClient(config).messages(session.id, session.directory ?? undefined);
      return toolCalls(messages.flatMap((m) => m.parts));
    },
    async agentSchedules({ runs }) {
      const sctx = scheduleContext();
      const [schedules, list] = await Promise.all([listAllSchedules(sctx), listRuns(sctx, { limit: runs })]);
      return { schedules, runs: list.runs };
    },
    agentSkills: () => listSkills(ctx),
    async agentSettings() {
      const [switches, credentials, token] = await Promise.all([readSandboxSwitches(pool), listGitCredentials(pool), readManagerToken(pool)]);
      return {
        switches,
        summary: describeSandboxSwitches(switches),
        credentials: credentials.map((c) => ({ id: c.id, host: c.host, username: c.username, repoName: c.repoName, isDefault: c.isDefault })),
        maskedToken: token === undefined ? null : maskToken(token),
      };
    },
    async setSandbox(change) {
      const { state, host } = await changeSandboxSwitches(pool, sandboxSettings(config), change, options.sandboxHost ? { host: options.sandboxHost } : {});
      return { lines: [...describeSandboxSwitches(state), ...(host?.notes ?? []).map((note) => `Note: ${note}`)] };
    },
    async setGitIdentity(identity) {
      await setGitIdentity(pool, DEFAULT_USER_ID, identity);
      return { lines: await summary() };
    },
  };
}
