import type pg from 'pg';
import type { RenderMode } from '../../crawl-request.js';
import { Doorbell } from '../doorbell.js';
import type { JobInfo } from '../page.js';
import type { RobotsStore } from '../robots-store.js';
import { createScope } from '../scope.js';
import { normalizeUrl } from '../url.js';

async function loadJobInfo(pool: pg.Pool, jobId: string): Promise<JobInfo | null> {
  const { rows } = await pool.query<{
    id: string;
    source_id: string;
    max_depth: number;
    max_concurrent: number;
    max_pages: number;
    start_urls: string[];
    domain_filter: string | null;
    url_patterns: string[];
    exclude_patterns: string[];
    allow_loopback: boolean;
    prefer_markdown: 'auto' | 'never';
    render: RenderMode;
  }>('SELECT id, source_id, max_depth, max_concurrent, max_pages, start_urls, domain_filter, url_patterns, exclude_patterns, allow_loopback, prefer_markdown, render FROM crawl_jobs WHERE id = $1', [
    jobId,
  ]);
  const r = rows[0];
  if (!r) return null;
  const startKeys = r.start_urls.map((u) => normalizeUrl(u)).filter((u): u is string => u !== null);
  return {
    id: r.id,
    sourceId: r.source_id,
    maxDepth: r.max_depth,
    maxConcurrent: r.max_concurrent,
    maxPages: r.max_pages,
    scope: createScope({ startUrls: r.start_urls, domainFilter: r.domain_filter, urlPatterns: r.url_patterns, excludePatterns: r.exclude_patterns }),
    startKeys: new Set(startKeys),
    startUrls: r.start_urls,
    firstStartKey: startKeys[0] ?? '',
    allowLoopback: r.allow_loopback,
    preferMarkdown: r.prefer_markdown,
    render: r.render,
  };
}

/**
 * What this worker keeps per crawl job it works on: the job's settings (read once, shared by its pages and its
 * controller), the abort signal of its pages, and the doorbell its controller's tick waits on. All of it is
 * dropped when the job ends (a job_complete event on the presence session).
 */
export class KnownJobs {
  private readonly infos = new Map<string, Promise<JobInfo | null>>();
  private readonly aborts = new Map<string, AbortController>();
  private readonly controllerBells = new Map<string, Doorbell>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly robots: RobotsStore,
    private readonly tickMs: number,
  ) {}

  /** The job's settings, or null when the job is gone. */
  info(jobId: string): Promise<JobInfo | null> {
    let p = this.infos.get(jobId);
    if (!p) {
      if (this.infos.size > 500) this.infos.clear();
      p = loadJobInfo(this.pool, jobId);
      this.infos.set(jobId, p);
      p.catch(() => this.infos.delete(jobId));
    }
    return p;
  }

  /** Aborted when the job is cancelled or fails, so this worker's pages of it stop. */
  pagesSignal(jobId: string): AbortSignal {
    let c = this.aborts.get(jobId);
    if (!c) {
      c = new AbortController();
      this.aborts.set(jobId, c);
    }
    return c.signal;
  }

  /** Waits one controller tick, or less when the job's state changes elsewhere (finished by a page, cancelled). */
  async waitTick(jobId: string, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    let bell = this.controllerBells.get(jobId);
    if (!bell) {
      bell = new Doorbell();
      this.controllerBells.set(jobId, bell);
    }
    const onAbort = () => bell.ring();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await bell.wait(this.tickMs);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    signal.throwIfAborted();
  }

  /** The job reached a final state (here or in another worker). */
  ended(jobId: string, state: string): void {
    this.controllerBells.get(jobId)?.ring();
    // Cancel (or a peer finishing or failing the job) stops this worker's fetches for it within one fetch.
    if (state === 'cancelled' || state === 'failed') this.aborts.get(jobId)?.abort(new Error(`job ${state}`));
    this.aborts.delete(jobId);
    this.infos.delete(jobId);
    this.robots.forgetJob(jobId);
  }

  /** This worker's controller of the job has ended. */
  controllerEnded(jobId: string): void {
    this.controllerBells.delete(jobId);
  }
}
