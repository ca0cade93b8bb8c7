import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseJsonc } from 'jsonc-parser';
import type { ParseError } from 'jsonc-parser';
import type pg from 'pg';
import { pluginConfigPath } from '../agent-server/plugin-files.js';
import { recordSandboxStamp } from '../agent-server/state.js';
import type { AgentServerExtension } from '../agent-server/service.js';
import type { AgentServerEndpoint } from '../agent-server/supervisor.js';
import { readAgentConfig } from '../agent/agent-config.js';
import { DEFAULT_USER_ID, readSettings } from '../agent/settings.js';
import type { Workspace } from '../agent/workspace.js';
import type { Config } from '../config.js';
import { UserError } from '../errors.js';
import { ENFORCED_VAR, MGR_SANDBOX_PLUGIN, PLUGIN_REPORT_NAME, newSandboxNonce, writeMgrSandboxPlugin } from './plugin.js';
import type { SandboxPluginReport } from './plugin.js';
import { sandboxDown } from './service.js';
import { sandboxSettings } from './settings.js';
import type { SandboxSettings } from './settings.js';
import { SHIM_CONFIG_NAME, SHIM_NAME, writeShim } from './shim.js';
import { unavailableMessage } from './unavailable.js';

/**
 * The enforcement state machine (spec: States and transitions, the sandbox rows):
 *
 *   disabled --(toggle on, then agent server (re)start)--> enforced: the child gets MGR_SANDBOX_ENFORCED=true,
 *     the shim and mgr-sandbox.js are written next to the plugins; a shim or plugin that cannot be written
 *     refuses the start (UserError, which the supervisor treats as final).
 *   enforced --(setting changed, no restart)--> enforced: nothing here re-reads the setting; the child's
 *     environment is the stamp, and the plugin reads it once.
 *   enforced --(restart into disabled, agent server stopped for good, manager shutdown)--> VM stopped.
 *
 * The agent server supervisor calls `prepareForStart` before every spawn, `verifyStart` once the enforced
 * child answers, and `onAgentServerStopped` after it stopped for good; `createSandboxExtension` adapts them to
 * its extension hook.
 *
 * Failing closed when mgr-sandbox.js does not do its job (issue #12) takes three layers, each enough on its
 * own for the bash tool and `!command`:
 *   1. OPENCODE_CONFIG_CONTENT pins `shell` to the shim in the child's environment. opencode merges it after
 *      the global and project configuration files, so the shell is the shim even when the plugin never
 *      loads. ($SHELL is not used: opencode only falls back to it when no `shell` is configured, and every
 *      host process the server starts (MCP and language servers, hooks) would inherit a shim that refuses.)
 *   2. The shim hands a spawn to the host shell only when it carries this start's nonce (planner.ts,
 *      PLANNED_VAR / HOOKED_VAR), which only the plugin's shell.env hook puts there.
 *   3. `verifyStart`: the child loads an instance for the workspace, and the plugin must report itself loaded
 *      with this start's nonce, the effective shell must be the shim, and the shell.env hook must fire; if
 *      not, the supervisor stops the child and reports why.
 */

export interface SandboxEnforcementContext {
  config: Config;
  pool: pg.Pool;
  workspace: Workspace;
  /** Where the generated plugins go (the shim goes next to them). */
  pluginDir: string;
}

export interface EnforcementStamp {
  enforced: boolean;
  /** Set when enforced. */
  shimPath?: string;
  pluginPath?: string;
  /** The shell the shim hands non-sandboxed spawns to (the user's configured shell, else $SHELL, else /bin/sh). */
  hostShell?: string;
  /** This start's fail-closed nonce, rendered into the shim and the plugin. */
  nonce?: string;
  /** Where the plugin reports itself loaded. */
  reportPath?: string;
  stampedAt: number;
}

export interface PreparedStart {
  /** Added to the agent server child's environment. */
  env: Record<string, string>;
  /** Files written for this start (shim and plugin), empty when not enforced. */
  plugins: string[];
  stamp: EnforcementStamp;
}

export interface SandboxEnforcementOptions {
  /** The command the shim runs `sandbox exec` with; default: this node and dist/core/sandbox/exec-main.js. */
  runner?: readonly string[];
  userId?: string;
  /** Stops the VM; default `sandboxDown` (which never starts a runner just to stop it). */
  stopVm?: (settings: SandboxSettings) => Promise<unknown>;
  log?: { warn(obj: object, msg: string): void };
  /** The environment the agent server inherits (for an OPENCODE_CONFIG_CONTENT of the user's); default process.env. */
  baseEnv?: NodeJS.ProcessEnv;
  /** How long `verifyStart` may take; default 30 s. */
  startCheckTimeoutMs?: number;
}

/** The command the start check runs in a pseudo-terminal to see the shell.env hook fire; it does nothing. */
export const START_CHECK_PTY_COMMAND = '/bin/true';

/**
 * OPENCODE_CONFIG_CONTENT with `shell` pinned to the shim, keeping whatever else the user put there. opencode
 * merges it after its configuration files, so it overrides a `shell` from any of them.
 */
export function pinShellInConfigContent(existing: string | undefined, shimPath: string): string {
  let base: Record<string, unknown> = {};
  if (existing !== undefined && existing.trim() !== '') {
    const errors: ParseError[] = [];
    const parsed: unknown = parseJsonc(existing, errors, { allowTrailingComma: true });
    if (errors.length > 0 || parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new UserError('Sandbox enforcement is on but OPENCODE_CONFIG_CONTENT is not a JSON object, so the agent server shell cannot be pinned to the sandbox shim.', {
        code: 'sandbox_config_content_invalid',
        hint: 'Fix or unset OPENCODE_CONFIG_CONTENT in the environment of `docdex serve`.',
      });
    }
    base = parsed as Record<string, unknown>;
  }
  return JSON.stringify({ ...base, shell: shimPath });
}

const EXEC_MAIN_CANDIDATES = [
  // Running from dist/: the sibling module.
  fileURLToPath(new URL('./exec-main.js', import.meta.url)),
  // Running from src/ (tests, tsx): the build output.
  fileURLToPath(new URL('../../../dist/core/sandbox/exec-main.js', import.meta.url)),
];

/** The lean exec entry the shim calls; undefined when docdex is not built. */
export function findExecMain(): string | undefined {
  return EXEC_MAIN_CANDIDATES.find((file) => existsSync(file));
}

/**
 * The shim's runner command. The agent server's environment has its own HOME and no DOCDEX_* variables, so
 * the sandbox configuration of this start is pinned on the command line through env(1): the runner and VM
 * the shim reaches are the ones the planner attests, for the child's whole lifetime.
 */
export function shimRunnerCommand(settings: SandboxSettings, execMain: string, nodePath = process.execPath): string[] {
  const unset: string[] = [];
  const set = [
    `DOCDEX_HOME=${path.dirname(settings.cacheDir)}`,
    `WORKSPACE_PATH=${settings.workspacePath}`,
    `SANDBOX_ACCEL=${settings.accel}`,
    `SANDBOX_START_TIMEOUT_MS=${settings.startTimeoutMs}`,
    `SANDBOX_MEMORY_MB=${settings.memoryMib}`,
    `SANDBOX_CPUS=${settings.cpus}`,
  ];
  if (settings.image === undefined) unset.push('-u', 'SANDBOX_IMAGE');
  else set.push(`SANDBOX_IMAGE=${settings.image}`);
  if (settings.execUser === undefined) unset.push('-u', 'SANDBOX_EXEC_USER');
  else set.push(`SANDBOX_EXEC_USER=${settings.execUser}`);
  // A registry image is pulled by the runner under the same outbound allow-list as the manager's.
  if (settings.allowHosts === undefined || settings.allowHosts.length === 0) unset.push('-u', 'CRAWL_ALLOW_HOSTS');
  else set.push(`CRAWL_ALLOW_HOSTS=${settings.allowHosts.join(',')}`);
  return ['/usr/bin/env', ...unset, ...set, nodePath, execMain];
}

async function isExecutableFile(file: string): Promise<boolean> {
  const info = await stat(file).catch(() => undefined);
  return info !== undefined && info.isFile() && (info.mode & 0o111) !== 0;
}

/** The user's shell for the surfaces that stay on the host: their configured `shell`, else $SHELL, else /bin/sh. */
export async function rememberedHostShell(workspace: Workspace, shimPath: string, envShell = process.env.SHELL): Promise<string> {
  const configured = await readAgentConfig(workspace).then(
    (record) => (typeof record.content.shell === 'string' ? record.content.shell : undefined),
    () => undefined,
  );
  for (const candidate of [configured, envShell]) {
    if (candidate === undefined || !path.isAbsolute(candidate) || path.resolve(candidate) === shimPath) continue;
    if (await isExecutableFile(candidate)) return candidate;
  }
  return '/bin/sh';
}

export class SandboxEnforcement {
  private last: EnforcementStamp | undefined;
  private lastSettings: SandboxSettings | undefined;

  constructor(private readonly options: SandboxEnforcementOptions = {}) {}

  /** The stamp of the current (or last) child, undefined before the first start. */
  current(): EnforcementStamp | undefined {
    return this.last ? { ...this.last } : undefined;
  }

  async prepareForStart(ctx: SandboxEnforcementContext): Promise<PreparedStart> {
    const settings = sandboxSettings(ctx.config);
    const { preferences } = await readSettings(ctx.pool, this.options.userId ?? DEFAULT_USER_ID);
    const shimPath = path.join(ctx.pluginDir, SHIM_NAME);
    const pluginPath = path.join(ctx.pluginDir, MGR_SANDBOX_PLUGIN);
    const reportPath = path.join(ctx.pluginDir, PLUGIN_REPORT_NAME);

    if (preferences.sandbox.enabled !== true) {
      // A stale plugin would be inert without the stamp; removing it keeps the folder honest.
      for (const file of [pluginPath, pluginConfigPath(ctx.pluginDir, MGR_SANDBOX_PLUGIN), shimPath, path.join(ctx.pluginDir, SHIM_CONFIG_NAME), reportPath]) await rm(file, { force: true });
      // Restart into disabled stops the VM. A runner that does not answer is not started just for this, so
      // this is cheap when none runs (also after a daemon that died while enforced).
      await this.stop(settings);
      this.last = { enforced: false, stampedAt: Date.now() };
      this.lastSettings = settings;
      await recordSandboxStamp(ctx.pool, false);
      return { env: { [ENFORCED_VAR]: 'false' }, plugins: [], stamp: this.current()! };
    }

    const runner = this.options.runner ?? defaultRunner(settings);
    const hostShell = await rememberedHostShell(ctx.workspace, shimPath);
    const configContent = pinShellInConfigContent((this.options.baseEnv ?? process.env).OPENCODE_CONFIG_CONTENT, shimPath);
    // One per start: a marker or report left from an earlier child never matches this one.
    const nonce = newSandboxNonce();
    // Throws a UserError when it cannot be written: the start is refused, never run unenforced.
    await writeShim(ctx.pluginDir, { runner, hostShell, nonce });
    try {
      await mkdir(ctx.pluginDir, { recursive: true, mode: 0o700 });
      await rm(reportPath, { force: true });
      await writeMgrSandboxPlugin(ctx.pluginDir, { shimPath, plannerTimeoutMs: settings.startTimeoutMs + 30_000, nonce, reportPath });
    } catch (error) {
      throw new UserError(`Cannot write the sandbox plugin ${pluginPath}: ${(error as Error).message}`, {
        code: 'sandbox_plugin_unwritable',
        hint: 'The agent server is not started with sandbox enforcement while its plugin cannot be written; check the permissions of the plugin directory.',
        cause: error,
      });
    }
    this.last = { enforced: true, shimPath, pluginPath, hostShell, nonce, reportPath, stampedAt: Date.now() };
    this.lastSettings = settings;
    await recordSandboxStamp(ctx.pool, true);
    return { env: { [ENFORCED_VAR]: 'true', OPENCODE_CONFIG_CONTENT: configContent }, plugins: [shimPath, pluginPath], stamp: this.current()! };
  }

  /**
   * The start check of an enforced child (layer 3 above), run once it answers: it loads the agent server
   * instance of `directory` (the plugin loads per instance), and requires the effective shell to be the shim
   * and the plugin to have reported itself loaded with this start's nonce. A pseudo-terminal running
   * START_CHECK_PTY_COMMAND then shows whether opencode calls the shell.env hook. A UserError (the supervisor
   * stops the child for good) when the evidence says the plugin is not doing its job; a plain Error when the
   * server could not be asked.
   */
  async verifyStart(server: AgentServerEndpoint, directory: string): Promise<void> {
    const stamp = this.last;
    if (!stamp?.enforced) return;
    const timeoutMs = this.options.startCheckTimeoutMs ?? 30_000;
    const deadline = Date.now() + timeoutMs;
    const query = `?directory=${encodeURIComponent(directory)}`;
    const call = async (method: string, route: string, body?: unknown): Promise<{ status: number; body: unknown }> => {
      const response = await fetch(`${server.url}${route}${query}`, {
        method,
        headers: { ...server.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(Math.max(1000, deadline - Date.now())),
      });
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = text;
      }
      return { status: response.status, body: parsed };
    };
    const failed = (reason: string) =>
      new UserError(unavailableMessage(`${reason}; the agent server was stopped so that no agent command runs on the host`), {
        code: 'sandbox_plugin_not_loaded',
        hint: `Look for opencode's error about ${stamp.pluginPath} in the agent server log, then restart the agent server (or turn sandbox enforcement off).`,
      });

    // opencode loads a directory's configuration, plugins' config hooks included, when first asked for it; under
    // load an early answer can precede the hooks. So ask until the shim is the shell or the time is up.
    for (;;) {
      const config = await call('GET', '/config');
      if (config.status !== 200) throw new Error(`the sandbox start check could not read the agent server configuration (HTTP ${config.status})`);
      const shell = (config.body as { shell?: unknown } | undefined)?.shell;
      if (shell === stamp.shimPath) break;
      if (Date.now() >= deadline) throw failed(`the agent server shell is ${JSON.stringify(shell ?? null)}, not the sandbox shim ${stamp.shimPath}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    // A pseudo-terminal stays on the host (spec), and creating one is the only request that fires the shell.env
    // hook without touching a session. Without one (no terminal support) the check cannot see the hook; the
    // shim then refuses slash-command templates until the hook first fires, which is the closed side.
    let hookProbed = false;
    const pty = await call('POST', '/pty', { command: START_CHECK_PTY_COMMAND, args: [], cwd: directory, title: 'docdex sandbox start check' }).catch(() => undefined);
    const ptyId = (pty?.body as { id?: unknown } | undefined)?.id;
    if (pty?.status === 200 && typeof ptyId === 'string') {
      hookProbed = true;
      await call('DELETE', `/pty/${encodeURIComponent(ptyId)}`).catch(() => undefined);
    } else {
      this.options.log?.warn({ status: pty?.status }, 'the sandbox start check could not open a pseudo-terminal; the shell.env hook is not checked');
    }

    let report: SandboxPluginReport | undefined;
    for (;;) {
      report = await readFile(stamp.reportPath!, 'utf8').then(
        (text) => JSON.parse(text) as SandboxPluginReport,
        () => undefined,
      );
      const current = report?.nonce === stamp.nonce;
      if (current && report!.shell === stamp.shimPath && (report!.shellEnv || !hookProbed)) return;
      if (Date.now() >= deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (!report || report.nonce !== stamp.nonce) throw failed(`the mgr-sandbox plugin (${stamp.pluginPath}) did not report itself loaded within ${timeoutMs} ms`);
    if (report.shell !== stamp.shimPath) throw failed(`the mgr-sandbox plugin's config hook did not pin the shell to ${stamp.shimPath}`);
    throw failed(`opencode did not call the mgr-sandbox plugin's shell.env hook for a pseudo-terminal within ${timeoutMs} ms`);
  }

  /** The agent server stopped for good (`docdex agent stop`, manager shutdown): an enforced VM goes with it. */
  async onAgentServerStopped(): Promise<void> {
    if (this.last?.enforced && this.lastSettings) await this.stop(this.lastSettings);
  }

  private async stop(settings: SandboxSettings): Promise<void> {
    try {
      await (this.options.stopVm ?? sandboxDown)(settings);
    } catch (error) {
      this.options.log?.warn({ err: error }, 'stopping the sandbox VM failed');
    }
  }
}

function defaultRunner(settings: SandboxSettings): string[] {
  const execMain = findExecMain();
  if (execMain === undefined) {
    throw new UserError('Sandbox enforcement is on but docdex is not built: dist/core/sandbox/exec-main.js, which the shell shim runs, is missing.', {
      code: 'sandbox_not_built',
      hint: 'Run `npm run build`, or turn sandbox enforcement off.',
    });
  }
  return shimRunnerCommand(settings, execMain);
}

/** The agent server extension (src/core/agent-server/service.ts): pass it in `extensions`. */
export function createSandboxExtension(options: SandboxEnforcementOptions = {}): AgentServerExtension & { enforcement: SandboxEnforcement } {
  const enforcement = new SandboxEnforcement(options);
  return {
    name: 'sandbox',
    enforcement,
    async prepare(ctx) {
      const { env, stamp } = await enforcement.prepareForStart({ config: ctx.config, pool: ctx.pool, workspace: ctx.workspace, pluginDir: ctx.layout.pluginDir });
      if (!stamp.enforced) return { env };
      // The assistant's workspace is the server's own directory, so its instance is the one loaded anyway.
      return { env, verify: (server) => enforcement.verifyStart(server, ctx.workspace.assistantDir) };
    },
    stopped: () => enforcement.onAgentServerStopped(),
  };
}
