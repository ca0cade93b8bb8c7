import type pg from 'pg';
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
  /** 1 for an exact name match (case and punctuation ignored), else a pg_trgm similarity below 1. */
  score: number;
}

const LIBRARY_COLUMNS = `s.id, s.name, s.version, s.description, s.base_url, s.kind, s.snippet_count, s.document_count, s.last_crawled_at`;

// The match score (sources/match.ts) of the query $1 or its alias $5; 1 for everything when listing all.
const SCORE = `CASE WHEN $1 = '' THEN 1 ELSE ${nameScoreSql('$1', '$5')} END`;

/** Minimum score for a library to count as matching a non-empty query. */
export const LIBRARY_MATCH_THRESHOLD = NAME_MATCH_THRESHOLD;

/**
 * Libraries matching `query` (all when empty), best first, with the total for pagination. Libraries with
 * snippets come before empty ones (a crawl that has stored nothing yet), whatever their scores.
 */
export async function findLibraries(pool: pg.Pool, options: { query: string; limit: number; offset: number; threshold?: number }): Promise<{ items: LibraryRow[]; total: number }> {
  const threshold = options.threshold ?? LIBRARY_MATCH_THRESHOLD;
  const query = options.query.trim();
  const { rows } = await pool.query<LibraryRow & { total: number }>(
    `SELECT * FROM (
       SELECT ${LIBRARY_COLUMNS}, (${SCORE})::float8 AS score, count(*) OVER () AS total
         FROM sources s
        WHERE $1 = '' OR (${SCORE}) >= $4
     ) m
     ORDER BY m.snippet_count > 0 DESC, m.score DESC, m.last_crawled_at DESC NULLS LAST, m.snippet_count DESC, lower(m.name), m.version DESC
     LIMIT $2 OFFSET $3`,
    [query, options.limit, options.offset, threshold, aliasOf(query)],
  );
  const total = rows[0] ? Number(rows[0].total) : options.offset > 0 ? await countLibraries(pool, query, threshold) : 0;
  return { items: rows.map(({ total: _total, ...row }) => row), total };
}

/** Counts matches when the requested page is past the end (the window count needs at least one row). */
async function countLibraries(pool: pg.Pool, query: string, threshold: number): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM sources s WHERE $1 = '' OR (${SCORE.replaceAll('$5', '$3')}) >= $2`, [query, threshold, aliasOf(query)]);
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

export interface LibrarySnippetRow {
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
    pool.query<LibrarySnippetRow>(
      `SELECT s.id, s.title, s.description, s.language, s.code, s.filename, s.source_url, s.page_count
         FROM snippets s JOIN documents d ON d.id = s.document_id
        WHERE s.source_id = $1
        ORDER BY s.page_count DESC, d.url, s.position, s.id
        LIMIT $2 OFFSET $3`,
      [sourceId, options.limit, options.offset],
    ),
    pool.query<{ n: number }>('SELECT count(*)::int AS n FROM snippets WHERE source_id = $1', [sourceId]),
  ]);
  return { items: items.rows, total: total.rows[0]!.n };
}

export interface StoredPage {
  url: string;
  title: string;
  markdown: string;
  updated_at: Date;
  source_id: string;
  source_name: string;
  version: string;
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
    `SELECT d.url, d.title, d.markdown, d.updated_at, d.source_id, s.name AS source_name, s.version
       FROM documents d JOIN sources s ON s.id = d.source_id
      WHERE d.url = ANY($1::text[])
      ORDER BY array_position($1::text[], d.url), d.updated_at DESC
      LIMIT 1`,
    [variants],
  );
  return rows[0];
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
