import { approveAgentConfigState } from '../agent/agent-config-guard.js';
import { readFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import os from 'node:os';
import type pg from 'pg';
import { agentSettingsPresent } from '../agent/in-use.js';
import { createAgentServices } from '../agent/services.js';
import { ensureManagerToken } from '../agent/token.js';
import { provisionWorkspace, workspaceLayout } from '../agent/workspace.js';
import type { Workspace } from '../agent/workspace.js';
import type { Config } from '../config.js';
import type { Database } from '../db/connect.js';
import { resolveOpencodeBinary } from './binary.js';
import { agentServerEnv, agentServerLayout, agentServerUrl, assertSafeBinding, internalApiUrl } from './layout.js';
import type { AgentServerLayout } from './layout.js';
import { seedPluginDependencies, writeGeneratedPlugins } from './plugins.js';
import { createOpencodeScheduleRunner } from './schedule-runner.js';
import { claimSupervision, readAgentServerState, releaseSupervision, reportStatus, setDesiredState, supervisorIdentity } from './state.js';
import type { PreviousHolder } from './state.js';
import { AgentServerSupervisor } from './supervisor.js';
import type { AgentServerEndpoint, SpawnPlan, SupervisorLog, SupervisorOptions } from './supervisor.js';

/**
 * The daemon side of `docdex agent start|stop|restart`: the daemon is the supervisor. It takes the
 * supervision lease in the database, then makes the opencode child match the desired state there, and
 * reports the child's status back, every few seconds and on every change.
 */

export interface AgentServerExtensionContext {
  config: Config;
  pool: pg.Pool;
  workspace: Workspace;
  layout: AgentServerLayout;
}

/**
 * A hook into every start (the sandbox uses one): write files next to the plugins, add environment
 * variables, and check the server once it answers (`verify`, see SpawnPlan). Throwing a UserError refuses the
 * start.
 */
export interface AgentServerExtension {
  name: string;
  prepare(ctx: AgentServerExtensionContext): Promise<{ env?: Record<string, string>; verify?: (server: AgentServerEndpoint) => Promise<void> } | undefined>;
  /** Called after the server stopped for good (daemon shutdown or `docdex agent stop`). */
  stopped?(): Promise<void>;
}

export interface AgentServerServiceOptions {
  /** Set the desired state to running when the daemon starts (DOCDEX_AGENT_AUTOSTART=true). */
  autostart?: boolean;
  /** Turn off everything in opencode that reaches the internet on its own (DOCDEX_AGENT_OFFLINE=true). */
  offline?: boolean;
  /** The internal API base as the agent server reaches it; default from API_HOST and API_PORT. */
  internalApiUrl?: string;
  /** Added to the agent server's environment last. */
  env?: Record<string, string>;
  extensions?: AgentServerExtension[];
  /** How often the daemon looks at the desired state (a command's change shows within this). */
  pollMs?: number;
  supervisor?: Partial<Pick<SupervisorOptions, 'startTimeoutMs' | 'backoff' | 'stableAfterMs' | 'healthIntervalMs' | 'healthFailures' | 'stopTimeoutMs'>>;
}

/** The manager token for the next child, written whole (temporary name, then rename) and readable by the owner only. */
async function writeTokenFile(file: string, token: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, token, { mode: 0o600 });
  await rename(temporary, file);
}

/** Everything one start needs, in order; a UserError from here is final (bad host, missing binary). */
export async function prepareAgentServer(config: Config, pool: pg.Pool, options: AgentServerServiceOptions = {}): Promise<SpawnPlan> {
  assertSafeBinding(config);
  const binary = resolveOpencodeBinary();
  const workspace = workspaceLayout(config);
  await provisionWorkspace(workspace);
  const layout = agentServerLayout(workspace);
  const { token } = await ensureManagerToken(pool);
  await writeGeneratedPlugins(layout.pluginDir);
  await seedPluginDependencies(layout.globalConfigDir);
  await seedPluginDependencies(layout.homeConfigDir);
  const extra: Record<string, string> = {};
  const checks: Array<(server: AgentServerEndpoint) => Promise<void>> = [];
  for (const extension of options.extensions ?? []) {
    const prepared = await extension.prepare({ config, pool, workspace, layout });
    Object.assign(extra, prepared?.env);
    if (prepared?.verify) checks.push(prepared.verify);
  }
  // This start loads everything present; a reload through mgr may load no more than that (agent-config-guard.ts).
  await approveAgentConfigState(pool, workspace);
  await writeTokenFile(layout.tokenFile, token);
  const env = agentServerEnv(process.env, {
    layout,
    internalApiUrl: options.internalApiUrl ?? internalApiUrl(config),
    ...(config.agent.serverPassword === undefined ? {} : { password: config.agent.serverPassword }),
    offline: options.offline ?? false,
    extra: { ...extra, ...options.env },
  });
  return {
    command: binary.path,
    args: ['serve', '--port', String(config.agent.port), '--hostname', config.agent.host, '--print-logs'],
    cwd: workspace.assistantDir,
    env,
    ...(checks.length === 0
      ? {}
      : {
          async verify(server: AgentServerEndpoint) {
            for (const check of checks) await check(server);
          },
        }),
  };
}

/**
 * A daemon that died (SIGKILL, power loss) cannot stop its opencode, which keeps the port. The next
 * supervisor on the same host ends it, after checking that the pid still is an `opencode serve`.
 */
export function endStaleServer(previous: PreviousHolder, me: string): boolean {
  if (previous.pid === null || previous.supervisor === null || previous.supervisor === me) return false;
  if (previous.supervisor.split(':')[0] !== os.hostname() || process.platform !== 'linux') return false;
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${previous.pid}/cmdline`, 'utf8');
  } catch {
    return false;
  }
  const argv = cmdline.split('\0');
  if (!argv.some((a) => /opencode/.test(a)) || !argv.includes('serve')) return false;
  try {
    process.kill(-previous.pid, 'SIGKILL');
  } catch {
    try {
      process.kill(previous.pid, 'SIGKILL');
    } catch {
      return false;
    }
  }
  return true;
}

export class AgentServerController {
  readonly supervisor: AgentServerSupervisor;
  private readonly me = supervisorIdentity();
  private leader = false;
  private generation: number | undefined;
  /** The request (desired_at) the supervisor last acted on. */
  private acknowledged: number | null = null;
  /** The desired_at of the request that ended in `failed`; only a newer request retries. */
  private failedRequest: number | undefined;
  private busy: Promise<unknown> | undefined;
  private stopping: Promise<unknown> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private reporting: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    config: Config,
    private readonly log: SupervisorLog,
    private readonly options: AgentServerServiceOptions = {},
  ) {
    const layout = agentServerLayout(workspaceLayout(config));
    this.supervisor = new AgentServerSupervisor({
      url: agentServerUrl(config),
      ...(config.agent.serverPassword === undefined ? {} : { password: config.agent.serverPassword }),
      prepare: () => prepareAgentServer(config, pool, options),
      logFile: layout.logFile,
      log,
      onChange: () => this.report(),
      ...options.supervisor,
    });
  }

  get isLeader(): boolean {
    return this.leader;
  }

  start(): void {
    const loop = () => {
      if (this.closed) return;
      this.ticking = this.tick()
        .catch((error: unknown) => this.log.warn({ err: error }, 'agent server supervision check failed'))
        .finally(() => {
          if (!this.closed) this.timer = setTimeout(loop, this.options.pollMs ?? 2000);
        });
    };
    loop();
  }

  /** Writes the status now (chained, so writes never overtake each other). */
  private report(): void {
    if (!this.leader) return;
    const status = this.supervisor.current();
    const acknowledged = this.acknowledged;
    this.reporting = this.reporting.then(() => reportStatus(this.pool, this.me, status, acknowledged)).catch((error: unknown) => this.log.warn({ err: error }, 'agent server status write failed'));
  }

  private act(action: () => Promise<unknown>): void {
    if (this.busy) return;
    this.busy = action()
      .catch((error: unknown) => this.log.error({ err: error }, 'agent server action failed'))
      .finally(() => {
        this.busy = undefined;
      });
  }

  async tick(): Promise<void> {
    if (!this.leader) {
      const previous = await claimSupervision(this.pool, this.me);
      if (!previous) return;
      this.leader = true;
      if (endStaleServer(previous, this.me)) this.log.warn({ pid: previous.pid, supervisor: previous.supervisor }, 'ended an agent server left running by a stopped daemon');
      this.log.info({ supervisor: this.me }, 'supervising the agent server');
    }
    if (!(await reportStatus(this.pool, this.me, this.supervisor.current(), this.acknowledged))) {
      this.leader = false;
      this.log.warn({}, 'another daemon took over the agent server; stopping ours');
      this.act(() => this.supervisor.stop());
      return;
    }
    const wanted = await readAgentServerState(this.pool);
    const now = this.supervisor.current();
    this.generation ??= wanted.restartGeneration;
    // `acknowledged` is set in the same synchronous step that changes the supervisor's state, so a command
    // waiting for its request never reads a status from before it.
    if (wanted.desired === 'stopped') {
      // Not behind `busy`: a stop cuts short a start that is still waiting for the server to answer.
      if (now.state !== 'stopped' && now.state !== 'failed') {
        if (!this.stopping) {
          this.stopping = (async () => {
            await this.supervisor.stop();
            for (const extension of this.options.extensions ?? []) await extension.stopped?.();
          })()
            .catch((error: unknown) => this.log.error({ err: error }, 'agent server stop failed'))
            .finally(() => {
              this.stopping = undefined;
              this.acknowledge(wanted.desiredAt);
            });
        }
        return;
      }
      this.acknowledge(wanted.desiredAt);
      return;
    }
    if (this.stopping || this.busy) return;
    if (wanted.restartGeneration !== this.generation) {
      this.generation = wanted.restartGeneration;
      this.failedRequest = undefined;
      this.act(async () => {
        await this.supervisor.stop();
        this.acknowledged = wanted.desiredAt;
        await this.supervisor.start();
      });
      return;
    }
    if (now.state === 'failed') {
      if (this.failedRequest === undefined) this.failedRequest = this.acknowledged ?? wanted.desiredAt;
      if (wanted.desiredAt <= this.failedRequest) return;
      this.failedRequest = undefined;
    }
    if (now.state === 'stopped' || now.state === 'failed') {
      this.acknowledged = wanted.desiredAt;
      this.act(() => this.supervisor.start());
      return;
    }
    this.acknowledge(wanted.desiredAt);
  }

  private acknowledge(desiredAt: number): void {
    if (this.acknowledged === desiredAt) return;
    this.acknowledged = desiredAt;
    this.report();
  }

  async stop(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.ticking;
    await this.supervisor.stop();
    await this.busy;
    await this.stopping;
    for (const extension of this.options.extensions ?? []) await extension.stopped?.().catch(() => undefined);
    await this.reporting;
    if (this.leader) await releaseSupervision(this.pool, this.me, this.supervisor.current()).catch(() => undefined);
    this.leader = false;
  }
}

export interface AgentServerService {
  name: string;
  controller: AgentServerController;
  stop(): Promise<void>;
}

/** The ServiceStarter for `docdex serve`. */
export function createAgentServerService(options: AgentServerServiceOptions = {}) {
  return async function startAgentServerService(db: Database, config: Config, log: SupervisorLog): Promise<AgentServerService> {
    if (options.autostart) await setDesiredState(db.pool, 'running');
    const controller = new AgentServerController(db.pool, config, log, options);
    controller.start();
    return { name: 'agent-server', controller, stop: () => controller.stop() };
  };
}

const truthy = (value: string | undefined) => value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());

/** Options from DOCDEX_AGENT_AUTOSTART and DOCDEX_AGENT_OFFLINE. */
export function agentServerOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): AgentServerServiceOptions {
  return { autostart: truthy(env.DOCDEX_AGENT_AUTOSTART), offline: truthy(env.DOCDEX_AGENT_OFFLINE) };
}

/**
 * Everything `docdex serve` runs for the agent manager: the workspace, queues and schedules (with runs sent
 * to the managed opencode server) and the agent server's supervisor. `host` and `port` are the daemon's
 * actual bind (the --host/--port flags), which the agent server's plugins call back.
 */
export function agentManagerServices(
  config: Config,
  bind: { host?: string | undefined; port?: number | undefined } = {},
  options: AgentServerServiceOptions = agentServerOptionsFromEnv(),
): Array<(db: Database, config: Config, log: SupervisorLog) => Promise<{ name: string; stop(): Promise<void> }>> {
  return [
    createAgentServices({ runner: createOpencodeScheduleRunner(config) }),
    createAgentServerService({
      ...options,
      internalApiUrl: options.internalApiUrl ?? internalApiUrl(config, { ...(bind.host === undefined ? {} : { host: bind.host }), ...(bind.port === undefined ? {} : { port: bind.port }) }),
    }),
  ];
}

type AgentServiceStarter = ReturnType<typeof agentManagerServices>[number];

/**
 * The agent manager only for those who want it: asked for (`serve --agent`, WORKSPACE_PATH set) or already
 * in use (agentSettingsPresent). Otherwise each starter starts nothing, so no workspace is provisioned. The
 * database is asked once, by the first starter.
 */
export function agentManagerServicesWhenWanted(
  starters: AgentServiceStarter[],
  requested: boolean,
): Array<(db: Database, config: Config, log: SupervisorLog) => Promise<{ name: string; stop(): Promise<void> } | null>> {
  let wanted: Promise<boolean> | undefined;
  return starters.map((start, index) => async (db, config, log) => {
    wanted ??= requested ? Promise.resolve(true) : agentSettingsPresent(db.pool);
    if (await wanted) return start(db, config, log);
    if (index === 0) log.info({}, 'agent manager off: start it with `docdex serve --agent` or WORKSPACE_PATH');
    return null;
  });
}
