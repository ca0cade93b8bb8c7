import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { installPlugin } from '../agent-server/plugin-files.js';
import { ENV_PREFIX, HOOKED_VAR, PLANNED_VAR, REFUSE_VAR, WORKDIR_VAR } from './planner.js';
import { UNAVAILABLE_PREFIX } from './unavailable.js';

/**
 * The `mgr-sandbox.js` plugin (spec: Sandboxing, Mechanism 1-7); its code is `src/agent-plugins/mgr-sandbox.js`,
 * its configuration (`mgrSandboxConfig`) is written beside it at every enforced start. It runs inside the agent
 * server and:
 *
 * - `config`: pins the in-memory shell to the shim. No configuration file is touched; the user's own shell
 *   was rendered into the shim as its host shell when the shim was written. (The manager also pins it through
 *   OPENCODE_CONFIG_CONTENT, so a plugin that fails to load does not leave a host shell behind.)
 * - `shell.env`: marks every spawn it sees with MGR_SANDBOX_PLANNED=<nonce of this start>, and the agent
 *   server's own environment with MGR_SANDBOX_HOOKED=<nonce> once; the shim refuses a host spawn carrying
 *   neither. For a spawn with a call id (bash tool, `!command`), it asks the manager's planner
 *   (`POST /api/internal/sandbox/shell`, with the manager token) and injects exactly the variables the
 *   shim reads: MGR_SANDBOX_WORKDIR (+ MGR_SANDBOX_ENV_<name>) or MGR_SANDBOX_REFUSE. Every failure to get
 *   a usable plan becomes a refusal, never a missing variable, because a missing variable means "host".
 * - `tool.execute.after`: marks calls that were planned into the VM with `metadata.sandbox = true`.
 *
 * It also writes a small report next to itself (nonce, pid, the pinned shell, whether shell.env fired), which
 * the manager's start check reads: an agent server whose plugin did not load is stopped (enforcement.ts).
 *
 * The command text is never looked at, let alone rewritten. The whole plugin is inert unless the child was
 * started with MGR_SANDBOX_ENFORCED=true: that stamp, read once at load, is authoritative for the lifetime
 * of the process whatever the setting says later.
 */

export const MGR_SANDBOX_PLUGIN = 'mgr-sandbox.js';
export const ENFORCED_VAR = 'MGR_SANDBOX_ENFORCED';
/** Path of the planner route below the internal API base. */
export const PLANNER_PATH = '/sandbox/shell';
/** Calls remembered between shell.env and tool.execute.after; a call that never completes must not leak. */
export const MAX_TRACKED_CALLS = 10_000;
/** File the plugin reports to, next to the shim (not `*.js`, so opencode does not load it as a plugin). */
export const PLUGIN_REPORT_NAME = 'mgr-sandbox.report.json';

/** What the plugin writes to its report file; the start check compares it with the start's stamp. */
export interface SandboxPluginReport {
  nonce: string;
  pid: number;
  /** The shell after the `config` hook pinned it; null until that hook ran. */
  shell: string | null;
  /** True once opencode called the `shell.env` hook in this process. */
  shellEnv: boolean;
  at: number;
}

export interface SandboxPluginOptions {
  /** Absolute path of the rendered shim. */
  shimPath: string;
  /** How long shell.env waits for the planner; it covers a first boot (SANDBOX_START_TIMEOUT_MS) plus slack. */
  plannerTimeoutMs: number;
  /** The start's nonce, also rendered into the shim; default random (then no host spawn passes the shim). */
  nonce?: string;
  /** Where the report goes; default PLUGIN_REPORT_NAME next to the shim. */
  reportPath?: string;
}

/** A fresh nonce for one agent server start. */
export function newSandboxNonce(): string {
  return randomBytes(16).toString('hex');
}

/** The generated configuration of the installed mgr-sandbox.js (`docdex/mgr-sandbox.json`). */
export function mgrSandboxConfig(options: SandboxPluginOptions): Record<string, string | number> {
  if (!options.shimPath.startsWith('/')) throw new Error(`the shim path must be absolute, got ${options.shimPath}`);
  return {
    SHIM: options.shimPath,
    NONCE: options.nonce ?? newSandboxNonce(),
    REPORT: options.reportPath ?? path.join(path.dirname(options.shimPath), PLUGIN_REPORT_NAME),
    ENFORCED_VAR,
    PLANNED_VAR,
    HOOKED_VAR,
    PLANNER_PATH,
    PLANNER_TIMEOUT_MS: Math.max(1000, Math.round(options.plannerTimeoutMs)),
    UNAVAILABLE_PREFIX,
    WORKDIR_VAR,
    REFUSE_VAR,
    ENV_PREFIX,
    MAX_TRACKED_CALLS,
  };
}

/** Installs mgr-sandbox.js and its configuration into the plugin folder; returns the plugin file's path. */
export function writeMgrSandboxPlugin(pluginDir: string, options: SandboxPluginOptions): Promise<string> {
  return installPlugin(pluginDir, MGR_SANDBOX_PLUGIN, mgrSandboxConfig(options));
}
