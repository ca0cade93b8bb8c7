import type { PgBoss } from 'pg-boss';
import type { Config } from '../config.js';
import type { Database } from '../db/connect.js';
import { createBoss } from '../queue/boss.js';
import { provisionShippedSkills } from './provision.js';
import { AGENT_QUEUES, ensureAgentQueues } from './queue.js';
import { runClone } from './repos.js';
import { executeRun, failInterruptedRuns, handleTrigger, reconcileSchedules, unavailableRunner } from './schedules.js';
import type { ScheduleContext, ScheduleRunner } from './schedules.js';
import { ensureManagerToken } from './token.js';
import { provisionWorkspace, workspaceLayout } from './workspace.js';

/** The logger shape the services need (pino's, and a console-like object in tests). */
export interface ServiceLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface AgentServices {
  name: string;
  boss: PgBoss;
  stop(): Promise<void>;
}

export interface AgentServiceOptions {
  /** Sends a scheduled run's prompt to the agent server; until that exists, runs fail with a clear error. */
  runner?: ScheduleRunner;
  /** Run pg-boss's cron clock and maintenance in this process (default true: `docdex serve`). */
  supervise?: boolean;
}

/**
 * Everything the agent manager runs beside HTTP: provisions the workspace and the shipped skills, makes
 * sure the internal token exists, and works the clone, schedule-trigger and schedule-run queues.
 */
export function createAgentServices(options: AgentServiceOptions = {}) {
  return async function startAgentServices(db: Database, config: Config, log: ServiceLog): Promise<AgentServices> {
    const workspace = workspaceLayout(config);
    await provisionWorkspace(workspace);
    await ensureManagerToken(db.pool);
    const skills = await provisionShippedSkills(db.pool, workspace);
    log.info({ workspace: workspace.root, skills }, 'agent workspace ready');

    const supervise = options.supervise ?? true;
    const boss = createBoss(db.info, { supervise, max: 4, instanceName: 'docdex-agent' });
    boss.on('error', (error) => log.error({ err: error }, 'agent queue error'));
    await boss.start();
    const ctx: ScheduleContext = { pool: db.pool, workspace, boss };
    const runner = options.runner ?? unavailableRunner;
    try {
      await ensureAgentQueues(boss);
      const interrupted = await failInterruptedRuns(ctx);
      if (interrupted > 0) log.warn({ interrupted }, 'failed scheduled runs interrupted by a stop');
      await reconcileSchedules(ctx);
      await boss.work<{ repoId: number }>(AGENT_QUEUES.clone, { pollingIntervalSeconds: 1, localConcurrency: 2 }, async ([job]) => {
        if (!job) return;
        const repo = await runClone(ctx, job.data.repoId);
        if (repo?.cloneStatus === 'error') log.warn({ repoId: repo.id, error: repo.cloneError }, 'clone failed');
      });
      await boss.work<{ scheduleId: number }>(AGENT_QUEUES.scheduleTrigger, { pollingIntervalSeconds: 1 }, async ([job]) => {
        if (job) await handleTrigger(ctx, job.data.scheduleId);
      });
      await boss.work<{ runId: number }>(AGENT_QUEUES.scheduleRun, { pollingIntervalSeconds: 1, localConcurrency: 2 }, async ([job]) => {
        if (!job) return;
        const run = await executeRun(ctx, job.data.runId, runner);
        if (run?.status === 'failed') log.warn({ runId: run.id, error: run.error }, 'scheduled run failed');
      });
    } catch (error) {
      await boss.stop({ graceful: false, close: true }).catch(() => undefined);
      throw error;
    }
    return {
      name: 'agent-manager',
      boss,
      async stop() {
        await boss.stop({ graceful: true, close: true, timeout: 15_000 });
      },
    };
  };
}

/** The daemon's agent services with the defaults (no agent server yet: scheduled runs fail clearly). */
export const startAgentServices = createAgentServices();
