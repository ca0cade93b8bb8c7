import type { Config } from './config.js';
import { BOSS_SCHEMA, openDatabase } from './db/connect.js';
import { currentMigrationVersion, dropSchema, migrate } from './db/migrate.js';
import { announceSchemaUpdate } from './db/schema-update.js';

/*
 * `docdex init` spans two layers: the docdex schema (db) and pg-boss's schema (queue, which sits on db). It
 * lives above both so that db never imports the queue.
 */

export interface InitResult {
  mode: 'embedded' | 'external';
  database: string;
  dropped: boolean;
  applied: string[];
  version: number;
}

/** Creates or upgrades the schema (idempotent); with `drop`, first deletes every docdex table and queue. */
export async function initDatabase(config: Config, options: { drop: boolean }): Promise<InitResult> {
  const db = await openDatabase(config, { migrate: false, max: 2 });
  try {
    if (options.drop) await dropSchema(db.pool, BOSS_SCHEMA);
    else announceSchemaUpdate(await currentMigrationVersion(db.pool));
    const result = await migrate(db.pool);
    // Loaded here, not at the top: pg-boss and its scheduling dependencies are slow to import, and nothing
    // else that imports this module should pay for them.
    const { installBossSchema } = await import('./queue/boss.js');
    await installBossSchema(db.info);
    return { mode: db.info.mode, database: db.info.display, dropped: options.drop, applied: result.applied, version: result.version };
  } finally {
    await db.close();
  }
}
