import type pg from 'pg';
import type { z } from 'zod';
import { CRAWL_FIELDS, fieldFacts } from '../crawl-request.js';
import type { SourceCrawlConfig } from '../crawl-request.js';
import { ConflictError, ValidationError } from '../errors.js';
import { latestVersionFirst } from '../library-ref.js';
import { resolveSource } from './resolve.js';
import { aliasOf, NAME_MATCH_THRESHOLD, nameScoreSql } from './match.js';
import { withTransaction } from '../db/transaction.js';
import { dropQueuedPages } from '../queue/pages.js';

/** Listing, showing, editing and deleting sources (a crawled site or an upload collection, per version). */

export interface SourceSummary {
  id: string;
  name: string;
  version: string;
  description: string;
  base_url: string | null;
  kind: 'crawl' | 'upload' | 'git';
  snippet_count: number;
  page_count: number;
  /** How many versions of this library (sources with the same name) are indexed. */
  version_count: number;
  last_crawled_at: string | null;
  created_at: string;
  updated_at: string;
}

/** The stored crawl configuration recrawl reuses (sources.crawl_config); older sources may lack newer fields. */
export type CrawlSettings = Partial<SourceCrawlConfig>;

export interface SourceJob {
  id: string;
  kind: 'crawl' | 'upload';
  status: string;
  created_at: string;
  completed_at: string | null;
}

export interface SourceDetails extends SourceSummary {
  crawl_config: CrawlSettings;
  metadata: Record<string, unknown>;
  languages: Array<{ language: string; snippets: number }>;
  jobs: SourceJob[];
}

export interface Page<T> {
  items: T[];
  total: number;
  limit: number;
  offset: number;
}

const SUMMARY_COLUMNS = `s.id, s.name, s.version, s.description, s.base_url, s.kind, s.snippet_count,
  s.document_count AS page_count, (SELECT count(*)::int FROM sources v WHERE lower(v.name) = lower(s.name)) AS version_count,
  s.last_crawled_at, s.created_at, s.updated_at`;

export const MAX_PAGE_SIZE = 100;

export function checkPaging(limit: number | undefined, offset: number | undefined, defaultLimit = 20): { limit: number; offset: number } {
  const l = limit ?? defaultLimit;
  const o = offset ?? 0;
  if (!Number.isInteger(l) || l < 1 || l > MAX_PAGE_SIZE) throw new ValidationError(`limit must be a whole number from 1 to ${MAX_PAGE_SIZE}, got ${l}.`);
  if (!Number.isInteger(o) || o < 0 || o > 100_000) throw new ValidationError(`offset must be a whole number from 0 to 100000, got ${o}.`);
  return { limit: l, offset: o };
}

type ScoredSummary = SourceSummary & { score: number };

/**
 * Sorts sources into libraries: each name's versions together, the latest first (latestVersionFirst). The
 * libraries by name; with a query, those with snippets first, then the closest (a library's best version's score).
 */
function groupByLibrary(rows: ScoredSummary[], byScore: boolean): SourceSummary[] {
  const libraries = new Map<string, ScoredSummary[]>();
  for (const row of rows) {
    const key = row.name.toLowerCase();
    libraries.set(key, [...(libraries.get(key) ?? []), row]);
  }
  const facts = [...libraries].map(([key, versions]) => ({
    key,
    versions: versions.sort(latestVersionFirst),
    score: Math.max(...versions.map((v) => v.score)),
    hasSnippets: versions.some((v) => v.snippet_count > 0),
  }));
  facts.sort((a, b) => (byScore ? Number(b.hasSnippets) - Number(a.hasSnippets) || b.score - a.score : 0) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return facts.flatMap((f) => f.versions.map(({ score: _score, ...summary }) => summary));
}

/**
 * Sources grouped by library: by name, each name's versions the latest first. `query` filters by name: the
 * match score of sources/match.ts (exact, alias, prefix, trigram similarity) or containment in the name or
 * description; libraries with snippets first, then the closest. Every match is read and paged here: sources
 * are few (one per library version), and semver order is not SQL's.
 */
export async function listSources(pool: pg.Pool, options: { query?: string; limit?: number; offset?: number } = {}): Promise<Page<SourceSummary>> {
  const { limit, offset } = checkPaging(options.limit, options.offset);
  const query = options.query?.trim() ? options.query.trim() : null;
  const score = `CASE WHEN $1::text IS NULL THEN 0 ELSE ${nameScoreSql('$1', '$2')} END`;
  const where = `($1::text IS NULL OR strpos(lower(s.name), lower($1)) > 0 OR strpos(lower(s.description), lower($1)) > 0
                 OR ${score} >= ${NAME_MATCH_THRESHOLD})`;
  const { rows } = await pool.query<ScoredSummary>(`SELECT ${SUMMARY_COLUMNS}, (${score})::float8 AS score FROM sources s WHERE ${where}`, [query, aliasOf(query ?? '')]);
  return { items: groupByLibrary(rows, query !== null).slice(offset, offset + limit), total: rows.length, limit, offset };
}

export async function getSource(pool: pg.Pool, ref: string, version?: string): Promise<SourceDetails> {
  const { id } = await resolveSource(pool, ref, version);
  const [row, languages, jobs] = await Promise.all([
    pool.query<SourceSummary & { crawl_config: CrawlSettings; metadata: Record<string, unknown> }>(`SELECT ${SUMMARY_COLUMNS}, s.crawl_config, s.metadata FROM sources s WHERE s.id = $1`, [id]),
    pool.query<{ language: string; snippets: number }>("SELECT language, count(*)::int AS snippets FROM snippets WHERE source_id = $1 AND kind = 'snippet' GROUP BY language ORDER BY 2 DESC, 1", [id]),
    pool.query<SourceJob>(
      `(SELECT id, 'crawl' AS kind, status, created_at, completed_at FROM crawl_jobs WHERE source_id = $1
        UNION ALL
        SELECT id, 'upload' AS kind, status, created_at, completed_at FROM upload_jobs WHERE source_id = $1)
       ORDER BY created_at DESC LIMIT 10`,
      [id],
    ),
  ]);
  return { ...row.rows[0]!, languages: languages.rows, jobs: jobs.rows };
}

export interface SourceUpdate {
  name?: string;
  version?: string;
  description?: string;
  baseUrl?: string | null;
  /** URL glob patterns added to the include list (url_patterns). */
  addIncludePatterns?: string[];
  /** URL glob patterns added to the exclude list (exclude_patterns). */
  addExcludePatterns?: string[];
  maxDepth?: number;
  maxConcurrent?: number;
}

function checkUpdate(update: SourceUpdate): void {
  if (update.name !== undefined && (update.name.trim().length === 0 || update.name.length > 200)) {
    throw new ValidationError('name must be 1 to 200 characters.');
  }
  if (update.version !== undefined && update.version.length > 100) throw new ValidationError('version must be at most 100 characters.');
  if (update.baseUrl) {
    try {
      const url = new URL(update.baseUrl);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
    } catch {
      throw new ValidationError(`base URL must be an http(s) URL, got ${JSON.stringify(update.baseUrl)}.`);
    }
  }
  checkCrawlSetting('depth', CRAWL_FIELDS.max_depth.schema, update.maxDepth);
  checkCrawlSetting('concurrency', CRAWL_FIELDS.max_concurrent_crawls.schema, update.maxConcurrent);
  for (const p of [...(update.addIncludePatterns ?? []), ...(update.addExcludePatterns ?? [])]) {
    if (p.trim().length === 0 || p.length > 500) throw new ValidationError(`URL patterns must be 1 to 500 characters, got ${JSON.stringify(p)}.`);
  }
}

/** A crawl setting checked by the crawl request's own rule for that field, reported in its range. */
function checkCrawlSetting(label: string, rule: z.ZodType, value: number | undefined): void {
  if (value === undefined || rule.safeParse(value).success) return;
  const { minimum, maximum } = fieldFacts(rule);
  throw new ValidationError(`${label} must be ${minimum} to ${maximum}, got ${value}.`);
}

function merged(existing: unknown, added: string[] | undefined): string[] | undefined {
  if (added === undefined || added.length === 0) return undefined;
  const list = Array.isArray(existing) ? existing.filter((x): x is string => typeof x === 'string') : [];
  return [...new Set([...list, ...added.map((p) => p.trim())])];
}

/** Edits a source. Pattern lists only grow here; the crawl settings apply from the next recrawl. */
export async function updateSource(pool: pg.Pool, ref: string, update: SourceUpdate, options: { version?: string } = {}): Promise<SourceDetails> {
  checkUpdate(update);
  const { id } = await resolveSource(pool, ref, options.version);
  try {
    await withTransaction(pool, async (client) => {
      const { rows } = await client.query<{ crawl_config: CrawlSettings }>('SELECT crawl_config FROM sources WHERE id = $1 FOR UPDATE', [id]);
      const config: CrawlSettings = { ...(rows[0]?.crawl_config ?? {}) };
      const include = merged(config.url_patterns, update.addIncludePatterns);
      const exclude = merged(config.exclude_patterns, update.addExcludePatterns);
      if (include) config.url_patterns = include;
      if (exclude) config.exclude_patterns = exclude;
      if (update.maxDepth !== undefined) config.max_depth = update.maxDepth;
      if (update.maxConcurrent !== undefined) config.max_concurrent_crawls = update.maxConcurrent;
      await client.query(
        `UPDATE sources SET
           name = COALESCE($2, name), version = COALESCE($3, version), description = COALESCE($4, description),
           base_url = CASE WHEN $5 THEN $6 ELSE base_url END, crawl_config = $7, updated_at = now(),
           -- A recrawl starts from the base URL when no start URLs are stored: whoever set it named it (net/provenance.ts).
           typed_by_user = typed_by_user AND NOT ($5 AND NOT CASE WHEN jsonb_typeof($7::jsonb->'start_urls') = 'array'
                                                                  THEN jsonb_array_length($7::jsonb->'start_urls') > 0 ELSE false END)
         WHERE id = $1`,
        [id, update.name?.trim() ?? null, update.version?.trim() ?? null, update.description ?? null, update.baseUrl !== undefined, update.baseUrl ?? null, JSON.stringify(config)],
      );
    });
  } catch (error) {
    if ((error as { code?: string }).code === '23505') {
      throw new ConflictError(`A source named "${update.name ?? ref}" with version "${update.version ?? ''}" already exists.`, {
        hint: 'Pick another name or version, or delete the other source first.',
      });
    }
    throw error;
  }
  return getSource(pool, id);
}

export interface DeleteResult {
  id: string;
  name: string;
  version: string;
  documents: number;
  snippets: number;
  crawl_jobs: number;
  upload_jobs: number;
}

/**
 * Deletes a source and everything of it (documents, snippets, occurrences, relationships, crawl and upload
 * jobs, frontier rows, upload files) in ONE transaction, through the foreign keys' cascades: a crash leaves
 * either all of it or none. The counts are taken under the row lock, so they are what was deleted.
 */
export async function deleteSource(pool: pg.Pool, ref: string, options: { version?: string } = {}): Promise<DeleteResult> {
  const source = await resolveSource(pool, ref, options.version);
  return withTransaction(pool, async (client) => {
    const locked = await client.query('SELECT 1 FROM sources WHERE id = $1 FOR UPDATE', [source.id]);
    // Deleted meanwhile by someone else: nothing left to count or delete.
    if (locked.rowCount === 0) return { ...source, documents: 0, snippets: 0, crawl_jobs: 0, upload_jobs: 0 };
    const { rows } = await client.query<Omit<DeleteResult, 'id' | 'name' | 'version'>>(
      `SELECT (SELECT count(*)::int FROM documents WHERE source_id = $1) AS documents,
              (SELECT count(*)::int FROM snippets WHERE source_id = $1 AND kind = 'snippet') AS snippets,
              (SELECT count(*)::int FROM crawl_jobs WHERE source_id = $1) AS crawl_jobs,
              (SELECT count(*)::int FROM upload_jobs WHERE source_id = $1) AS upload_jobs`,
      [source.id],
    );
    await deleteLockedSource(client, source.id);
    return { ...source, ...rows[0]! };
  });
}

/**
 * Deletes a source the caller's transaction has locked, with everything of it (the cascades), its crawl jobs
 * and its crawls' queued page jobs: `sources delete` and a pack import's --replace both remove a source so.
 */
export async function deleteLockedSource(client: pg.ClientBase, sourceId: string): Promise<void> {
  // Its crawls' queued pages would otherwise stay in the queue after the crawls are gone.
  const crawls = await client.query<{ id: string }>('SELECT id FROM crawl_jobs WHERE source_id = $1', [sourceId]);
  await dropQueuedPages(
    client,
    crawls.rows.map((r) => r.id),
  );
  // Crawl jobs outlive a source only when a failed crawl removes its empty source (migration 018).
  await client.query('DELETE FROM crawl_jobs WHERE source_id = $1', [sourceId]);
  await client.query('DELETE FROM sources WHERE id = $1', [sourceId]);
}
