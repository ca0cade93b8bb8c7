import { AgentServerError } from '../agent/agent-server-client.js';
import { workspaceLayout } from '../agent/workspace.js';
import type { Config } from '../config.js';
import { UserError } from '../errors.js';
import { resolveOpencodeBinary } from './binary.js';
import { opencodeClient } from './client.js';
import { agentServerLayout, agentServerUrl } from './layout.js';

/** Sessions of the managed agent server, and opencode's own terminal UI attached to it. */

export interface AgentSession {
  id: string;
  title: string;
  directory: string | null;
  parentId: string | null;
  createdAt: number | null;
  updatedAt: number | null;
}

function notRunning(config: Pick<Config, 'agent'>, error: unknown): UserError {
  return new UserError(`The agent server at ${agentServerUrl(config)} is not answering: ${(error as Error).message}`, {
    code: 'agent_server_down',
    hint: 'Start it with `docdex agent start` (with `docdex serve` running) and check `docdex agent status`.',
  });
}

export async function listAgentSessions(config: Pick<Config, 'agent'>, options: { limit?: number; search?: string } = {}): Promise<AgentSession[]> {
  let sessions;
  try {
    sessions = await opencodeClient(config).listSessions(options);
  } catch (error) {
    if (error instanceof AgentServerError && error.status === undefined) throw notRunning(config, error);
    throw error;
  }
  return sessions
    .map((s) => ({
      id: s.id,
      title: s.title ?? '',
      directory: s.directory ?? null,
      parentId: s.parentID ?? null,
      createdAt: s.time?.created ?? null,
      updatedAt: s.time?.updated ?? s.time?.created ?? null,
    }))
    .sort((a, b) => (b.updatedAt ?? 0) - (a.updatedAt ?? 0));
}

export interface AttachPlan {
  command: string;
  args: string[];
  env: Record<string, string>;
  url: string;
}

/**
 * How to run `opencode attach` against the managed server. The terminal UI keeps its own state, so it
 * gets the same HOME and XDG folders as the server (its files stay in the workspace), but none of the
 * server's secrets: no manager token.
 */
export async function attachPlan(config: Pick<Config, 'agent'>, options: { session?: string; directory?: string } = {}): Promise<AttachPlan> {
  const url = agentServerUrl(config);
  try {
    await opencodeClient(config).health();
  } catch (error) {
    throw notRunning(config, error);
  }
  const layout = agentServerLayout(workspaceLayout(config));
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith('MGR_')) env[key] = value;
  Object.assign(env, {
    HOME: layout.home,
    XDG_CONFIG_HOME: layout.configHome,
    XDG_DATA_HOME: layout.dataHome,
    XDG_STATE_HOME: layout.stateHome,
    XDG_CACHE_HOME: layout.cacheHome,
    OPENCODE_DISABLE_AUTOUPDATE: 'true',
  });
  if (config.agent.serverPassword !== undefined && config.agent.serverPassword !== '') env.OPENCODE_SERVER_PASSWORD = config.agent.serverPassword;
  const args = ['attach', url];
  if (options.session !== undefined) args.push('--session', options.session);
  if (options.directory !== undefined) args.push('--dir', options.directory);
  return { command: resolveOpencodeBinary().path, args, env, url };
}
