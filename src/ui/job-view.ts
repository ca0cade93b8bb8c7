import type { JobEvent } from '../core/events/notify.js';

/**
 * What a progress display needs to know about a crawl or upload job, whatever produced it: a row read from
 * the database, or a live event. Shared by the dashboard and by `crawl start --wait` / `upload --wait`.
 */
export interface JobProgressView {
  id: string;
  kind: 'crawl' | 'upload';
  name: string;
  status: string;
  /** Pages (or files) processed so far, whatever their outcome. */
  done: number;
  /** Pages found (or files submitted); grows while a crawl discovers links. */
  total: number;
  crawled: number;
  failed: number;
  skipped: number;
  snippets: number;
  /** Pages (or files) per second. */
  rate: number | null;
  etaSeconds: number | null;
  currentUrl: string | null;
  error: string | null;
  createdAt?: string | null;
}

export const TERMINAL_STATES = new Set(['completed', 'failed', 'cancelled']);

export function isActive(job: Pick<JobProgressView, 'status'>): boolean {
  return job.status === 'queued' || job.status === 'running' || job.status === 'processing' || job.status === 'enhancing';
}

function num(value: unknown): number {
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) ? n : 0;
}

function optionalNum(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
}

function iso(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  return String(value);
}

/** The crawl_jobs columns a progress display reads; the crawler's CrawlJob has at least these. */
export interface CrawlJobLike {
  id: string;
  name: string;
  status: string;
  pages_found: number;
  pages_crawled: number;
  pages_skipped: number;
  pages_failed: number;
  snippets_stored: number;
  current_url?: string | null;
  pages_per_second?: number | null;
  eta_seconds?: number | null;
  error?: string | null;
  created_at?: string | Date | null;
  llm_pages_total?: number;
  llm_pages_done?: number;
}

export function fromCrawlJob(job: CrawlJobLike): JobProgressView {
  const crawled = num(job.pages_crawled);
  const failed = num(job.pages_failed);
  const skipped = num(job.pages_skipped);
  return {
    id: job.id,
    kind: 'crawl',
    name: job.name,
    status: job.status,
    crawled,
    failed,
    skipped,
    // While enhancing, the bar follows the LLM stage through the job's pages.
    ...(job.status === 'enhancing' ? { done: num(job.llm_pages_done), total: num(job.llm_pages_total) } : { done: crawled + failed + skipped, total: num(job.pages_found) }),
    snippets: num(job.snippets_stored),
    rate: optionalNum(job.pages_per_second),
    etaSeconds: optionalNum(job.eta_seconds),
    currentUrl: job.current_url ?? null,
    error: job.error ?? null,
    createdAt: iso(job.created_at),
  };
}

/** The upload_jobs columns a progress display reads. */
export interface UploadJobLike {
  id: string;
  name: string;
  status: string;
  file_count: number;
  processed_files: number;
  failed_files: number;
  snippets_extracted: number;
  error?: string | null;
  files_per_second?: number | null;
  eta_seconds?: number | null;
  current_file?: string | null;
  created_at?: string | Date | null;
  started_at?: string | Date | null;
  completed_at?: string | Date | null;
}

/**
 * Files per second since the first file started, as the upload worker computes it for its events: a row read
 * from the database (no event yet, or a dashboard opened mid-upload) shows the same rate and ETA.
 */
function uploadRate(job: UploadJobLike, processed: number, now: number): number | null {
  const given = optionalNum(job.files_per_second);
  if (given !== null || !job.started_at || processed === 0) return given;
  const end = job.completed_at ? new Date(job.completed_at).getTime() : now;
  const seconds = (end - new Date(job.started_at).getTime()) / 1000;
  return Number.isFinite(seconds) && seconds > 0 ? processed / seconds : null;
}

export function fromUploadJob(job: UploadJobLike, now = Date.now()): JobProgressView {
  // processed_files counts every file handled, failed ones included.
  const processed = num(job.processed_files);
  const failed = num(job.failed_files);
  const rate = uploadRate(job, processed, now);
  const remaining = Math.max(0, num(job.file_count) - processed);
  const eta = optionalNum(job.eta_seconds) ?? (rate !== null && rate > 0 && isActive(job) ? remaining / rate : null);
  return {
    id: job.id,
    kind: 'upload',
    name: job.name,
    status: job.status,
    crawled: Math.max(0, processed - failed),
    failed,
    skipped: 0,
    done: processed,
    total: num(job.file_count),
    snippets: num(job.snippets_extracted),
    rate,
    etaSeconds: eta,
    currentUrl: job.current_file ?? null,
    error: job.error ?? null,
    createdAt: iso(job.created_at),
  };
}

/** Reads a counter under its column name or its camelCase twin, whichever the publisher used. */
function counter(counters: Record<string, number>, ...names: string[]): number | undefined {
  for (const name of names) {
    const value = counters[name];
    if (typeof value === 'number' && Number.isFinite(value)) return value;
  }
  return undefined;
}

/**
 * Folds a live event into a view. Counters the event does not carry keep their last known value, so a
 * publisher that sends only what changed still renders a complete line.
 */
export function applyJobEvent(view: JobProgressView, event: JobEvent): JobProgressView {
  if (event.jobId !== view.id) return view;
  const c = event.counters ?? {};
  const failed = view.kind === 'crawl' ? counter(c, 'pages_failed', 'pagesFailed', 'failed') : counter(c, 'failed_files', 'failedFiles', 'failed');
  const processed = counter(c, 'processed_files', 'processedFiles', 'processed');
  const crawled = view.kind === 'crawl' ? counter(c, 'pages_crawled', 'pagesCrawled', 'crawled') : processed === undefined ? undefined : Math.max(0, processed - (failed ?? view.failed));
  const skipped = counter(c, 'pages_skipped', 'pagesSkipped', 'skipped');
  const total = view.kind === 'crawl' ? counter(c, 'pages_found', 'pagesFound', 'found') : counter(c, 'file_count', 'fileCount', 'total');
  const snippets = counter(c, 'snippets_stored', 'snippetsStored', 'snippets_extracted', 'snippetsExtracted', 'snippets');
  const next: JobProgressView = {
    ...view,
    status: event.state || view.status,
    crawled: crawled ?? view.crawled,
    failed: failed ?? view.failed,
    skipped: skipped ?? view.skipped,
    total: total ?? view.total,
    snippets: snippets ?? view.snippets,
    rate: event.rate ?? view.rate,
    etaSeconds: event.etaSeconds === undefined ? view.etaSeconds : event.etaSeconds,
    currentUrl: event.currentUrl === undefined ? view.currentUrl : event.currentUrl,
    error: event.error === undefined ? view.error : event.error,
  };
  next.done = next.crawled + next.failed + next.skipped;
  // An enhancing job's events count the LLM stage's pages: the bar follows them, as fromCrawlJob does.
  if (next.status === 'enhancing' && c.llm_pages_total !== undefined) {
    return { ...next, done: c.llm_pages_done ?? 0, total: c.llm_pages_total, currentUrl: null, etaSeconds: null };
  }
  if (TERMINAL_STATES.has(next.status)) {
    next.etaSeconds = null;
    if (next.status === 'completed') next.currentUrl = null;
  }
  return next;
}
