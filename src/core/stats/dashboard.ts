import type pg from 'pg';

/** The numbers behind the TUI overview and GET /api/statistics/dashboard: one round trip per section. */
export interface DashboardStats {
  totals: { sources: number; documents: number; snippets: number; languages: number };
  languages: Array<{ language: string; snippets: number }>;
  jobs: { crawl: Record<JobState, number>; upload: Record<UploadState, number> };
  recent_jobs: Array<{
    id: string;
    kind: 'crawl' | 'upload';
    name: string;
    /** The stored status; a text view reads it with jobStatusText, which makes a completed job with failures `partial`. */
    status: string;
    pages: number;
    /** Pages (crawl) or files (upload) that failed. */
    failed: number;
    snippets: number;
    created_at: string;
    completed_at: string | null;
  }>;
  top_sources: Array<{ id: string; name: string; version: string; snippets: number; documents: number }>;
}

type JobState = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
type UploadState = 'queued' | 'processing' | 'completed' | 'failed' | 'cancelled';

export async function dashboardStats(pool: pg.Pool, options: { recent?: number; top?: number } = {}): Promise<DashboardStats> {
  const [totals, languages, crawlStates, uploadStates, recent, top] = await Promise.all([
    pool.query<{ sources: number; documents: number; snippets: number }>(
      `SELECT (SELECT count(*)::int FROM sources) AS sources,
              (SELECT coalesce(sum(document_count), 0)::int FROM sources) AS documents,
              (SELECT coalesce(sum(snippet_count), 0)::int FROM sources) AS snippets`,
    ),
    pool.query<{ language: string; snippets: number }>("SELECT language, count(*)::int AS snippets FROM snippets WHERE kind = 'snippet' GROUP BY language ORDER BY snippets DESC, language"),
    pool.query<{ status: JobState; n: number }>('SELECT status, count(*)::int AS n FROM crawl_jobs GROUP BY status'),
    pool.query<{ status: UploadState; n: number }>('SELECT status, count(*)::int AS n FROM upload_jobs GROUP BY status'),
    pool.query<DashboardStats['recent_jobs'][number]>(
      `SELECT * FROM (
         SELECT id, 'crawl' AS kind, name, status, pages_crawled AS pages, pages_failed AS failed, snippets_stored AS snippets, created_at, completed_at FROM crawl_jobs
         UNION ALL
         SELECT id, 'upload' AS kind, name, status, processed_files AS pages, failed_files AS failed, snippets_extracted AS snippets, created_at, completed_at FROM upload_jobs
       ) j ORDER BY created_at DESC LIMIT $1`,
      [options.recent ?? 10],
    ),
    pool.query<DashboardStats['top_sources'][number]>('SELECT id, name, version, snippet_count AS snippets, document_count AS documents FROM sources ORDER BY snippet_count DESC, name LIMIT $1', [
      options.top ?? 10,
    ]),
  ]);
  const crawl: Record<JobState, number> = { queued: 0, running: 0, completed: 0, failed: 0, cancelled: 0 };
  for (const r of crawlStates.rows) crawl[r.status] = r.n;
  const upload: Record<UploadState, number> = { queued: 0, processing: 0, completed: 0, failed: 0, cancelled: 0 };
  for (const r of uploadStates.rows) upload[r.status] = r.n;
  const t = totals.rows[0]!;
  return {
    totals: { sources: t.sources, documents: t.documents, snippets: t.snippets, languages: languages.rows.length },
    languages: languages.rows,
    jobs: { crawl, upload },
    recent_jobs: recent.rows.map((r) => ({
      ...r,
      created_at: new Date(r.created_at).toISOString(),
      completed_at: r.completed_at ? new Date(r.completed_at).toISOString() : null,
    })),
    top_sources: top.rows,
  };
}
