import type pg from 'pg';
import { ValidationError } from '../errors.js';
import { isUuid } from '../sources/resolve.js';
import { getCrawlJob, resolveCrawlJobId } from '../crawl/jobs.js';
import type { CrawlJob } from '../crawl/jobs.js';

export interface PageError {
  url: string;
  error: string;
  http_status: number | null;
  at: string;
}

/**
 * The latest page failures of a crawl job, newest first: what the dashboard shows under a job with failures.
 * The job row keeps only the error that ended it; the per-page reasons live in the frontier.
 */
export async function crawlJobErrors(pool: pg.Pool, jobId: string, options: { limit?: number } = {}): Promise<PageError[]> {
  const limit = Math.max(1, Math.min(100, options.limit ?? 5));
  const { rows } = await pool.query<{ url: string; error: string; http_status: number | null; updated_at: Date }>(
    `SELECT url, coalesce(last_error, 'HTTP ' || http_status, 'failed') AS error, http_status, updated_at
       FROM crawl_frontier WHERE job_id = $1 AND status = 'failed'
      ORDER BY updated_at DESC, url LIMIT $2`,
    [jobId, limit],
  );
  return rows.map((r) => ({ url: r.url, error: r.error, http_status: r.http_status, at: r.updated_at.toISOString() }));
}

/** A crawl job with its latest page failures, as `crawl status` shows it (the dashboard's job view does too). */
export type CrawlJobReport = CrawlJob & { recent_errors: PageError[] };

/** Reads a job by id or unique id prefix, with its latest page failures (newest first). */
export async function crawlJobReport(pool: pg.Pool, ref: string, options: { limit?: number } = {}): Promise<CrawlJobReport> {
  const job = await getCrawlJob(pool, await resolveCrawlJobId(pool, ref));
  const recent = job.pages_failed > 0 || job.status === 'failed' ? await crawlJobErrors(pool, job.job_id, options) : [];
  return { ...job, recent_errors: recent };
}

export interface FileError {
  /** As the user named the file: relative to the uploaded directory, or the file name. */
  path: string;
  /** The document URL the file was to be stored under; null for a file refused before it was stored. */
  url: string | null;
  error: string;
  at: string;
}

/**
 * The latest file failures of an upload job, newest first. Files the worker failed have their own row in
 * upload_files; files refused on intake (binary, too large, not UTF-8) were never stored, so they exist only
 * in the job's file_errors list and take the job's creation time.
 */
export async function uploadJobErrors(pool: pg.Pool, jobId: string, options: { limit?: number } = {}): Promise<FileError[]> {
  if (!isUuid(jobId)) throw new ValidationError(`Upload job id must be a UUID, got ${JSON.stringify(jobId)}.`);
  const limit = Math.max(1, Math.min(100, options.limit ?? 5));
  const { rows } = await pool.query<{ path: string; url: string | null; error: string; at: Date }>(
    `SELECT path, url, error, at FROM (
       SELECT f.path, f.url, coalesce(f.error, 'failed') AS error, f.updated_at AS at, 0::bigint AS n
         FROM upload_files f WHERE f.job_id = $1 AND f.status = 'failed'
       UNION ALL
       SELECT e.item->>'path', NULL, coalesce(e.item->>'error', 'failed'), j.created_at, e.n
         FROM upload_jobs j CROSS JOIN LATERAL jsonb_array_elements(j.file_errors) WITH ORDINALITY AS e(item, n)
        WHERE j.id = $1 AND NOT EXISTS (SELECT 1 FROM upload_files f WHERE f.job_id = j.id AND f.path = e.item->>'path')
     ) failures
     ORDER BY at DESC, n DESC, path LIMIT $2`,
    [jobId, limit],
  );
  return rows.map((r) => ({ path: r.path, url: r.url, error: r.error, at: r.at.toISOString() }));
}
