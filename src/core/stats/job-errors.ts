import type pg from 'pg';

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
