import type pg from 'pg';
import { BOSS_SCHEMA } from '../db/connect.js';

/**
 * The few reads and writes of pg-boss's job table that its API has no call for. Everything else goes through
 * the PgBoss instance (`boss.ts`). Each function says why the API does not fit; all of them take a plain
 * pool or client, because their callers (`crawl cancel`, `crawl health`, `sources delete`, `GET /health`) run
 * without a started pg-boss, and starting one (migrations, a pool of its own) for one statement would be slow.
 */

type Db = pg.ClientBase | pg.Pool;

/** Whether pg-boss has ever run on this database: before its first start there is no job table to read. */
export async function bossJobTableExists(db: Db): Promise<boolean> {
  const { rows } = await db.query<{ ok: boolean }>(`SELECT to_regclass('${BOSS_SCHEMA}.job') IS NOT NULL AS ok`);
  return rows[0]?.ok === true;
}

/**
 * Deletes the queued (created or retry) jobs of `queue` in the given groups; returns how many. pg-boss's
 * `deleteJob` takes job ids and `findJobs` cannot filter by group, so the API would list every queued job
 * of a crawl (there can be tens of thousands) only to delete them by id. This is one statement, in the
 * caller's transaction when `db` is its client.
 */
export async function deleteQueuedJobsInGroups(db: Db, queue: string, groupIds: string[]): Promise<number> {
  if (groupIds.length === 0 || !(await bossJobTableExists(db))) return 0;
  const deleted = await db.query(`DELETE FROM ${BOSS_SCHEMA}.job WHERE name = $1 AND group_id = ANY($2::text[]) AND state IN ('created', 'retry')`, [queue, groupIds]);
  return deleted.rowCount ?? 0;
}

/**
 * Deletes the queued (created or retry) jobs of `queue` whose data field `field` is `value` (the file jobs of
 * one upload); returns how many. Those jobs carry no group, and `deleteJob` takes ids that only a scan of the
 * queue would find.
 */
export async function deleteQueuedJobsWithData(db: Db, queue: string, field: string, value: string): Promise<number> {
  if (!(await bossJobTableExists(db))) return 0;
  const deleted = await db.query(`DELETE FROM ${BOSS_SCHEMA}.job WHERE name = $1 AND data->>$2 = $3 AND state IN ('created', 'retry')`, [queue, field, value]);
  return deleted.rowCount ?? 0;
}

/**
 * The values of one data field of the live (created, retry or active) jobs of `queue` in the given groups, e.g.
 * the pages an LLM job is queued or running for. `findJobs` filters by data but not by group or state, so it
 * would read every finished job of the queue too. Empty when pg-boss never ran here.
 */
export async function liveJobDataValues(db: Db, queue: string, groupIds: string[], field: string): Promise<Set<string>> {
  if (groupIds.length === 0 || !(await bossJobTableExists(db))) return new Set();
  const { rows } = await db.query<{ value: string }>(
    `SELECT DISTINCT data->>$3 AS value FROM ${BOSS_SCHEMA}.job
      WHERE name = $1 AND group_id = ANY($2::text[]) AND state IN ('created', 'retry', 'active') AND data ? $3`,
    [queue, groupIds, field],
  );
  return new Set(rows.map((r) => r.value));
}

export interface JobStateCounts {
  queued: number;
  active: number;
  retry: number;
  failed: number;
}

/**
 * The jobs of one queue by state, counted now. pg-boss's `getQueueStats` serves counts cached by its monitor
 * (up to a minute old even when forced), writes them back on a miss, and has no retry count: `crawl health`
 * shows the queue as it is, read-only. Zero everywhere when pg-boss never ran here.
 */
export async function countJobsByState(db: Db, queue: string): Promise<JobStateCounts> {
  const counts: JobStateCounts = { queued: 0, active: 0, retry: 0, failed: 0 };
  if (!(await bossJobTableExists(db))) return counts;
  const { rows } = await db.query<{ state: string; n: number }>(`SELECT state::text, count(*)::int AS n FROM ${BOSS_SCHEMA}.job WHERE name = $1 GROUP BY state`, [queue]);
  for (const r of rows) {
    if (r.state === 'created') counts.queued += r.n;
    else if (r.state === 'active') counts.active += r.n;
    else if (r.state === 'retry') counts.retry += r.n;
    else if (r.state === 'failed') counts.failed += r.n;
  }
  return counts;
}

/**
 * Waiting (created or retry) and active jobs across every queue, counted now, for the daemon's health check.
 * `getQueueStats` is per queue and cached (see `countJobsByState`). Throws when the job table is missing,
 * which the health check reports as unavailable.
 */
export async function countAllJobs(db: Db): Promise<{ depth: number; active: number }> {
  const { rows } = await db.query<{ depth: number; active: number }>(
    `SELECT count(*) FILTER (WHERE state IN ('created', 'retry'))::int AS depth, count(*) FILTER (WHERE state = 'active')::int AS active FROM ${BOSS_SCHEMA}.job`,
  );
  return { depth: rows[0]?.depth ?? 0, active: rows[0]?.active ?? 0 };
}
