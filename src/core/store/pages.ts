import type pg from 'pg';
import { withTransaction } from '../db/transaction.js';
import type { ExtractedSection, ExtractedSnippet } from '../extract/types.js';

/**
 * Writing one page and its snippets, shared by the crawl and upload pipelines. A page is written in ONE
 * transaction, so a crash never leaves half a page. Snippets are deduplicated by code hash within a source:
 * one row per code, every page that shows the code gets a row in snippet_occurrences, and page_count (a
 * ranking signal) follows the occurrences. The row lives on its most specific page, whatever the crawl
 * order: a page where the code's nearest heading has an anchor before one where it has none, then the
 * smallest page, then the first URL (see rehomeSnippets). So Node's fs code links to fs.html#anchor, not to
 * all.html, the page of every module.
 *
 * A page's sections (extract/sections.ts) are rows of the same table with kind 'section' (migration 038): they
 * take the same way through deduplication, occurrences and homes, and are counted apart from snippets.
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
  /** The page's own screening finding (ExtractedPage.flags and flaggedPassage); absent when nothing was found. */
  flags?: readonly string[] | undefined;
  flaggedPassage?: string | undefined;
  /** The page's sections; none when absent (a producer that does not cut them). */
  sections?: ExtractedSection[];
}

export interface PageWriteResult {
  documentId: string;
  /** Snippets this page added to the source (new code hashes). */
  snippetsInserted: number;
  /** Snippets on this page, including ones already stored from other pages. */
  snippetsOnPage: number;
  /** Snippet ids on this page, in page order (for the LLM stage). */
  snippetIds: number[];
  /** Ids of the snippets this page added to the source (the ones the typo lexicon has not seen). */
  newSnippetIds: number[];
  /** Whether the page replaced a stored document of the same URL (a recrawl of a changed page). */
  replaced: boolean;
  /** Sections this page added to the source, and sections on this page (snippets above count code only). */
  sectionsInserted: number;
  sectionsOnPage: number;
}

/**
 * Work that must commit with the page, given by the caller of storePage (the crawler's frontier outcome and
 * new links, the upload's file counter, the LLM stage's language-confidence rows). Steps run in the order
 * given, after the page's rows are written and before the commit; a step that throws rolls the page back.
 */
export type InTransactionStep = (client: pg.ClientBase, write: PageWrite, newSnippetIds: number[]) => Promise<void>;

/**
 * Detaches a document from its snippets and sections: occurrences go, rows seen nowhere else go, and rows whose
 * home was this page move to the smallest page that still shows them. Returns the rows deleted, by kind.
 */
async function detachDocument(client: pg.ClientBase, documentId: string): Promise<Removed> {
  const { rows } = await client.query<{ snippet_id: number }>('DELETE FROM snippet_occurrences WHERE document_id = $1 RETURNING snippet_id', [documentId]);
  if (rows.length === 0) return { snippets: 0, sections: 0 };
  const ids = rows.map((r) => r.snippet_id);
  // Locked first, in id order, so that the delete below runs on a snapshot taken after every concurrent page
  // that is attaching one of these snippets (attachSnippets holds a key-share lock on it) has committed its
  // occurrence: a delete that waited on such a page would otherwise re-check its row but not its NOT EXISTS,
  // and take the other page's new occurrence with it.
  await client.query('SELECT 1 FROM snippets WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE', [ids]);
  const deleted = await client.query<{ kind: string }>(
    `DELETE FROM snippets s WHERE s.id = ANY($1::bigint[])
       AND NOT EXISTS (SELECT 1 FROM snippet_occurrences o WHERE o.snippet_id = s.id)
     RETURNING s.kind`,
    [ids],
  );
  await client.query(
    `UPDATE snippets s SET
       page_count = c.n,
       document_id = CASE WHEN s.document_id = $2 THEN c.first_doc ELSE s.document_id END,
       source_url = CASE WHEN s.document_id = $2 THEN d.url ELSE s.source_url END,
       updated_at = now()
     FROM (SELECT o.snippet_id, count(*)::int AS n, (array_agg(o.document_id ORDER BY octet_length(od.markdown), od.url))[1] AS first_doc
             FROM snippet_occurrences o JOIN documents od ON od.id = o.document_id
            WHERE o.snippet_id = ANY($1::bigint[]) GROUP BY o.snippet_id) c
     JOIN documents d ON d.id = c.first_doc
     WHERE s.id = c.snippet_id`,
    [ids, documentId],
  );
  const sections = deleted.rows.filter((r) => r.kind === 'section').length;
  return { snippets: deleted.rows.length - sections, sections };
}

interface Removed {
  snippets: number;
  sections: number;
}

/** A row of the snippets table as the page writes it: a snippet, or a section (kind 'section'). */
interface Unit extends Omit<ExtractedSnippet, 'languageConfidence' | 'tab' | 'section'> {
  kind: 'snippet' | 'section';
}

/** A section as its row: its breadcrumb as title, its markdown as code, its hash apart from code hashes. */
function sectionUnit(s: ExtractedSection): Unit {
  return {
    kind: 'section',
    title: s.title,
    description: s.description,
    language: s.language,
    code: s.text,
    codeHash: `s${s.hash}`,
    filename: null,
    position: s.position,
    sourceUrl: s.sourceUrl,
    ...(s.flags === undefined ? {} : { flags: s.flags }),
    ...(s.flaggedPassage === undefined ? {} : { flaggedPassage: s.flaggedPassage }),
  };
}

/** Unique by code hash, sorted by it: concurrent pages of one source take the unique-index locks in one order. */
function uniqueUnits(w: PageWrite): Unit[] {
  // Within a page identical blocks are emitted once by the extractor; guard anyway.
  const unique = new Map<string, Unit>();
  for (const s of w.snippets) if (!unique.has(s.codeHash)) unique.set(s.codeHash, { ...s, kind: 'snippet' });
  for (const section of w.sections ?? []) {
    const u = sectionUnit(section);
    if (!unique.has(u.codeHash)) unique.set(u.codeHash, u);
  }
  return [...unique.values()].sort((a, b) => (a.codeHash < b.codeHash ? -1 : a.codeHash > b.codeHash ? 1 : 0));
}

/**
 * Inserts the rows new to the source, each with its occurrence on this page, as CTEs `ins` and `occ`.
 * $1 is the source, $3..$10 the snippet columns, `extra` the parameters of the two screening columns (see
 * screeningValues) and of the kind; the document is `documentId` (a parameter or a column).
 */
function newSnippetsSql(documentId: string, extra: [string, string, string], from = '', where = ''): string {
  return `ins AS (
       INSERT INTO snippets (source_id, document_id, title, description, language, code, code_hash, filename, source_url, position, flags, flagged_passage, kind)
       SELECT $1, ${documentId}, t.title, t.description, t.language, t.code, t.code_hash, t.filename, t.source_url, t.position,
              ${FLAGS_SQL}, t.flagged_passage, t.kind
         FROM ${from}unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int[], ${extra[0]}::text[], ${extra[1]}::text[], ${extra[2]}::text[])
           AS t(title, description, language, code, code_hash, filename, source_url, position, flags, flagged_passage, kind)
        ${where}
       ON CONFLICT (source_id, code_hash) DO NOTHING
       RETURNING id, code_hash, position, kind),
     occ AS (
       INSERT INTO snippet_occurrences (snippet_id, document_id, position)
       SELECT ins.id, ${documentId}, ins.position FROM ${from}ins ON CONFLICT DO NOTHING)`;
}

function snippetValues(list: Unit[]): unknown[] {
  return [
    list.map((s) => s.title),
    list.map((s) => s.description),
    list.map((s) => s.language),
    list.map((s) => s.code),
    list.map((s) => s.codeHash),
    list.map((s) => s.filename),
    list.map((s) => s.sourceUrl),
    list.map((s) => s.position),
  ];
}

// A snippet's screening flags travel as one comma-joined string per snippet (unnest cannot take an array of
// arrays of different lengths); '' is no flags.
const FLAGS_SQL = "COALESCE(string_to_array(NULLIF(t.flags, ''), ','), '{}')";

/** The screening columns and the kind, parallel to snippetValues: flags comma-joined, the flagged passage or null. */
function screeningValues(list: Unit[]): unknown[] {
  return [list.map((s) => (s.flags ?? []).join(',')), list.map((s) => s.flaggedPassage ?? null), list.map((s) => s.kind)];
}

type InsertedSnippet = { id: number; code_hash: string; kind: string };

/**
 * Writes the document and, when it is new (a first crawl: the usual case), its new snippets and their
 * occurrences in the same statement. A document that existed gets its snippets after detaching the old ones.
 * The per-page statements are named (prepared once per connection): planning them cost a good part of
 * running them.
 */
async function upsertDocument(client: pg.ClientBase, w: PageWrite, list: Unit[]): Promise<{ id: string; existed: boolean; inserted: InsertedSnippet[] }> {
  const { rows } = await client.query<{ document_id: string; existed: boolean; id: number | null; code_hash: string | null; kind: string | null }>({
    name: 'docdex-store-document',
    text: `WITH doc AS (
       INSERT INTO documents (source_id, url, title, markdown, content_hash, etag, last_modified, source_type, crawl_job_id, upload_job_id, flags, flagged_passage)
       VALUES ($1, $2, $11, $12, $13, $14, $15, $16, $17, $18, $22::text[], $23)
       ON CONFLICT (source_id, url) DO UPDATE SET
         title = EXCLUDED.title, markdown = EXCLUDED.markdown, content_hash = EXCLUDED.content_hash,
         etag = EXCLUDED.etag, last_modified = EXCLUDED.last_modified, source_type = EXCLUDED.source_type,
         crawl_job_id = EXCLUDED.crawl_job_id, upload_job_id = EXCLUDED.upload_job_id, updated_at = now(),
         flags = EXCLUDED.flags, flagged_passage = EXCLUDED.flagged_passage
       RETURNING id, (xmax <> 0) AS existed),
     ${newSnippetsSql('doc.id', ['$19', '$20', '$21'], 'doc, ', 'WHERE NOT doc.existed')}
     SELECT doc.id AS document_id, doc.existed, ins.id, ins.code_hash, ins.kind FROM doc LEFT JOIN ins ON true`,
    values: [
      w.sourceId,
      w.url,
      ...snippetValues(list),
      w.title,
      w.markdown,
      w.contentHash,
      w.etag ?? null,
      w.lastModified ?? null,
      w.job.kind === 'crawl' ? 'crawled' : 'uploaded',
      w.job.kind === 'crawl' ? w.job.id : null,
      w.job.kind === 'upload' ? w.job.id : null,
      ...screeningValues(list),
      [...(w.flags ?? [])],
      w.flaggedPassage ?? null,
    ],
  });
  const first = rows[0]!;
  const inserted = rows.filter((r) => r.id !== null).map((r) => ({ id: r.id!, code_hash: r.code_hash!, kind: r.kind! }));
  return { id: first.document_id, existed: first.existed, inserted };
}

async function insertNewSnippets(client: pg.ClientBase, w: PageWrite, documentId: string, list: Unit[]): Promise<InsertedSnippet[]> {
  if (list.length === 0) return [];
  const { rows } = await client.query<InsertedSnippet>({
    name: 'docdex-store-snippets',
    text: `WITH ${newSnippetsSql('$2::uuid', ['$11', '$12', '$13'])} SELECT id, code_hash, kind FROM ins`,
    values: [w.sourceId, documentId, ...snippetValues(list), ...screeningValues(list)],
  });
  return rows;
}

/**
 * Completes the page's snippets: code another page of the source already showed gets one more occurrence.
 * Returns the page's snippet ids in page order, and the snippets found neither inserted nor stored (another
 * page deleted them as orphaned after this page's insert): the caller inserts those anew.
 */
async function attachSnippets(client: pg.ClientBase, w: PageWrite, documentId: string, list: Unit[], inserted: InsertedSnippet[]): Promise<{ ids: number[]; sectionIds: number[]; lost: Unit[] }> {
  const byHash = new Map(inserted.map((r) => [r.code_hash, r.id]));
  const missing = list.filter((s) => !byHash.has(s.codeHash));
  if (missing.length > 0) {
    // Its own statement (a fresh snapshot) so that it sees a snippet a concurrent page committed while the
    // insert waited for it. page_count is recounted as before; the statement's snapshot does not see its own
    // new occurrence, hence + 1. Key-share locks: a concurrent page that would delete one of these snippets as
    // orphaned waits for this page's occurrence (detachDocument); one whose delete already won leaves it out.
    const existing = await client.query<InsertedSnippet>(
      `WITH e AS (
         SELECT s.id, s.code_hash, t.position FROM snippets s JOIN unnest($2::text[], $3::int[]) AS t(code_hash, position) ON s.code_hash = t.code_hash
          WHERE s.source_id = $1 ORDER BY s.id FOR KEY SHARE OF s),
       occ AS (
         INSERT INTO snippet_occurrences (snippet_id, document_id, position) SELECT id, $4, position FROM e ON CONFLICT DO NOTHING
         RETURNING snippet_id),
       counted AS (
         UPDATE snippets s SET page_count = (SELECT count(*) FROM snippet_occurrences o WHERE o.snippet_id = s.id) + 1
           FROM occ WHERE s.id = occ.snippet_id AND s.document_id <> $4)
       SELECT id, code_hash FROM e`,
      [w.sourceId, missing.map((s) => s.codeHash), missing.map((s) => s.position), documentId],
    );
    for (const r of existing.rows) byHash.set(r.code_hash, r.id);
    await rehomeSnippets(client, w, documentId, missing);
  }
  const ordered = [...w.snippets]
    .sort((a, b) => a.position - b.position)
    .map((s) => byHash.get(s.codeHash))
    .filter((id): id is number => id !== undefined);
  const sectionIds = list.filter((u) => u.kind === 'section').flatMap((u) => byHash.get(u.codeHash) ?? []);
  return { ids: [...new Set(ordered)], sectionIds: [...new Set(sectionIds)], lost: list.filter((s) => !byHash.has(s.codeHash)) };
}

/**
 * Moves snippets this page shares with other pages here when this page is the more specific home: the
 * code's nearest heading has an anchor here and not at the current home, or equally so and this page is
 * smaller (bytes of markdown), or equally small and its URL sorts first. The comparison is a total order on
 * (page, anchor), so the home ends the same whatever order the pages are stored in. An LLM-written title
 * and description stay; the screening flags are the new home's, since they describe the page it is shown from.
 */
async function rehomeSnippets(client: pg.ClientBase, w: PageWrite, documentId: string, shared: Unit[]): Promise<void> {
  await client.query({
    name: 'docdex-store-rehome',
    text: `UPDATE snippets s SET
         document_id = $2, source_url = t.source_url, position = t.position, filename = t.filename,
         title = CASE WHEN s.llm_enhanced THEN s.title ELSE t.title END,
         description = CASE WHEN s.llm_enhanced THEN s.description ELSE t.description END,
         flags = ${FLAGS_SQL}, flagged_passage = t.flagged_passage,
         updated_at = now()
       FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $11::text[], $12::text[])
              AS t(code_hash, title, description, filename, source_url, position, flags, flagged_passage),
            documents d
      WHERE s.source_id = $1 AND s.code_hash = t.code_hash AND s.document_id <> $2 AND d.id = s.document_id
        AND (strpos(t.source_url, '#') = 0, $9::bigint, $10::text) < (strpos(s.source_url, '#') = 0, octet_length(d.markdown)::bigint, d.url)`,
    values: [
      w.sourceId,
      documentId,
      shared.map((s) => s.codeHash),
      shared.map((s) => s.title),
      shared.map((s) => s.description),
      shared.map((s) => s.filename),
      shared.map((s) => s.sourceUrl),
      shared.map((s) => s.position),
      Buffer.byteLength(w.markdown),
      w.url,
      ...screeningValues(shared).slice(0, 2),
    ],
  });
}

/**
 * Writes the page and its snippets, then the caller's `inTransaction` steps, in ONE transaction, and returns
 * what changed. Nothing else: what follows a committed page (index upkeep, LLM queueing) is the caller's
 * post-commit stages (core/pipeline/stages.ts).
 */
export async function storePage(pool: pg.Pool, write: PageWrite, inTransaction: readonly InTransactionStep[] = []): Promise<PageWriteResult> {
  const client = await pool.connect();
  try {
    // On a pipelining connection (the crawler's pool) BEGIN goes out with the first statement instead of
    // waiting for its own answer: one round trip less per page. BEGIN on an idle connection cannot fail.
    const begin = client.query('BEGIN');
    if (!client.pipeline) await begin;
    const list = uniqueUnits(write);
    const [doc] = await Promise.all([upsertDocument(client, write, list), begin]);
    let removed: Removed = { snippets: 0, sections: 0 };
    let newRows = doc.inserted;
    if (doc.existed) {
      removed = await detachDocument(client, doc.id);
      newRows = await insertNewSnippets(client, write, doc.id, list);
    }
    let { ids, sectionIds, lost } = await attachSnippets(client, write, doc.id, list, newRows);
    // A snippet another page deleted as orphaned between this page's insert and its attach is inserted anew.
    for (let attempt = 0; attempt < 3 && lost.length > 0; attempt++) {
      newRows = [...newRows, ...(await insertNewSnippets(client, write, doc.id, lost))];
      ({ ids, sectionIds, lost } = await attachSnippets(client, write, doc.id, list, newRows));
    }
    const inserted = newRows.filter((r) => r.kind !== 'section').map((r) => r.id);
    const sectionsInserted = newRows.length - inserted.length;
    for (const step of inTransaction) await step(client, write, inserted);
    await commitWithCounters(client, write.sourceId, { snippets: inserted.length - removed.snippets, sections: sectionsInserted - removed.sections, documents: doc.existed ? 0 : 1 });
    return {
      documentId: doc.id,
      snippetsInserted: inserted.length,
      snippetsOnPage: ids.length,
      snippetIds: ids,
      newSnippetIds: inserted,
      replaced: doc.existed,
      sectionsInserted,
      sectionsOnPage: sectionIds.length,
    };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/**
 * The source's counters change with every page of the source, so every page transaction locks that one row
 * until it commits. Taking the lock in the last statement and committing in the same round trip (one simple
 * query, hence literals instead of parameters) holds it for server time only: with a separate COMMIT, the
 * lock was held until the client's event loop got round to sending it, and concurrent pages queued on it
 * (with many pages in flight, that lock wait was what limited the crawl).
 */
async function commitWithCounters(client: pg.PoolClient, sourceId: string, delta: { snippets: number; sections: number; documents: number }): Promise<void> {
  if (!Object.values(delta).every(Number.isSafeInteger)) throw new Error(`bad counter delta ${JSON.stringify(delta)}`);
  await client.query(
    `UPDATE sources SET snippet_count = snippet_count + ${delta.snippets}, section_count = section_count + ${delta.sections},
            document_count = document_count + ${delta.documents}, updated_at = now()
      WHERE id = ${client.escapeLiteral(sourceId)}; COMMIT`,
  );
}

/** Removes a page that disappeared (404/410 on recrawl) with its snippets unless other pages show them. */
export async function removePage(pool: pg.Pool, sourceId: string, url: string): Promise<{ removed: boolean; snippetsRemoved: number }> {
  return withTransaction(pool, async (client) => removePageIn(client, sourceId, url));
}

/** removePage inside the caller's transaction (a git job drops the pages of removed files as it is created). */
export async function removePageIn(client: pg.ClientBase, sourceId: string, url: string): Promise<{ removed: boolean; snippetsRemoved: number }> {
  const { rows } = await client.query<{ id: string }>('SELECT id FROM documents WHERE source_id = $1 AND url = $2 FOR UPDATE', [sourceId, url]);
  const doc = rows[0];
  if (!doc) return { removed: false, snippetsRemoved: 0 };
  const removed = await detachDocument(client, doc.id);
  await client.query('DELETE FROM documents WHERE id = $1', [doc.id]);
  await client.query('UPDATE sources SET snippet_count = snippet_count - $2, section_count = section_count - $3, document_count = document_count - 1, updated_at = now() WHERE id = $1', [
    sourceId,
    removed.snippets,
    removed.sections,
  ]);
  return { removed: true, snippetsRemoved: removed.snippets };
}
