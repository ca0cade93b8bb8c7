import type pg from 'pg';
import { ContentDigest } from './digest.js';
import type { PackSource } from './format.js';

/** The importer's SQL about a version as a whole: its source row, import jobs, digest and counters (rows: install-copy.ts). */

/**
 * A new library's search-index entries stay in the indexes' pending lists for the whole transaction, up to
 * IMPORT_PENDING_LIST, and are merged in large passes (by this import when the list fills, else by the settle
 * that follows the import) rather than every 512 kB (core/db/connect.ts): each merge re-encodes the posting
 * lists of the common words, so fewer, larger merges write the same rows for less (migrations/039 has the
 * figures). 64 MB is what one merge sorts in memory at PostgreSQL's default maintenance_work_mem; a search
 * during an import reads at most that much pending list.
 */
const IMPORT_PENDING_LIST = '64MB';

export async function holdIndexEntriesForLibrary(client: pg.ClientBase): Promise<void> {
  await client.query(`SET LOCAL gin_pending_list_limit = '${IMPORT_PENDING_LIST}'`);
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

/** A new source from a pack: its URLs are the pack's word, so `typed_by_user` keeps its default, false (net/provenance.ts). */
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

/**
 * The source's counters and its import jobs' totals, once every row is in; a job with no page goes. The rows of
 * snippets.ndjson are snippets and sections (format 1.1): each is counted as its kind. Returns the snippets.
 */
export async function finishCounts(client: pg.ClientBase, sourceId: string, jobs: { crawl: string; upload: string }, documents: number): Promise<number> {
  const { rows } = await client.query<{ snippets: number }>(
    `UPDATE sources s SET document_count = $2, snippet_count = c.snippets, section_count = c.sections, updated_at = now()
       FROM (SELECT count(*) FILTER (WHERE kind = 'snippet')::int AS snippets, count(*) FILTER (WHERE kind = 'section')::int AS sections
               FROM snippets WHERE source_id = $1) c
      WHERE s.id = $1 RETURNING c.snippets`,
    [sourceId, documents],
  );
  const snippets = rows[0]?.snippets ?? 0;
  await client.query(
    `UPDATE crawl_jobs j SET pages_found = c.n, pages_crawled = c.n, snippets_stored = $2
       FROM (SELECT count(*)::int AS n FROM documents WHERE crawl_job_id = $1) c WHERE j.id = $1`,
    [jobs.crawl, snippets],
  );
  await client.query(`UPDATE upload_jobs j SET file_count = c.n, processed_files = c.n FROM (SELECT count(*)::int AS n FROM documents WHERE upload_job_id = $1) c WHERE j.id = $1`, [jobs.upload]);
  await client.query('DELETE FROM crawl_jobs WHERE id = $1 AND pages_crawled = 0', [jobs.crawl]);
  await client.query('DELETE FROM upload_jobs WHERE id = $1 AND file_count = 0', [jobs.upload]);
  return snippets;
}
