import type pg from 'pg';
import type { Job, PgBoss } from 'pg-boss';
import { PAGE_QUEUE } from '../queue.js';
import type { Enqueue, PageJobData } from '../queue.js';
import { crawlFull, fairShare, pageFetchSkips, runningCaps } from './caps.js';
import type { Caps } from './caps.js';
import type { PageRunner } from './page-runner.js';

interface PageBatchOptions {
  pool: pg.Pool;
  workerId: string;
  boss: PgBoss;
  enqueue: Enqueue;
  /** This process's page slots. */
  concurrency: number;
  runner: PageRunner;
  /** Aborted when the worker stops: no more pages start, and jobs fetched meanwhile go back. */
  stopping: AbortSignal;
  onError(error: Error): void;
}

/**
 * Takes page jobs from the queue into free slots, skipping crawl jobs whose cap is already used by live claims of
 * other workers plus this process's own pages. The cap is counted from live claims, not from pg-boss's active
 * jobs, because the active jobs of a killed worker stay "active" until pg-boss expires them and would block the
 * crawl that long.
 * Jobs are fetched several at a time: a few more than there are free slots, kept ready and started as slots free
 * up, so that a fetch round trip (planning pg-boss's query costs as much as running it) serves several pages
 * instead of one. No fetch is made while every running crawl is at its cap. The few jobs held this way are active
 * in pg-boss but unclaimed; a worker that stops gives them back, one that dies leaves them to the controller's
 * re-queueing of stuck pages.
 */
export class PageBatch {
  private readonly ready: Array<Job<PageJobData>> = [];
  private readonly prefetch: number;
  private capsCache: { at: number; caps: Caps } | null = null;

  constructor(private readonly options: PageBatchOptions) {
    this.prefetch = Math.ceil(options.concurrency / 2);
  }

  /** Starts up to `free` page jobs; returns how many it started. */
  async fill(free: number): Promise<number> {
    const { runner, boss, stopping } = this.options;
    const caps = await this.caps();
    const share = fairShare(caps, runner.perCrawl, this.options.concurrency);
    const full = (id: string) => crawlFull(caps, runner.perCrawl, id, share);
    let taken = 0;
    while (taken < free && !stopping.aborted) {
      const next = this.ready.findIndex((job) => !full(job.data.crawlJobId));
      if (next >= 0) {
        runner.start(this.ready.splice(next, 1)[0]!);
        taken++;
        continue;
      }
      const ignoreGroups = pageFetchSkips(caps, runner.perCrawl, share);
      if (ignoreGroups === null) break;
      const batchSize = Math.max(1, free - taken + this.prefetch - this.ready.length);
      const jobs = await boss.fetch<PageJobData>(PAGE_QUEUE, { batchSize, ...(ignoreGroups.length > 0 ? { ignoreGroups } : {}) });
      if (jobs.length === 0) break;
      if (stopping.aborted) {
        await this.release(jobs);
        break;
      }
      this.ready.push(...jobs);
    }
    return taken;
  }

  /** Gives every job fetched but not started back to the queue (the worker is stopping). */
  releaseReady(): Promise<void> {
    return this.release(this.ready.splice(0));
  }

  /** Refreshed at most every 100 ms: the claim is the exact gate, this only avoids parking pages. */
  private async caps(): Promise<Caps> {
    if (!this.capsCache || Date.now() - this.capsCache.at > 100) {
      this.capsCache = { at: Date.now(), caps: await runningCaps(this.options.pool, this.options.workerId) };
    }
    return this.capsCache.caps;
  }

  /** Queue jobs taken but never started go back to the queue (as a page whose claim is released does). */
  private async release(jobs: Array<Job<PageJobData>>): Promise<void> {
    if (jobs.length === 0) return;
    const { pool, boss, enqueue, onError } = this.options;
    const byCrawl = new Map<string, Array<{ url: string; depth: number }>>();
    for (const job of jobs) {
      const list = byCrawl.get(job.data.crawlJobId) ?? [];
      // Depth only sets the queue priority here (the frontier row keeps the page's real depth).
      list.push({ url: job.data.url, depth: 1 });
      byCrawl.set(job.data.crawlJobId, list);
    }
    try {
      for (const [crawlJobId, pages] of byCrawl) await enqueue(pool, crawlJobId, pages);
      await boss.complete(
        PAGE_QUEUE,
        jobs.map((j) => j.id),
      );
    } catch (error) {
      onError(error as Error);
    }
  }
}
