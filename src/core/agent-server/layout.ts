import { isIP } from 'node:net';
import path from 'node:path';
import type { Config } from '../config.js';
import { SECRET_VARIABLES } from '../config.js';
import { UserError } from '../errors.js';
import type { Workspace } from '../agent/workspace.js';

/**
 * Where the agent server's files go, and the environment it runs with. HOME and the XDG folders point into
 * the workspace, outside the two folders mounted into the sandbox (repos/ and schedule-worktrees/), so its
 * configuration, provider credentials, database and logs stay with the workspace and out of agent reach.
 */
export interface AgentServerLayout {
  home: string;
  configHome: string;
  /** opencode's data: provider credentials (auth.json), sessions database, logs. */
  dataHome: string;
  stateHome: string;
  cacheHome: string;
  /** The global configuration folder opencode reads (`$XDG_CONFIG_HOME/opencode`). */
  globalConfigDir: string;
  /** `$HOME/.opencode`, which opencode also loads (and installs plugin dependencies into) when it exists. */
  homeConfigDir: string;
  pluginDir: string;
  /** stdout and stderr of the agent server, written by the supervisor. */
  logFile: string;
  /**
   * The manager token for this start (mode 0600, outside the sandbox roots). The first docdex plugin to load
   * reads and deletes it, so the token is never in the child's environment (`/proc/<pid>/environ`).
   */
  tokenFile: string;
}

export function agentServerLayout(ws: Workspace): AgentServerLayout {
  const configHome = path.dirname(ws.agentConfigDir);
  return {
    home: ws.root,
    configHome,
    dataHome: ws.stateDir,
    stateHome: path.join(ws.root, '.local', 'state'),
    cacheHome: path.join(ws.root, '.cache'),
    globalConfigDir: ws.agentConfigDir,
    homeConfigDir: path.dirname(ws.stateDir),
    pluginDir: ws.pluginDir,
    logFile: path.join(ws.stateDir, 'docdex', 'agent-server.log'),
    tokenFile: path.join(ws.stateDir, 'docdex', 'internal-token'),
  };
}

/** True for names and addresses that only this host can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || h === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(h);
  return false;
}

/**
 * The agent server must not be reachable from the network without a password: opencode's API runs shell
 * commands. Applies in both sandbox modes, since the server always runs on the host.
 */
export function assertSafeBinding(config: Pick<Config, 'agent'>): void {
  if (isLoopbackHost(config.agent.host)) return;
  if (config.agent.serverPassword !== undefined && config.agent.serverPassword !== '') return;
  throw new UserError(`Refusing to start the agent server on ${config.agent.host}: a non-loopback host needs a server password.`, {
    code: 'agent_server_unprotected',
    exitCode: 2,
    hint: 'Set OPENCODE_SERVER_PASSWORD, or bind AGENT_HOST to 127.0.0.1.',
  });
}

/** URL for reaching the agent server from this host (a wildcard bind is reached over loopback). */
export function agentServerUrl(config: Pick<Config, 'agent'>): string {
  let host = config.agent.host;
  if (host === '0.0.0.0' || host === '') host = '127.0.0.1';
  if (host === '::' || host === '[::]') host = '::1';
  if (host.includes(':') && !host.startsWith('[')) host = `[${host}]`;
  return `http://${host}:${config.agent.port}`;
}

/** The base of docdex's internal API as the agent server reaches it (this daemon, over loopback for a wildcard bind). */
export function internalApiUrl(config: Pick<Config, 'api'>, override?: { host?: string; port?: number }): string {
  let host = override?.host ?? config.api.host;
  if (host === '0.0.0.0' || host === '') host = '127.0.0.1';
  if (host === '::' || host === '[::]') host = '::1';
  if (host.includes(':') && !host.startsWith('[')) host = `[${host}]`;
  return `http://${host}:${override?.port ?? config.api.port}/api/internal`;
}

/** Extra switches for hosts without internet (and for tests): nothing in opencode reaches out on its own. */
export const OFFLINE_ENV: Readonly<Record<string, string>> = Object.freeze({
  OPENCODE_DISABLE_MODELS_FETCH: 'true',
  OPENCODE_DISABLE_SHARE: 'true',
  OPENCODE_DISABLE_DEFAULT_PLUGINS: 'true',
  OPENCODE_DISABLE_LSP_DOWNLOAD: 'true',
  OPENCODE_DISABLE_CLAUDE_CODE: 'true',
  OPENCODE_DISABLE_EXTERNAL_SKILLS: 'true',
  // npm's offline mode fails a missing package at once instead of asking the registry.
  npm_config_offline: 'true',
});

// Never handed to the agent server: docdex's own secrets and database access. Agent commands inherit its
// environment.
const DROPPED_PREFIXES = ['DB_', 'PG', 'MCP_AUTH_', 'CODE_LLM_', 'VAPID_', 'MGR_', 'DOCDEX_'];
const DROPPED = new Set([...SECRET_VARIABLES, 'DATABASE_URL', 'API_AUTH', 'OPENCODE_SERVER_PASSWORD', 'OPENCODE_SERVER_USERNAME']);

export interface AgentServerEnvInput {
  layout: AgentServerLayout;
  internalApiUrl: string;
  password?: string;
  offline?: boolean;
  extra?: Record<string, string>;
}

export function agentServerEnv(base: NodeJS.ProcessEnv, input: AgentServerEnvInput): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(base)) {
    if (value === undefined || DROPPED.has(key) || DROPPED_PREFIXES.some((p) => key.startsWith(p))) continue;
    env[key] = value;
  }
  Object.assign(env, {
    HOME: input.layout.home,
    XDG_CONFIG_HOME: input.layout.configHome,
    XDG_DATA_HOME: input.layout.dataHome,
    XDG_STATE_HOME: input.layout.stateHome,
    XDG_CACHE_HOME: input.layout.cacheHome,
    // docdex pins opencode-ai; a self-update would replace the binary behind its back.
    OPENCODE_DISABLE_AUTOUPDATE: 'true',
    // The path, not the token: the environment of a process stays readable in /proc for its whole life.
    MGR_INTERNAL_TOKEN_FILE: input.layout.tokenFile,
    MGR_INTERNAL_API_URL: input.internalApiUrl,
  });
  // Without internet the plugin dependency install otherwise retries for over a minute.
  env.npm_config_fetch_retries ??= '0';
  if (input.password !== undefined && input.password !== '') env.OPENCODE_SERVER_PASSWORD = input.password;
  if (input.offline) Object.assign(env, OFFLINE_ENV);
  Object.assign(env, input.extra);
  return env;
}
