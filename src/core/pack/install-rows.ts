import type pg from 'pg';
import { UserError } from '../errors.js';
import { screenSnippetText, screenStoredPage } from '../extract/screen-result.js';
import type { ScreenResult } from '../extract/screening.js';
import { ContentDigest } from './digest.js';
import type { PackDocument, PackSnippet, PackSource } from './format.js';

/**
 * The importer's SQL: multi-row inserts through unnest arrays, one statement per batch, every value a
 * parameter. Row ids never come from the pack: pages are found by URL and snippets by code hash within the
 * new source, so relationships and occurrences join on those.
 */

function invalid(message: string): UserError {
  return new UserError(message, { code: 'pack_invalid' });
}

/** The installed version's content digest (docs/pack-format.md), read in keyset batches. */
export async function sourceDigest(client: pg.ClientBase, sourceId: string): Promise<string> {
  const digest = new ContentDigest();
  for (let after = ''; ;) {
    const { rows } = await client.query<{ url: string; content_hash: string }>('SELECT url, content_hash FROM documents WHERE source_id = $1 AND url > $2 ORDER BY url LIMIT 5000', [sourceId, after]);
    if (rows.length === 0) break;
    for (const r of rows) digest.addDocument(r.url, r.content_hash);
    after = rows[rows.length - 1]!.url;
  }
  for (let after = ''; ;) {
    const { rows } = await client.query<{ code_hash: string; title: string; description: string; language: string }>(
      'SELECT code_hash, title, description, language FROM snippets WHERE source_id = $1 AND code_hash > $2 ORDER BY code_hash LIMIT 5000',
      [sourceId, after],
    );
    if (rows.length === 0) break;
    for (const r of rows) digest.addSnippet(r.code_hash, r.title, r.description, r.language);
    after = rows[rows.length - 1]!.code_hash;
  }
  return digest.hex();
}

export async function findSourceForUpdate(client: pg.ClientBase, name: string, version: string): Promise<string | undefined> {
  const { rows } = await client.query<{ id: string }>('SELECT id FROM sources WHERE name = $1 AND version = $2 FOR UPDATE', [name, version]);
  return rows[0]?.id;
}

/** Removes an installed version for --replace: its crawl jobs explicitly (their source link is SET NULL), then the source's rows. */
export async function deleteSourceRows(client: pg.ClientBase, sourceId: string): Promise<void> {
  await client.query('DELETE FROM crawl_jobs WHERE source_id = $1', [sourceId]);
  await client.query('DELETE FROM sources WHERE id = $1', [sourceId]);
}

export async function insertSource(client: pg.ClientBase, source: PackSource, name: string, version: string, aliases: string[]): Promise<string> {
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO sources (name, version, description, base_url, kind, crawl_config, metadata, aliases, last_crawled_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, ARRAY(SELECT a FROM unnest($8::text[]) AS a WHERE lower(a) <> lower($1)), $9) RETURNING id`,
    [name, version, source.description, source.baseUrl, source.kind, JSON.stringify(source.crawlConfig), JSON.stringify(source.metadata), aliases, source.lastCrawledAt],
  );
  return rows[0]!.id;
}

/** The completed jobs an imported source's pages belong to (a page names its crawl or upload job). */
export async function insertImportJobs(client: pg.ClientBase, sourceId: string, name: string, version: string, startUrls: string[]): Promise<{ crawl: string; upload: string }> {
  const crawl = await client.query<{ id: string }>(
    `INSERT INTO crawl_jobs (source_id, name, version, status, start_urls, metadata, started_at, completed_at)
     VALUES ($1, $2, $3, 'completed', $4, '{"imported": true}', now(), now()) RETURNING id`,
    [sourceId, name, version, startUrls],
  );
  const upload = await client.query<{ id: string }>(
    `INSERT INTO upload_jobs (name, source_id, source_type, status, started_at, completed_at) VALUES ($1, $2, 'pack', 'completed', now(), now()) RETURNING id`,
    [name, sourceId],
  );
  return { crawl: crawl.rows[0]!.id, upload: upload.rows[0]!.id };
}

/** Screening findings of a version's pages, by URL: only the flagged pages are kept. */
export type PageFindings = Map<string, ScreenResult>;

/**
 * Inserts a batch of pages and adds the flagged ones to `findings`: a pack is third-party text, screened again
 * as crawled pages are, whatever it claims.
 */
export async function insertDocuments(client: pg.ClientBase, sourceId: string, jobs: { crawl: string; upload: string }, rows: PackDocument[], findings: PageFindings): Promise<void> {
  for (const row of rows) {
    const found = screenStoredPage(row);
    if (found !== null) findings.set(row.url, found);
  }
  const result = await client.query(
    `INSERT INTO documents (source_id, url, title, markdown, content_hash, etag, last_modified, source_type, crawl_job_id, upload_job_id)
     SELECT $1, t.url, t.title, t.markdown, t.content_hash, t.etag, t.last_modified, t.source_type,
            CASE WHEN t.source_type = 'crawled' THEN $2::uuid END, CASE WHEN t.source_type = 'uploaded' THEN $3::uuid END
       FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
         AS t(url, title, markdown, content_hash, etag, last_modified, source_type)
     ON CONFLICT (source_id, url) DO NOTHING`,
    [
      sourceId,
      jobs.crawl,
      jobs.upload,
      rows.map((r) => r.url),
      rows.map((r) => r.title),
      rows.map((r) => r.markdown),
      rows.map((r) => r.contentHash),
      rows.map((r) => r.etag),
      rows.map((r) => r.lastModified),
      rows.map((r) => r.sourceType),
    ],
  );
  if (result.rowCount !== rows.length) throw invalid('documents.ndjson lists a page URL twice.');
}

/** Each snippet's screening: its own text first, else its page's finding (as extraction decides). */
function screeningOf(rows: PackSnippet[], pages: PageFindings): Array<ScreenResult | null> {
  return rows.map((r) => screenSnippetText(r) ?? pages.get(r.documentUrl) ?? null);
}

/** Snippets in the pack's order, so their new ids keep the exported order (ranking ties break by id). */
export async function insertSnippets(client: pg.ClientBase, sourceId: string, rows: PackSnippet[], pages: PageFindings): Promise<void> {
  const screening = screeningOf(rows, pages);
  const result = await client.query(
    `INSERT INTO snippets (source_id, document_id, title, description, language, language_confidence, code, code_hash, filename,
                           source_url, position, page_count, llm_enhanced, flags, flagged_passage)
     SELECT $1, d.id, t.title, t.description, t.language, t.language_confidence, t.code, t.code_hash, t.filename,
            t.source_url, t.position, t.page_count, t.llm_enhanced,
            coalesce(string_to_array(t.flags, ','), '{}'), t.flagged_passage
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int[], $11::int[], $12::boolean[], $13::text[], $14::text[], $15::text[])
              WITH ORDINALITY AS t(title, description, language, language_confidence, code, code_hash, filename, source_url, position, page_count, llm_enhanced, document_url, flags, flagged_passage, n)
       JOIN documents d ON d.source_id = $1 AND d.url = t.document_url
      ORDER BY t.n
     ON CONFLICT (source_id, code_hash) DO NOTHING`,
    [
      sourceId,
      rows.map((r) => r.title),
      rows.map((r) => r.description),
      rows.map((r) => r.language),
      rows.map((r) => r.languageConfidence),
      rows.map((r) => r.code),
      rows.map((r) => r.codeHash),
      rows.map((r) => r.filename),
      rows.map((r) => r.sourceUrl),
      rows.map((r) => r.position),
      rows.map((r) => r.pageCount),
      rows.map((r) => r.llmEnhanced),
      rows.map((r) => r.documentUrl),
      // Flag names are identifiers (possible_prompt_injection): a comma cannot be part of one.
      screening.map((s) => (s === null ? null : s.flags.join(','))),
      screening.map((s) => s?.passage ?? null),
    ],
  );
  if (result.rowCount !== rows.length) throw invalid('snippets.ndjson lists a code hash twice, or a snippet on a page the pack does not have.');
  await insertOccurrences(client, sourceId, rows);
  await stageRelationships(client, rows);
}

async function insertOccurrences(client: pg.ClientBase, sourceId: string, rows: PackSnippet[]): Promise<void> {
  const occurrences = rows.flatMap((r) => r.occurrences.map((o) => ({ hash: r.codeHash, url: o.url, position: o.position })));
  const result = await client.query(
    `INSERT INTO snippet_occurrences (snippet_id, document_id, position)
     SELECT s.id, d.id, t.position FROM unnest($2::text[], $3::text[], $4::int[]) AS t(code_hash, url, position)
       JOIN snippets s ON s.source_id = $1 AND s.code_hash = t.code_hash
       JOIN documents d ON d.source_id = $1 AND d.url = t.url
     ON CONFLICT DO NOTHING`,
    [sourceId, occurrences.map((o) => o.hash), occurrences.map((o) => o.url), occurrences.map((o) => o.position)],
  );
  if (result.rowCount !== occurrences.length) throw invalid('snippets.ndjson lists an occurrence twice, or on a page the pack does not have.');
}

/** Relationships may point at snippets of a later batch: they wait in a temporary table until every snippet is in. */
export async function createRelationshipStage(client: pg.ClientBase): Promise<void> {
  await client.query('CREATE TEMP TABLE pack_relationships (source_hash text, target_hash text, type text, description text) ON COMMIT DROP');
}

async function stageRelationships(client: pg.ClientBase, rows: PackSnippet[]): Promise<void> {
  const links = rows.flatMap((r) => r.relationships.map((l) => ({ from: r.codeHash, ...l })));
  if (links.length === 0) return;
  await client.query('INSERT INTO pack_relationships SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])', [
    links.map((l) => l.from),
    links.map((l) => l.target),
    links.map((l) => l.type),
    links.map((l) => l.description),
  ]);
}

export async function insertRelationships(client: pg.ClientBase, sourceId: string): Promise<void> {
  const { rows } = await client.query<{ staged: number; inserted: number }>(
    `WITH ins AS (
       INSERT INTO snippet_relationships (source_snippet_id, target_snippet_id, relationship_type, description)
       SELECT s.id, t.id, r.type, r.description FROM pack_relationships r
         JOIN snippets s ON s.source_id = $1 AND s.code_hash = r.source_hash
         JOIN snippets t ON t.source_id = $1 AND t.code_hash = r.target_hash
        WHERE s.id <> t.id
       ON CONFLICT DO NOTHING RETURNING 1)
     SELECT (SELECT count(*)::int FROM pack_relationships) AS staged, (SELECT count(*)::int FROM ins) AS inserted`,
    [sourceId],
  );
  if (rows[0]!.staged !== rows[0]!.inserted) throw invalid('snippets.ndjson has a relationship to a snippet the pack does not have.');
}

/** The source's counters and its import jobs' totals, once every row is in; a job with no page goes. */
export async function finishCounts(client: pg.ClientBase, sourceId: string, jobs: { crawl: string; upload: string }, documents: number, snippets: number): Promise<void> {
  await client.query('UPDATE sources SET document_count = $2, snippet_count = $3, updated_at = now() WHERE id = $1', [sourceId, documents, snippets]);
  await client.query(
    `UPDATE crawl_jobs j SET pages_found = c.n, pages_crawled = c.n, snippets_stored = $2
       FROM (SELECT count(*)::int AS n FROM documents WHERE crawl_job_id = $1) c WHERE j.id = $1`,
    [jobs.crawl, snippets],
  );
  await client.query(`UPDATE upload_jobs j SET file_count = c.n, processed_files = c.n FROM (SELECT count(*)::int AS n FROM documents WHERE upload_job_id = $1) c WHERE j.id = $1`, [jobs.upload]);
  await client.query('DELETE FROM crawl_jobs WHERE id = $1 AND pages_crawled = 0', [jobs.crawl]);
  await client.query('DELETE FROM upload_jobs WHERE id = $1 AND file_count = 0', [jobs.upload]);
}
