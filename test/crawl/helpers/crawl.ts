import type pg from 'pg';
import { startCrawl, waitForJob } from '../../../src/core/crawl/index.js';
import type { CrawlJob, CrawlRequestInput, CrawlWorkerOptions } from '../../../src/core/crawl/index.js';
import type { Config } from '../../../src/core/config.js';
import type { ConnectionInfo } from '../../../src/core/db/connect.js';

/** Fetch settings small enough that timeouts and retries cost milliseconds in tests. */
export const FAST_FETCH: CrawlWorkerOptions['fetch'] = {
  connectTimeoutMs: 2000,
  headersTimeoutMs: 400,
  bodyTimeoutMs: 400,
  totalTimeoutMs: 3000,
  maxRetries: 1,
  retryBaseMs: 20,
  maxRetryAfterMs: 2000,
};

export const FAST_WORKER: CrawlWorkerOptions = {
  onError: (e) => console.error('worker error', e),
  concurrency: 8,
  supervise: false,
  tickMs: 150,
  idlePollMs: 100,
  stopGraceMs: 2000,
  throttleWaitMs: 30,
  fetch: FAST_FETCH,
};

export async function crawlToEnd(db: { pool: pg.Pool; info: ConnectionInfo }, config: Config, request: CrawlRequestInput, timeoutMs = 30_000): Promise<CrawlJob> {
  const job = await startCrawl(db, config, request, { detectTimeoutMs: 2000 });
  return waitJob(db, job.job_id, timeoutMs);
}

export async function waitJob(db: { pool: pg.Pool; info: ConnectionInfo }, id: string, timeoutMs = 30_000): Promise<CrawlJob> {
  return waitForJob(db, id, () => undefined, { pollMs: 200, signal: AbortSignal.timeout(timeoutMs) });
}

export interface FrontierRow {
  url: string;
  depth: number;
  status: string;
  http_status: number | null;
  last_error: string | null;
  skip_reason: string | null;
  worker_id: string | null;
  snippets: number;
}

export async function frontier(pool: pg.Pool, jobId: string): Promise<FrontierRow[]> {
  const { rows } = await pool.query<FrontierRow>('SELECT url, depth, status, http_status, last_error, skip_reason, worker_id::text, snippets FROM crawl_frontier WHERE job_id = $1 ORDER BY url', [
    jobId,
  ]);
  return rows;
}

/** A job's source_id is null only once a failed crawl removed its empty source: then there are no pages. */
export async function documentPaths(pool: pg.Pool, sourceId: string | null): Promise<string[]> {
  const { rows } = await pool.query<{ url: string }>('SELECT url FROM documents WHERE source_id = $1 ORDER BY url', [sourceId]);
  return rows.map((r) => new URL(r.url).pathname + new URL(r.url).search);
}

export async function snippetCount(pool: pg.Pool, sourceId: string | null): Promise<number> {
  const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM snippets WHERE source_id = $1 AND kind = 'snippet'", [sourceId]);
  return rows[0]!.n;
}
