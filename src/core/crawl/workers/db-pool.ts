import pg from 'pg';
import { WRITER_SETTINGS } from '../../db/connect.js';
import type { ConnectionInfo } from '../../db/connect.js';
import { SCHEMA } from '../../db/migrate.js';

/**
 * The worker's own connections, sized for its concurrency, so crawling never starves the pool of the process
 * it runs in (the daemon's API). They commit asynchronously: a page transaction holds rows every page of its
 * source shares (the source's counters, the search lexicon) until it commits, and waiting for the WAL flush
 * there would be paid once per page, in series. A database crash can lose the last fraction of a second of
 * commits, each whole (page, frontier row, links and claims together), so a resume simply redoes those pages;
 * a worker crash loses nothing.
 */
export function createWorkerPool(info: ConnectionInfo, max: number, min: number): pg.Pool {
  const pool = new pg.Pool({
    ...info.config,
    max,
    min,
    application_name: 'docdex-crawl',
    options: `-c search_path=${SCHEMA},public -c synchronous_commit=off ${WRITER_SETTINGS}`,
    // Statements that do not wait for one another's answers go out together (storePage's BEGIN).
    pipeline: true,
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 10_000,
  });
  pool.on('error', () => undefined);
  return pool;
}

/** Opens `n` connections at once and gives them back to the pool, which keeps them (its `min`). */
export async function warmPool(pool: pg.Pool, n: number): Promise<void> {
  const clients = await Promise.all(Array.from({ length: n }, () => pool.connect()));
  for (const client of clients) client.release();
}
