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
