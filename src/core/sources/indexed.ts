import type pg from 'pg';

/**
 * What the index holds of a library at one version: whether its source has documents, and when it has none,
 * why (its newest job failed). Read by `docdex sync`'s plan, the project records, and `docdex add`, which
 * leaves a version that is already indexed alone (issue #49: "running add again fetches nothing").
 */

/**
 * For source `s` with no documents: why, when its newest job (crawl, git or README) failed or was cancelled,
 * else NULL. Such a source is not `indexing`: nothing will fill it unless it is queued again.
 */
export const NEWEST_JOB_FAILURE_SQL = `CASE WHEN coalesce(s.document_count, 0) = 0 THEN (
    SELECT CASE WHEN j.status = 'cancelled' THEN coalesce(j.error, 'its indexing job was cancelled') ELSE coalesce(j.error, 'its indexing job failed') END
      FROM (SELECT c.status, c.error, c.created_at FROM crawl_jobs c WHERE c.source_id = s.id
            UNION ALL
            SELECT u.status::text, u.error, u.created_at FROM upload_jobs u WHERE u.source_id = s.id
            ORDER BY created_at DESC LIMIT 1) j
     WHERE j.status IN ('failed', 'cancelled')) END`;

/** What the index holds of a source of the wanted version: documents, none yet, or none after its job failed. */
export function sourceState(source: { document_count: number; failure: string | null }): 'indexed' | 'indexing' | 'failed' {
  if (Number(source.document_count) > 0) return 'indexed';
  return source.failure !== null ? 'failed' : 'indexing';
}

const ACTIVE_JOB_STATUSES = new Set(['queued', 'running', 'processing', 'enhancing']);

/**
 * A source's state as a list of sources shows it (the dashboard): its newest job's while that job is active,
 * else what it holds, by sourceState, the rule `add --wait` and `sync` count a library by: a source with
 * documents is `indexed` though its newest job failed (issue #49: zod's README was indexed, its docs site's
 * crawl failed, and the dashboard said `failed`). Without documents it is `failed` or `cancelled` after such
 * a job, else `empty`.
 */
export function listedSourceState(source: { document_count: number; newest_job_status: string | null }): string {
  const newest = source.newest_job_status;
  if (newest !== null && ACTIVE_JOB_STATUSES.has(newest)) return newest;
  const ended = newest === 'failed' || newest === 'cancelled' ? newest : null;
  const state = sourceState({ document_count: source.document_count, failure: ended });
  if (state === 'indexing') return 'empty';
  return state === 'failed' ? ended! : state;
}

/** An indexed source that answers to a library name (its name or an alias), at one version. */
export interface IndexedVersion {
  source_id: string;
  version: string;
  document_count: number;
  snippet_count: number;
  /** Why it holds no documents, when its newest job failed (NEWEST_JOB_FAILURE_SQL). */
  failure: string | null;
}

const INDEXED_COLUMNS = `s.id AS source_id, s.version, coalesce(s.document_count, 0)::int AS document_count,
  coalesce(s.snippet_count, 0)::int AS snippet_count, ${NEWEST_JOB_FAILURE_SQL} AS failure`;

/**
 * Every indexed version of each name (the source's name or an alias, case-insensitively, as the project
 * records match), keyed by the lower-cased name asked. What a sync plan reads before anything is recorded.
 */
export async function listIndexedVersions(pool: pg.Pool | pg.ClientBase, names: readonly string[]): Promise<Map<string, IndexedVersion[]>> {
  const { rows } = await pool.query<IndexedVersion & { wanted: string }>(
    `SELECT q.wanted, ${INDEXED_COLUMNS}
       FROM (SELECT DISTINCT lower(n) AS wanted FROM unnest($1::text[]) n) q
       JOIN sources s ON lower(s.name) = q.wanted OR q.wanted = ANY (SELECT lower(a) FROM unnest(s.aliases) a)
      ORDER BY q.wanted, s.version`,
    [names],
  );
  const byName = new Map<string, IndexedVersion[]>();
  for (const { wanted, ...row } of rows) byName.set(wanted, [...(byName.get(wanted) ?? []), row]);
  return byName;
}

/** A library version that holds documents, with its name as indexed. */
export interface IndexedLibrary {
  source_id: string;
  name: string;
  version: string;
  document_count: number;
  snippet_count: number;
}

/** The source named `name` (or with it as an alias; its own name first) at exactly `version`, when it holds documents. */
export async function findIndexedLibrary(pool: pg.Pool | pg.ClientBase, name: string, version: string): Promise<IndexedLibrary | null> {
  const { rows } = await pool.query<IndexedLibrary>(
    `SELECT s.id AS source_id, s.name, s.version, s.document_count, s.snippet_count FROM sources s
      WHERE (lower(s.name) = lower($1) OR lower($1) = ANY (SELECT lower(a) FROM unnest(s.aliases) a)) AND s.version = $2 AND s.document_count > 0
      ORDER BY lower(s.name) = lower($1) DESC
      LIMIT 1`,
    [name, version],
  );
  return rows[0] ?? null;
}

/** Where a library was indexed from: a docs site's start URL, or a repository at a ref (none: its default branch). */
export type IndexedOrigin = { kind: 'url'; url: string } | { kind: 'git'; remote: string; ref: string | null };

/**
 * The source indexed from exactly this origin, when it holds documents: a crawl that started at this URL, or a
 * checkout of this remote at this ref; of the given name and version when they are given (a name or version
 * the caller sets makes another library).
 */
export async function findIndexedOrigin(pool: pg.Pool | pg.ClientBase, origin: IndexedOrigin, wanted: { name?: string; version?: string }): Promise<IndexedLibrary | null> {
  const { rows } = await pool.query<IndexedLibrary>(
    `SELECT s.id AS source_id, s.name, s.version, s.document_count, s.snippet_count FROM sources s
      WHERE s.document_count > 0
        AND ($3::text IS NULL OR s.name = $3) AND ($4::text IS NULL OR s.version = $4)
        AND CASE $1::text
              WHEN 'url' THEN s.kind = 'crawl' AND s.crawl_config->'start_urls' ? $2
              ELSE s.kind = 'git' AND s.crawl_config->'git'->>'remote' = $2 AND coalesce(s.crawl_config->'git'->>'ref', '') = coalesce($5, '')
            END
      ORDER BY s.last_crawled_at DESC NULLS LAST
      LIMIT 1`,
    [origin.kind, origin.kind === 'url' ? origin.url : origin.remote, wanted.name ?? null, wanted.version ?? null, origin.kind === 'git' ? origin.ref : null],
  );
  return rows[0] ?? null;
}
