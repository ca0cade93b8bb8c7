import type pg from 'pg';
import type { JobInsert, PgBoss } from 'pg-boss';
import { bossDb } from '../queue/boss.js';
import { PAGE_QUEUE } from '../queue/pages.js';
import { PAGES_QUEUED, WAKE_CHANNEL } from './wake.js';

/**
 * Pages as pg-boss jobs. One queue for every crawl: a job's data names the crawl job and the page's key.
 * - Policy `short` with a per-page singleton key: at most one queued job per page, so re-enqueueing
 *   (resume, sweeps) never piles up duplicates. A duplicate that slips through (one queued, one active)
 *   is harmless: the frontier claim lets only one of them work.
 * - The crawl job is the pg-boss group, so a worker can skip crawls whose concurrency cap is in use
 *   (`ignoreGroups`); the exact gate is the frontier claim (`crawl_claim_page`).
 * - Priority 3 - depth: shallow pages first, so pages tend to be found at their shortest depth.
 */

// The queue's name and its one raw delete live in queue/pages.ts, below crawl and sources (deleting a source
// drops its crawls' queued pages), and need no pg-boss: jobs.ts (cancel) imports them from there. The name is
// re-exported here for the crawler's workers, which put pages on the queue and load pg-boss anyway.
export { PAGE_QUEUE } from '../queue/pages.js';

export interface PageJobData {
  crawlJobId: string;
  url: string;
}

export async function ensurePageQueue(boss: PgBoss): Promise<void> {
  const existing = await boss.getQueue(PAGE_QUEUE);
  if (existing) return;
  try {
    await boss.createQueue(PAGE_QUEUE, {
      policy: 'short',
      // Our handler settles every outcome itself; a retry only covers a crash inside pg-boss's own calls.
      retryLimit: 2,
      retryDelay: 1,
      // A page takes at most a few minutes (timeouts, retries, politeness); a job held longer belonged to
      // a dead worker, and the controller's sweep has already re-queued its page.
      expireInSeconds: 900,
      // Completed page jobs are bookkeeping only; keeping them a day is plenty for `crawl health`.
      deleteAfterSeconds: 86_400,
    });
  } catch (error) {
    // Two workers starting at once both try to create it.
    if (!(await boss.getQueue(PAGE_QUEUE))) throw error;
  }
}

export function pageJob(crawlJobId: string, url: string, depth: number): JobInsert<PageJobData> {
  return {
    data: { crawlJobId, url },
    singletonKey: `${crawlJobId} ${url}`,
    priority: Math.max(0, 3 - depth),
    group: { id: crawlJobId },
  };
}

export type Enqueue = (client: pg.ClientBase | pg.Pool, crawlJobId: string, rows: Array<{ url: string; depth: number }>) => Promise<void>;

export function createEnqueue(boss: PgBoss): Enqueue {
  return async (client, crawlJobId, rows) => {
    if (rows.length === 0) return;
    for (let i = 0; i < rows.length; i += 1000) {
      const chunk = rows.slice(i, i + 1000).map((r) => pageJob(crawlJobId, r.url, r.depth));
      await boss.insert(PAGE_QUEUE, chunk, { db: bossDb(client) });
    }
    // An idle worker polls the queue at most once a second; the first pages of a new crawl waited that long
    // (a large share of a short crawl). Inside a transaction the notice goes out when the pages commit.
    await client.query('SELECT pg_notify($1, $2)', [WAKE_CHANNEL, PAGES_QUEUED]);
  };
}
