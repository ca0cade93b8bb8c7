import type pg from 'pg';

/** One running crawl as the page batching sees it: its cap, the pages other live workers fetch for it, whether any waits. */
interface CrawlCap {
  cap: number;
  others: number;
  /** Some page of the crawl is pending: it wants a slot. */
  waiting: boolean;
}

export type Caps = ReadonlyMap<string, CrawlCap>;

/** Running crawl jobs with their cap, the pages other live workers are fetching for them, and whether any page waits. */
export async function runningCaps(pool: pg.Pool, workerId: string): Promise<Map<string, CrawlCap>> {
  const { rows } = await pool.query<{ id: string; cap: number; others: number; waiting: boolean }>(
    `SELECT j.id, j.max_concurrent AS cap,
            count(DISTINCT f.claim_token) FILTER (WHERE f.worker_id <> $1 AND crawl_worker_alive(f.worker_id))::int AS others,
            EXISTS (SELECT 1 FROM crawl_frontier p WHERE p.job_id = j.id AND p.status = 'pending') AS waiting
       FROM crawl_jobs j LEFT JOIN crawl_frontier f ON f.job_id = j.id AND f.status = 'fetching'
      WHERE j.status = 'running'
      GROUP BY j.id`,
    [workerId],
  );
  return new Map(rows.map((r) => [r.id, { cap: r.cap, others: r.others, waiting: r.waiting }]));
}

/**
 * This process's slots one crawl may use while others want some too: an equal share among the crawls that have
 * pages waiting or in flight here, rounded up. Without it, the first crawl with a high cap took every slot and
 * a second crawl waited for it to finish. A crawl alone gets every slot its own cap allows.
 */
export function fairShare(caps: Caps, localActive: ReadonlyMap<string, number>, slots: number): number {
  let contending = 0;
  for (const [id, c] of caps) if (c.waiting || (localActive.get(id) ?? 0) > 0) contending++;
  return Math.ceil(slots / Math.max(1, contending));
}

export function crawlFull(caps: Caps, localActive: ReadonlyMap<string, number>, crawlJobId: string, share = Infinity): boolean {
  const c = caps.get(crawlJobId);
  const local = localActive.get(crawlJobId) ?? 0;
  return c !== undefined && (c.others + local >= c.cap || local >= share);
}

/**
 * The crawls a page-queue fetch skips because their caps are used (live claims of other workers plus this
 * process's pages) or they have their fair share of this process's slots, or null when every running crawl is
 * full and the fetch is not worth making: it could only return pages of crawls that no longer run, and pg-boss
 * reads past every queued page of the full ones to find that out. That was the usual case (20 slots, 3 pages a
 * crawl): database time after every page, growing with the queue. A crawl started since the caps
 * were read waits for their next read: at the first wake-up (a page ending, pages queued, the idle poll) once
 * they are 100 ms old.
 */
export function pageFetchSkips(caps: Caps, localActive: ReadonlyMap<string, number>, share = Infinity): string[] | null {
  const skips = [...caps.keys()].filter((id) => crawlFull(caps, localActive, id, share));
  return skips.length > 0 && skips.length === caps.size ? null : skips;
}
