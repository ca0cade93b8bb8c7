import type pg from 'pg';
import { latestVersionFirst } from '../library-ref.js';
import { screeningFields, type ScreenedFields } from '../search/screening.js';
import { aliasOf, NAME_MATCH_THRESHOLD, nameScoreSql } from '../sources/match.js';

/**
 * The SQL behind the MCP tools that no other core module provides: fuzzy library lookup with a match score,
 * a library's snippets in browsing order, and a stored page by URL.
 */

export interface LibraryRow {
  id: string;
  name: string;
  version: string;
  description: string;
  base_url: string | null;
  kind: string;
  snippet_count: number;
  document_count: number;
  last_crawled_at: Date | null;
  /** How well the name matches the query, 0 to 1, in the bands of sources/match.ts MATCH_SCORES (1: exact). */
  score: number;
}

const LIBRARY_COLUMNS = `s.id, s.name, s.version, s.description, s.base_url, s.kind, s.snippet_count, s.document_count, s.last_crawled_at`;

// The match score (sources/match.ts) of the query $1 or its alias $5; 1 for everything when listing all.
const SCORE = `CASE WHEN $1 = '' THEN 1 ELSE ${nameScoreSql('$1', '$5')} END`;

/** Minimum score for a library to count as matching a non-empty query. */
export const LIBRARY_MATCH_THRESHOLD = NAME_MATCH_THRESHOLD;

export interface LibraryVersion {
  id: string;
  version: string;
  snippet_count: number;
  document_count: number;
  last_crawled_at: Date | null;
}

/** A library as search_libraries lists it: its latest version's row, and every indexed version, the latest first. */
export interface LibraryGroup extends LibraryRow {
  versions: LibraryVersion[];
}

interface MatchedName {
  key: string;
  score: number;
  total: number;
}

/**
 * Library names matching `query` (all when empty), best first, one per library however many versions it has,
 * with the total for pagination. Libraries with snippets come before empty ones (a crawl that has stored
 * nothing yet), whatever their scores. A library's score is its best version's (name, aliases, description).
 */
async function findLibraryNames(pool: pg.Pool, query: string, options: { limit: number; offset: number; threshold: number }): Promise<MatchedName[]> {
  const { rows } = await pool.query<MatchedName>(
    `WITH m AS (
       SELECT lower(s.name) AS key, (${SCORE})::float8 AS score, s.snippet_count, s.last_crawled_at
         FROM sources s
        WHERE $1 = '' OR (${SCORE}) >= $4
     )
     SELECT key, max(score) AS score, count(*) OVER ()::int AS total
       FROM m GROUP BY key
      ORDER BY sum(snippet_count) > 0 DESC, max(score) DESC, max(last_crawled_at) DESC NULLS LAST, sum(snippet_count) DESC, key
      LIMIT $2 OFFSET $3`,
    [query, options.limit, options.offset, options.threshold, aliasOf(query)],
  );
  return rows;
}

/** Every version of the libraries named `keys` (lower-cased names), grouped, the latest version first. */
async function librariesNamed(pool: pg.Pool, matched: MatchedName[]): Promise<LibraryGroup[]> {
  const { rows } = await pool.query<LibraryRow & { created_at: Date }>(`SELECT ${LIBRARY_COLUMNS}, s.created_at, 1::float8 AS score FROM sources s WHERE lower(s.name) = ANY($1::text[])`, [
    matched.map((m) => m.key),
  ]);
  return matched.flatMap(({ key, score }) => {
    const versions = rows.filter((r) => r.name.toLowerCase() === key).sort(latestVersionFirst);
    const latest = versions[0];
    if (!latest) return []; // deleted between the two reads
    const { created_at: _created, ...row } = latest;
    return [
      {
        ...row,
        score,
        versions: versions.map((v) => ({ id: v.id, version: v.version, snippet_count: v.snippet_count, document_count: v.document_count, last_crawled_at: v.last_crawled_at })),
      },
    ];
  });
}

/**
 * Libraries matching `query` (all when empty), best first, one entry per library with its versions (see
 * findLibraryNames for the order), and the number of libraries for pagination.
 */
export async function findLibraries(pool: pg.Pool, options: { query: string; limit: number; offset: number; threshold?: number }): Promise<{ items: LibraryGroup[]; total: number }> {
  const threshold = options.threshold ?? LIBRARY_MATCH_THRESHOLD;
  const query = options.query.trim();
  const matched = await findLibraryNames(pool, query, { limit: options.limit, offset: options.offset, threshold });
  const total = matched[0] ? matched[0].total : options.offset > 0 ? await countLibraries(pool, query, threshold) : 0;
  return { items: await librariesNamed(pool, matched), total };
}

/** Counts matching libraries when the requested page is past the end (the window count needs at least one row). */
async function countLibraries(pool: pg.Pool, query: string, threshold: number): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(`SELECT count(DISTINCT lower(s.name))::int AS n FROM sources s WHERE $1 = '' OR (${SCORE.replaceAll('$5', '$3')}) >= $2`, [
    query,
    threshold,
    aliasOf(query),
  ]);
  return rows[0]!.n;
}

export async function getLibraryById(pool: pg.Pool, id: string): Promise<LibraryRow | undefined> {
  const { rows } = await pool.query<LibraryRow>(`SELECT ${LIBRARY_COLUMNS}, 1::float8 AS score FROM sources s WHERE s.id = $1`, [id]);
  return rows[0];
}

/** Libraries whose name is exactly `name` (case-insensitive), optionally of one version; newest first. */
export async function getLibrariesByName(pool: pg.Pool, name: string, version?: string): Promise<LibraryRow[]> {
  const { rows } = await pool.query<LibraryRow>(
    `SELECT ${LIBRARY_COLUMNS}, 1::float8 AS score FROM sources s
      WHERE lower(s.name) = lower($1) AND ($2::text IS NULL OR s.version = $2)
      ORDER BY s.last_crawled_at DESC NULLS LAST, s.snippet_count DESC, s.version DESC`,
    [name, version ?? null],
  );
  return rows;
}

export interface LibrarySnippetRow extends ScreenedFields {
  id: number;
  title: string;
  description: string;
  language: string;
  code: string;
  filename: string | null;
  source_url: string;
  page_count: number;
}

/**
 * A library's snippets for browsing without a query: code repeated on many pages first (installation, the
 * canonical setup), then in page order, so a model paging through sees the essentials before the details.
 */
export async function listLibrarySnippets(pool: pg.Pool, sourceId: string, options: { limit: number; offset: number }): Promise<{ items: LibrarySnippetRow[]; total: number }> {
  const [items, total] = await Promise.all([
    pool.query<Omit<LibrarySnippetRow, keyof ScreenedFields> & { flags: string[]; flagged_passage: string | null }>(
      `SELECT s.id, s.title, s.description, s.language, s.code, s.filename, s.source_url, s.page_count, s.flags, s.flagged_passage
         FROM snippets s JOIN documents d ON d.id = s.document_id
        WHERE s.source_id = $1 AND s.kind = 'snippet'
        ORDER BY s.page_count DESC, d.url, s.position, s.id
        LIMIT $2 OFFSET $3`,
      [sourceId, options.limit, options.offset],
    ),
    pool.query<{ n: number }>("SELECT count(*)::int AS n FROM snippets WHERE source_id = $1 AND kind = 'snippet'", [sourceId]),
  ]);
  const rows = items.rows.map(({ flags, flagged_passage, ...row }) => ({ ...row, ...screeningFields({ flags, flagged_passage }) }));
  return { items: rows, total: total.rows[0]!.n };
}

export interface StoredPage {
  /** The document's id. */
  id: string;
  url: string;
  title: string;
  markdown: string;
  updated_at: Date;
  source_id: string;
  source_name: string;
  version: string;
  /** The page's screening finding: [] when screened and clean, null when stored before pages were screened. */
  flags: string[] | null;
  flagged_passage: string | null;
}

/**
 * The spellings a page's URL may be stored under: without the fragment (snippet URLs carry '#anchor', pages
 * do not), with and without a trailing slash, and over the other scheme. The given spelling comes first.
 */
export function urlVariants(raw: string): string[] {
  const variants: string[] = [raw.trim()];
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return variants;
  }
  url.hash = '';
  const bases = [url.toString()];
  if (url.pathname !== '/') {
    const toggled = new URL(url.toString());
    toggled.pathname = url.pathname.endsWith('/') ? url.pathname.replace(/\/+$/, '') : `${url.pathname}/`;
    bases.push(toggled.toString());
  }
  for (const base of bases) {
    variants.push(base);
    // "https://host" and "https://host/" are the same URL; the URL class always prints the slash.
    if (base.endsWith('/') && new URL(base).pathname === '/' && !new URL(base).search) variants.push(base.slice(0, -1));
  }
  for (const base of [...variants]) {
    if (base.startsWith('https://')) variants.push(`http://${base.slice('https://'.length)}`);
    else if (base.startsWith('http://')) variants.push(`https://${base.slice('http://'.length)}`);
  }
  return [...new Set(variants)];
}

/** The stored page for `url` under any of its spellings; the most exact spelling, then the newest copy. */
export async function getPageByUrl(pool: pg.Pool, url: string): Promise<StoredPage | undefined> {
  const variants = urlVariants(url);
  const { rows } = await pool.query<StoredPage>(
    `SELECT d.id, d.url, d.title, d.markdown, d.updated_at, d.source_id, s.name AS source_name, s.version, d.flags, d.flagged_passage
       FROM documents d JOIN sources s ON s.id = d.source_id
      WHERE d.url = ANY($1::text[])
      ORDER BY array_position($1::text[], d.url), d.updated_at DESC
      LIMIT 1`,
    [variants],
  );
  return rows[0];
}

/** A page section as stored (a row of kind 'section'): its breadcrumb and its markdown. */
export interface StoredSection {
  title: string;
  markdown: string;
}

/**
 * The stored section of the page at `pageUrl` (a stored document's URL) that `anchor` names, the one a search
 * result's URL points at: a section's own anchor, which its snippets link to as well. Undefined when the page
 * has no section by that anchor.
 */
export async function getSectionByAnchor(pool: pg.Pool, pageUrl: string, sourceId: string, anchor: string): Promise<StoredSection | undefined> {
  const { rows } = await pool.query<StoredSection>(
    `SELECT s.title, s.code AS markdown
       FROM documents d JOIN snippet_occurrences o ON o.document_id = d.id JOIN snippets s ON s.id = o.snippet_id
      WHERE d.source_id = $1 AND d.url = $2 AND s.kind = 'section' AND split_part(s.source_url, '#', 2) = $3
      ORDER BY o.position
      LIMIT 1`,
    [sourceId, pageUrl, anchor],
  );
  return rows[0];
}

/** The code of a page's snippets whose source URL is exactly `sourceUrl` (the page's URL and a fragment), in page order. */
export async function snippetCodesAt(pool: pg.Pool, documentId: string, sourceUrl: string, limit = 20): Promise<string[]> {
  const { rows } = await pool.query<{ code: string }>('SELECT code FROM snippets WHERE document_id = $1 AND source_url = $2 ORDER BY position LIMIT $3', [documentId, sourceUrl, limit]);
  return rows.map((r) => r.code);
}

/** Stored page URLs closest to `url`, for a not-found message (pages of the same host when it parses). */
export async function similarPageUrls(pool: pg.Pool, url: string, limit = 5): Promise<string[]> {
  let host = '';
  try {
    host = new URL(url).host;
  } catch {
    // Not a URL: compare against every stored page.
  }
  const { rows } = await pool.query<{ url: string }>(
    `SELECT d.url FROM documents d
      WHERE $2 = '' OR split_part(d.url, '/', 3) = $2
      ORDER BY public.similarity(d.url, $1) DESC, d.url
      LIMIT $3`,
    [url, host, limit],
  );
  return rows.map((r) => r.url);
}
