import { existsSync } from 'node:fs';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import type { AgentServerExtension } from '../agent-server/service.js';
import { readAgentConfig } from '../agent/agent-config.js';
import { DEFAULT_USER_ID, readSettings } from '../agent/settings.js';
import type { Workspace } from '../agent/workspace.js';
import type { Config } from '../config.js';
import { UserError } from '../errors.js';
import { ENFORCED_VAR, MGR_SANDBOX_PLUGIN, renderMgrSandboxPlugin } from './plugin.js';
import { sandboxDown } from './service.js';
import { sandboxSettings } from './settings.js';
import type { SandboxSettings } from './settings.js';
import { SHIM_NAME, writeShim } from './shim.js';

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
 * The agent server supervisor calls `prepareForStart` before every spawn and `onAgentServerStopped` after
 * it stopped for good; `createSandboxExtension` adapts both to its extension hook.
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
  shimTemplate?: string;
  log?: { warn(obj: object, msg: string): void };
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

async function writeAtomic(file: string, content: string): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    await writeFile(tmp, content, { mode: 0o600 });
    await rename(tmp, file);
  } catch (error) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw error;
  }
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

    if (preferences.sandbox.enabled !== true) {
      // A stale plugin would be inert without the stamp; removing it keeps the folder honest.
      await rm(pluginPath, { force: true });
      await rm(shimPath, { force: true });
      // Restart into disabled stops the VM. A runner that does not answer is not started just for this, so
      // this is cheap when none runs (also after a daemon that died while enforced).
      await this.stop(settings);
      this.last = { enforced: false, stampedAt: Date.now() };
      this.lastSettings = settings;
      return { env: { [ENFORCED_VAR]: 'false' }, plugins: [], stamp: this.current()! };
    }

    const runner = this.options.runner ?? defaultRunner(settings);
    const hostShell = await rememberedHostShell(ctx.workspace, shimPath);
    // Throws a UserError when it cannot be written: the start is refused, never run unenforced.
    await writeShim(ctx.pluginDir, { runner, hostShell, ...(this.options.shimTemplate === undefined ? {} : { template: this.options.shimTemplate }) });
    try {
      await mkdir(ctx.pluginDir, { recursive: true, mode: 0o700 });
      await writeAtomic(pluginPath, renderMgrSandboxPlugin({ shimPath, plannerTimeoutMs: settings.startTimeoutMs + 30_000 }));
    } catch (error) {
      throw new UserError(`Cannot write the sandbox plugin ${pluginPath}: ${(error as Error).message}`, {
        code: 'sandbox_plugin_unwritable',
        hint: 'The agent server is not started with sandbox enforcement while its plugin cannot be written; check the permissions of the plugin directory.',
        cause: error,
      });
    }
    this.last = { enforced: true, shimPath, pluginPath, hostShell, stampedAt: Date.now() };
    this.lastSettings = settings;
    return { env: { [ENFORCED_VAR]: 'true' }, plugins: [shimPath, pluginPath], stamp: this.current()! };
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
      const { env } = await enforcement.prepareForStart({ config: ctx.config, pool: ctx.pool, workspace: ctx.workspace, pluginDir: ctx.layout.pluginDir });
      return { env };
    },
    stopped: () => enforcement.onAgentServerStopped(),
  };
}
