import type pg from 'pg';
import { deleteQueuedJobsInGroups } from './jobs-table.js';

/** The crawler's page queue: one pg-boss queue for every crawl (see crawl/queue.ts for its jobs). */
export const PAGE_QUEUE = 'docdex-crawl-page';

/**
 * Deletes the queued page jobs of crawls that will not run them (cancelled, or their source deleted); returns how
 * many. Left in the queue, they counted in `crawl health`'s queue depth until some worker took each one only to
 * drop it. A resume queues the crawl's pending pages again. Pages a crawl still had in flight may queue a few
 * links as they commit; those are dropped when taken, as before. A database where pg-boss never ran has none.
 */
export async function dropQueuedPages(db: pg.ClientBase | pg.Pool, crawlJobIds: string[]): Promise<number> {
  return deleteQueuedJobsInGroups(db, PAGE_QUEUE, crawlJobIds);
}
