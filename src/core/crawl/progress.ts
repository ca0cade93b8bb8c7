import type pg from 'pg';
import type { ConnectionInfo } from '../db/connect.js';
import { publish, subscribe } from '../events/notify.js';
import type { JobEvent, Subscription } from '../events/notify.js';
import { routesOf } from './frontier.js';
import type { FrontierCounters } from './frontier.js';
import { countersOf, getCrawlJob, TERMINAL_STATUSES } from './jobs.js';
import type { CrawlJob } from './jobs.js';

/**
 * Progress of a crawl: the controller turns frontier counts into a rate over the last half minute and an ETA
 * for the pages known so far, writes them to the job row with a heartbeat, and publishes crawl_progress.
 * Followers (`--wait`, the daemon's WebSocket, the TUI) listen for the events and re-read the row.
 */

const WINDOW_MS = 30_000;

export class RateWindow {
  private samples: Array<{ t: number; done: number }> = [];

  /** Adds a sample and returns pages per second over the window (0 until two samples exist). */
  push(done: number, t = Date.now()): number {
    this.samples.push({ t, done });
    while (this.samples.length > 2 && t - this.samples[0]!.t > WINDOW_MS) this.samples.shift();
    const first = this.samples[0]!;
    const dt = (t - first.t) / 1000;
    return dt > 0 ? Math.max(0, (done - first.done) / dt) : 0;
  }
}

export function processed(c: FrontierCounters): number {
  return c.crawled + c.unchanged + c.skipped + c.failed;
}

export function etaSeconds(c: FrontierCounters, rate: number): number | null {
  const left = c.pending + c.fetching;
  if (left === 0) return 0;
  return rate > 0 ? Math.ceil(left / rate) : null;
}

/** Writes the controller's view of the job and its heartbeat; returns false when the job is no longer running. */
export async function writeProgress(pool: pg.Pool, jobId: string, c: FrontierCounters, rate: number, eta: number | null, current: string | null): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE crawl_jobs SET pages_found = $2, pages_crawled = $3, pages_skipped = $4, pages_failed = $5, snippets_stored = $6,
       pages_per_second = $7, eta_seconds = $8, current_url = $9, pages_by_route = $10, heartbeat_at = now(), updated_at = now()
      WHERE id = $1 AND status = 'running'`,
    [jobId, c.found, c.crawled, c.unchanged + c.skipped, c.failed, c.snippets, rate, eta, current, JSON.stringify(routesOf(c))],
  );
  return (rowCount ?? 0) > 0;
}

export async function publishProgress(pool: pg.Pool, jobId: string, c: FrontierCounters, rate: number, eta: number | null, current: string | null): Promise<void> {
  await publish(pool, {
    event: 'crawl_progress',
    jobId,
    kind: 'crawl',
    state: 'running',
    counters: {
      pages_found: c.found,
      pages_crawled: c.crawled,
      pages_skipped: c.unchanged + c.skipped,
      pages_failed: c.failed,
      snippets_stored: c.snippets,
    },
    rate: Math.round(rate * 100) / 100,
    etaSeconds: eta,
    currentUrl: current,
  });
}

export async function publishCompletion(pool: pg.Pool, jobId: string): Promise<void> {
  const job = await getCrawlJob(pool, jobId);
  await publish(pool, {
    event: 'job_complete',
    jobId,
    kind: 'crawl',
    state: job.status,
    counters: countersOf(job),
    rate: job.pages_per_second,
    etaSeconds: null,
    currentUrl: null,
    error: job.error,
  });
}

export interface WaitOptions {
  /** Fallback poll when no event arrives (a dropped LISTEN connection, a missed NOTIFY). */
  pollMs?: number;
  signal?: AbortSignal;
}

/**
 * Follows a job until it completes, fails or is cancelled, whoever runs it: NOTIFY events trigger a re-read
 * of the job row; a slow poll covers lost events. onProgress receives the job at most a few times a second.
 */
export async function waitForJob(db: { pool: pg.Pool; info: ConnectionInfo }, id: string, onProgress: (job: CrawlJob) => void = () => undefined, options: WaitOptions = {}): Promise<CrawlJob> {
  const pollMs = options.pollMs ?? 2000;
  let job = await getCrawlJob(db.pool, id);
  onProgress(job);
  if (TERMINAL_STATUSES.has(job.status)) return job;
  // Aborted before the listener below exists (a Ctrl-C during the first read): an abort event will not come again.
  if (options.signal?.aborted) throw options.signal.reason ?? new Error('aborted');
  return new Promise<CrawlJob>((resolve, reject) => {
    let subscription: Subscription | null = null;
    let timer: NodeJS.Timeout | null = null;
    let reading = false;
    let again = false;
    let finished = false;
    const finish = (error: unknown, result?: CrawlJob) => {
      if (finished) return;
      finished = true;
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      void subscription?.close();
      if (error) reject(error as Error);
      else resolve(result!);
    };
    const refresh = async () => {
      if (finished) return;
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      try {
        do {
          again = false;
          job = await getCrawlJob(db.pool, id);
          onProgress(job);
          if (TERMINAL_STATUSES.has(job.status)) return finish(null, job);
        } while (again);
      } catch (error) {
        finish(error);
      } finally {
        reading = false;
      }
    };
    const schedule = () => {
      if (finished) return;
      timer = setTimeout(() => {
        void refresh().then(schedule);
      }, pollMs);
    };
    const onAbort = () => finish(options.signal?.reason ?? new Error('aborted'));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    subscribe(
      db.info,
      (event: JobEvent) => {
        if (event.jobId === id) void refresh();
      },
      { channels: ['crawl_progress', 'job_complete'], onError: () => undefined },
    )
      .then((s) => {
        if (finished) void s.close();
        else subscription = s;
        // An event may have fired between the first read and LISTEN.
        void refresh();
      })
      .catch(() => undefined);
    schedule();
  });
}
