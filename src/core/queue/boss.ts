import type pg from 'pg';
import { PgBoss } from 'pg-boss';
import type { ConnectionInfo } from '../db/connect.js';
import { BOSS_SCHEMA } from '../db/connect.js';

/**
 * pg-boss on the same PostgreSQL as the index: every `docdex worker`, `docdex serve` and `crawl start --wait`
 * process shares these queues, which is how crawls scale out across machines.
 */
export interface BossOptions {
  /** Run maintenance and the cron clock: only long-lived processes (serve, worker) should. */
  supervise?: boolean;
  max?: number;
  instanceName?: string;
}

export function createBoss(info: ConnectionInfo, options: BossOptions = {}): PgBoss {
  const boss = new PgBoss({
    ...(info.config as Record<string, unknown>),
    schema: BOSS_SCHEMA,
    max: options.max ?? 4,
    application_name: options.instanceName ?? 'docdex-queue',
    supervise: options.supervise ?? false,
    schedule: options.supervise ?? false,
    migrate: true,
    ...(options.instanceName === undefined ? {} : { instanceName: options.instanceName }),
  });
  return boss;
}

/** Installs or upgrades pg-boss's own schema, then disconnects. */
export async function installBossSchema(info: ConnectionInfo): Promise<void> {
  const boss = createBoss(info, { max: 1 });
  boss.on('error', () => undefined);
  await boss.start();
  await boss.stop({ graceful: false, close: true });
}

/** pg-boss runs its insert on our client, so page jobs commit (or roll back) with the frontier rows. */
export function bossDb(client: pg.ClientBase | pg.Pool) {
  return {
    executeSql: async (text: string, values?: unknown[]) => {
      const result = await client.query(text, values as unknown[]);
      return { rows: result.rows as unknown[] };
    },
  };
}

const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Which of `ids` are jobs of `queue` some worker is running now. An id that is not a job id is not. */
export async function activeJobIds(boss: PgBoss, queue: string, ids: readonly string[]): Promise<Set<string>> {
  const active = new Set<string>();
  for (const id of new Set(ids)) {
    if (!JOB_ID.test(id)) continue;
    const [job] = await boss.findJobs(queue, { id });
    if (job?.state === 'active') active.add(id);
  }
  return active;
}
