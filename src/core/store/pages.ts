import type pg from 'pg';
import { withTransaction } from '../db/transaction.js';
import type { ExtractedSnippet } from '../extract/types.js';
import { refreshSearchTermsAfterWrite } from '../search/lexicon.js';

/**
 * Writing one page and its snippets, shared by the crawl and upload pipelines. A page is written in ONE
 * transaction, so a crash never leaves half a page. Snippets are deduplicated by code hash within a source:
 * the first occurrence keeps the row, every page that shows the code gets a row in snippet_occurrences, and
 * page_count (a ranking signal) follows the occurrences.
 */

export type PageJob = { kind: 'crawl'; id: string } | { kind: 'upload'; id: string };

export interface PageWrite {
  sourceId: string;
  url: string;
  title: string;
  markdown: string;
  contentHash: string;
  etag?: string | null;
  lastModified?: string | null;
  job: PageJob;
  snippets: ExtractedSnippet[];
}

export interface PageWriteResult {
  documentId: string;
  /** Snippets this page added to the source (new code hashes). */
  snippetsInserted: number;
  /** Snippets on this page, including ones already stored from other pages. */
  snippetsOnPage: number;
  /** Snippet ids on this page, in page order (for the LLM stage). */
  snippetIds: number[];
}

/** Hook for work that must commit with the page (the search-term lexicon). Set by the search module. */
export type PageWriteHook = (client: pg.ClientBase, write: PageWrite, newSnippetIds: number[]) => Promise<void>;
const hooks: PageWriteHook[] = [];
export function onPageWrite(hook: PageWriteHook): void {
  if (!hooks.includes(hook)) hooks.push(hook);
}

async function upsertDocument(client: pg.ClientBase, w: PageWrite): Promise<{ id: string; existed: boolean }> {
  const { rows } = await client.query<{ id: string; existed: boolean }>(
    `INSERT INTO documents (source_id, url, title, markdown, content_hash, etag, last_modified, source_type, crawl_job_id, upload_job_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (source_id, url) DO UPDATE SET
       title = EXCLUDED.title, markdown = EXCLUDED.markdown, content_hash = EXCLUDED.content_hash,
       etag = EXCLUDED.etag, last_modified = EXCLUDED.last_modified, source_type = EXCLUDED.source_type,
       crawl_job_id = EXCLUDED.crawl_job_id, upload_job_id = EXCLUDED.upload_job_id, updated_at = now()
     RETURNING id, (xmax <> 0) AS existed`,
    [
      w.sourceId,
      w.url,
      w.title,
      w.markdown,
      w.contentHash,
      w.etag ?? null,
      w.lastModified ?? null,
      w.job.kind === 'crawl' ? 'crawled' : 'uploaded',
      w.job.kind === 'crawl' ? w.job.id : null,
      w.job.kind === 'upload' ? w.job.id : null,
    ],
  );
  return rows[0]!;
}

/**
 * Detaches a document from its snippets: occurrences go, snippets seen nowhere else go, and snippets whose
 * first occurrence was this page move to another page that still shows them. Returns snippets deleted.
 */
async function detachDocument(client: pg.ClientBase, documentId: string): Promise<number> {
  const { rows } = await client.query<{ snippet_id: number }>('DELETE FROM snippet_occurrences WHERE document_id = $1 RETURNING snippet_id', [
    documentId,
  ]);
  if (rows.length === 0) return 0;
  const ids = rows.map((r) => r.snippet_id);
  const deleted = await client.query(
    `DELETE FROM snippets s WHERE s.id = ANY($1::bigint[])
       AND NOT EXISTS (SELECT 1 FROM snippet_occurrences o WHERE o.snippet_id = s.id)`,
    [ids],
  );
  await client.query(
    `UPDATE snippets s SET
       page_count = c.n,
       document_id = CASE WHEN s.document_id = $2 THEN c.first_doc ELSE s.document_id END,
       source_url = CASE WHEN s.document_id = $2 THEN d.url ELSE s.source_url END,
       updated_at = now()
     FROM (SELECT snippet_id, count(*)::int AS n, (array_agg(document_id ORDER BY document_id))[1] AS first_doc
             FROM snippet_occurrences WHERE snippet_id = ANY($1::bigint[]) GROUP BY snippet_id) c
     JOIN documents d ON d.id = c.first_doc
     WHERE s.id = c.snippet_id`,
    [ids, documentId],
  );
  return deleted.rowCount ?? 0;
}

async function insertSnippets(client: pg.ClientBase, w: PageWrite, documentId: string): Promise<{ ids: number[]; inserted: number[] }> {
  // Within a page identical blocks are emitted once by the extractor; guard anyway, and sort by hash so that
  // concurrent pages of one source take the unique-index locks in the same order (no deadlocks).
  const unique = new Map<string, ExtractedSnippet>();
  for (const s of w.snippets) if (!unique.has(s.codeHash)) unique.set(s.codeHash, s);
  const list = [...unique.values()].sort((a, b) => (a.codeHash < b.codeHash ? -1 : a.codeHash > b.codeHash ? 1 : 0));
  if (list.length === 0) return { ids: [], inserted: [] };
  const inserted = await client.query<{ id: number; code_hash: string }>(
    `INSERT INTO snippets (source_id, document_id, title, description, language, code, code_hash, filename, source_url, position)
     SELECT $1, $2, t.title, t.description, t.language, t.code, t.code_hash, t.filename, t.source_url, t.position
       FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int[])
         AS t(title, description, language, code, code_hash, filename, source_url, position)
     ON CONFLICT (source_id, code_hash) DO NOTHING
     RETURNING id, code_hash`,
    [
      w.sourceId,
      documentId,
      list.map((s) => s.title),
      list.map((s) => s.description),
      list.map((s) => s.language),
      list.map((s) => s.code),
      list.map((s) => s.codeHash),
      list.map((s) => s.filename),
      list.map((s) => s.sourceUrl),
      list.map((s) => s.position),
    ],
  );
  const byHash = new Map(inserted.rows.map((r) => [r.code_hash, r.id]));
  const missing = list.filter((s) => !byHash.has(s.codeHash)).map((s) => s.codeHash);
  if (missing.length > 0) {
    const existing = await client.query<{ id: number; code_hash: string }>(
      'SELECT id, code_hash FROM snippets WHERE source_id = $1 AND code_hash = ANY($2::text[])',
      [w.sourceId, missing],
    );
    for (const r of existing.rows) byHash.set(r.code_hash, r.id);
  }
  const ordered = [...w.snippets]
    .sort((a, b) => a.position - b.position)
    .map((s) => byHash.get(s.codeHash))
    .filter((id): id is number => id !== undefined);
  const ids = [...new Set(ordered)];
  const positions = ids.map((id) => list.find((s) => byHash.get(s.codeHash) === id)?.position ?? 0);
  await client.query(
    `INSERT INTO snippet_occurrences (snippet_id, document_id, position)
     SELECT t.id, $1, t.position FROM unnest($2::bigint[], $3::int[]) AS t(id, position)
     ON CONFLICT DO NOTHING`,
    [documentId, ids, positions],
  );
  await client.query(
    `UPDATE snippets s SET page_count = (SELECT count(*) FROM snippet_occurrences o WHERE o.snippet_id = s.id)
      WHERE s.id = ANY($1::bigint[]) AND s.document_id <> $2`,
    [ids, documentId],
  );
  return { ids, inserted: inserted.rows.map((r) => r.id) };
}

export async function storePage(pool: pg.Pool, write: PageWrite): Promise<PageWriteResult> {
  const result = await storePageTransaction(pool, write);
  // After the commit, so that page writes never wait on one another's lexicon rows.
  if (result.snippetsInserted > 0) await refreshSearchTermsAfterWrite(pool);
  return result;
}

function storePageTransaction(pool: pg.Pool, write: PageWrite): Promise<PageWriteResult> {
  return withTransaction(pool, async (client) => {
    const doc = await upsertDocument(client, write);
    const removed = doc.existed ? await detachDocument(client, doc.id) : 0;
    const { ids, inserted } = await insertSnippets(client, write, doc.id);
    await client.query(
      `UPDATE sources SET snippet_count = snippet_count + $2, document_count = document_count + $3, updated_at = now() WHERE id = $1`,
      [write.sourceId, inserted.length - removed, doc.existed ? 0 : 1],
    );
    for (const hook of hooks) await hook(client, write, inserted);
    return { documentId: doc.id, snippetsInserted: inserted.length, snippetsOnPage: ids.length, snippetIds: ids };
  });
}

/** Removes a page that disappeared (404/410 on recrawl) with its snippets unless other pages show them. */
export async function removePage(pool: pg.Pool, sourceId: string, url: string): Promise<{ removed: boolean; snippetsRemoved: number }> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ id: string }>('SELECT id FROM documents WHERE source_id = $1 AND url = $2 FOR UPDATE', [sourceId, url]);
    const doc = rows[0];
    if (!doc) return { removed: false, snippetsRemoved: 0 };
    const snippetsRemoved = await detachDocument(client, doc.id);
    await client.query('DELETE FROM documents WHERE id = $1', [doc.id]);
    await client.query(
      'UPDATE sources SET snippet_count = snippet_count - $2, document_count = document_count - 1, updated_at = now() WHERE id = $1',
      [sourceId, snippetsRemoved],
    );
    return { removed: true, snippetsRemoved };
  });
}
