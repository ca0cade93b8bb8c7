import type { Job, PgBoss } from 'pg-boss';
import type { Doorbell } from '../doorbell.js';
import { processPage } from '../page.js';
import type { PageContext } from '../page.js';
import { PAGE_QUEUE } from '../queue.js';
import type { PageJobData } from '../queue.js';
import type { KnownJobs } from './known-jobs.js';
import type { PageCompletions } from './page-completions.js';

interface PageRunnerOptions {
  boss: PgBoss;
  jobs: KnownJobs;
  /** What a page needs to be fetched, extracted and stored. */
  page: PageContext;
  completions: PageCompletions;
  /** Aborted when the worker's stop grace period is over: pages still in flight give up. */
  pagesStop: AbortSignal;
  /** Rung whenever a page ends: its slot is free. */
  pageBell: Doorbell;
  /** Completes the crawl job if no page of it is open any more. */
  finishJob(jobId: string): Promise<void>;
  onError(error: Error): void;
}

/**
 * Runs page jobs in this process's slots: each one through `processPage`, then completed (or failed) in the
 * page queue. It counts this process's pages per crawl job, which the batching reads to respect caps and shares.
 */
export class PageRunner {
  /** Pages of this process per crawl job (fetched from the queue, claimed or not yet). */
  readonly perCrawl = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly options: PageRunnerOptions) {}

  /** Pages in flight. */
  get size(): number {
    return this.running.size;
  }

  start(job: Job<PageJobData>): void {
    const id = job.data.crawlJobId;
    this.perCrawl.set(id, (this.perCrawl.get(id) ?? 0) + 1);
    // run() gives the perCrawl count back itself, before deciding whether the job may be finished.
    const p: Promise<void> = this.run(job).finally(() => {
      this.running.delete(p);
      this.options.pageBell.ring();
    });
    this.running.add(p);
  }

  /** Resolves when every page in flight now has ended. */
  async allEnded(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }

  private async run(job: Job<PageJobData>): Promise<void> {
    const { jobs, completions, boss, onError } = this.options;
    const jobId = job.data.crawlJobId;
    let settled = false;
    try {
      const info = await jobs.info(jobId);
      if (info) {
        const jobSignal = jobs.pagesSignal(jobId);
        const signal = AbortSignal.any([this.options.pagesStop, jobSignal]);
        const result = await processPage(this.options.page, info, job.data, signal, () => jobSignal.aborted);
        settled = result === 'stored' || result === 'unchanged' || result === 'skipped' || result === 'failed';
      }
      completions.add(job.id);
    } catch (error) {
      onError(error as Error);
      settled = true;
      await boss.fail(PAGE_QUEUE, job.id, { message: (error as Error).message }).catch(() => undefined);
    }
    const remaining = this.giveBack(jobId);
    // Whoever settles the last open page of a job completes it; while this process has other pages of the job
    // in flight, one of those will (and the controller's tick is the backstop).
    if (settled && remaining === 0) await this.options.finishJob(jobId).catch((error: unknown) => onError(error as Error));
  }

  /** Counts one page of the crawl job as no longer here; returns how many remain. */
  private giveBack(jobId: string): number {
    const remaining = (this.perCrawl.get(jobId) ?? 1) - 1;
    if (remaining <= 0) this.perCrawl.delete(jobId);
    else this.perCrawl.set(jobId, remaining);
    return remaining;
  }
}
