import type pg from 'pg';
import { UserError } from '../errors.js';
import { screenSnippetText, screenStoredPage } from '../extract/screen-result.js';
import type { ScreenResult } from '../extract/screening.js';
import { copyLine, copyLines } from './copy-text.js';
import { documentRowSchema, snippetRowSchema } from './format.js';
import type { PackSnippet } from './format.js';
import { readRowBatches } from './ndjson-file.js';

/**
 * The importer's row writes: each part is read back row by row (through its schema again), screened in JS, and
 * streamed through COPY; set-based INSERT ... SELECT statements then move the staged rows into place. Row ids
 * never come from the pack: pages are found by URL and snippets by code hash within the new source, through
 * temporary tables of the new ids (ON COMMIT DROP, indexed and ANALYZEd, so every join is planned on true
 * sizes rather than on the growing tables' stale statistics inside one long transaction).
 */

const READ_BATCH = 1000;

function invalid(message: string): UserError {
  return new UserError(message, { code: 'pack_invalid' });
}

/** Screening findings of a version's pages, by URL: only the flagged pages are kept. */
type PageFindings = Map<string, ScreenResult>;

export interface ImportJobs {
  crawl: string;
  upload: string;
}

interface Part {
  file: string;
  where: string;
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown }).code === '23505';
}

/**
 * Pages straight into documents (their ids are new: gen_random_uuid), each screened again as a crawled page
 * is, its finding stored with it: a pack is third-party text, whatever it claims. Returns the flagged pages'
 * findings.
 */
async function copyDocuments(client: pg.ClientBase, sourceId: string, jobs: ImportJobs, part: Part): Promise<PageFindings> {
  const findings: PageFindings = new Map();
  async function* lines(): AsyncGenerator<string> {
    for await (const batch of readRowBatches(part.file, documentRowSchema, part.where, READ_BATCH)) {
      for (const row of batch) {
        const found = screenStoredPage(row);
        if (found !== null) findings.set(row.url, found);
        const crawled = row.sourceType === 'crawled';
        // Flag names are identifiers (possible_prompt_injection): an array literal needs no quoting.
        const flags = `{${(found?.flags ?? []).join(',')}}`;
        yield copyLine([
          sourceId,
          row.url,
          row.title,
          row.markdown,
          row.contentHash,
          row.etag,
          row.lastModified,
          row.sourceType,
          crawled ? jobs.crawl : null,
          crawled ? null : jobs.upload,
          flags,
          found?.passage ?? null,
        ]);
      }
    }
  }
  try {
    await copyLines(
      client,
      'COPY documents (source_id, url, title, markdown, content_hash, etag, last_modified, source_type, crawl_job_id, upload_job_id, flags, flagged_passage) FROM STDIN',
      lines(),
    );
  } catch (error) {
    if (isUniqueViolation(error)) throw invalid(`${part.where} lists a page URL twice.`);
    throw error;
  }
  return findings;
}

/** The new pages' ids by URL, for the snippet and occurrence joins. */
async function stagePageIds(client: pg.ClientBase, sourceId: string): Promise<void> {
  await client.query('CREATE TEMP TABLE pack_pages (id uuid NOT NULL, url text NOT NULL) ON COMMIT DROP');
  await client.query('INSERT INTO pack_pages (id, url) SELECT id, url FROM documents WHERE source_id = $1', [sourceId]);
  await client.query('CREATE INDEX ON pack_pages (url)');
  await client.query('ANALYZE pack_pages');
}

const SNIPPET_STAGE = `CREATE TEMP TABLE pack_snippets (
  n bigint NOT NULL, kind text NOT NULL, code_hash text NOT NULL, title text, description text, language text, language_confidence text, code text,
  filename text, source_url text, position int, page_count int, llm_enhanced boolean, document_url text, flags text,
  flagged_passage text, occurrences json NOT NULL, relationships json) ON COMMIT DROP`;

const SNIPPET_COPY =
  'COPY pack_snippets (n, kind, code_hash, title, description, language, language_confidence, code, filename, source_url, position, page_count, llm_enhanced, document_url, flags, flagged_passage, occurrences, relationships) FROM STDIN';

// A lone surrogate (a well-formed pair is one code point, so never \p{Cs} under the u flag).
const LONE_SURROGATE = /\p{Cs}/gu;

/**
 * JSON for a json column. PostgreSQL refuses an escaped lone surrogate there; in a text column UTF-8 encoding
 * turns one into U+FFFD, so it is replaced the same way here.
 */
function jsonText(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? v.replace(LONE_SURROGATE, '\uFFFD') : v));
}

function snippetLine(n: number, row: PackSnippet, screening: ScreenResult | null): string {
  return copyLine([
    n,
    row.kind,
    row.codeHash,
    row.title,
    row.description,
    row.language,
    row.languageConfidence,
    row.code,
    row.filename,
    row.sourceUrl,
    row.position,
    row.pageCount,
    row.llmEnhanced,
    row.documentUrl,
    // Flag names are identifiers (possible_prompt_injection): a comma cannot be part of one.
    screening === null ? null : screening.flags.join(','),
    screening?.passage ?? null,
    jsonText(row.occurrences),
    row.relationships.length === 0 ? null : jsonText(row.relationships),
  ]);
}

interface StagedSnippets {
  snippets: number;
  occurrences: number;
  relationships: number;
}

/** Every snippet row into pack_snippets in the pack's order (n), screened by its own text, else by its page's finding. */
async function stageSnippets(client: pg.ClientBase, part: Part, pages: PageFindings): Promise<StagedSnippets> {
  const staged: StagedSnippets = { snippets: 0, occurrences: 0, relationships: 0 };
  async function* lines(): AsyncGenerator<string> {
    for await (const batch of readRowBatches(part.file, snippetRowSchema, part.where, READ_BATCH)) {
      for (const row of batch) {
        staged.occurrences += row.occurrences.length;
        staged.relationships += row.relationships.length;
        yield snippetLine(staged.snippets++, row, screenSnippetText(row) ?? pages.get(row.documentUrl) ?? null);
      }
    }
  }
  await client.query(SNIPPET_STAGE);
  await copyLines(client, SNIPPET_COPY, lines());
  await client.query('ANALYZE pack_snippets');
  return staged;
}

/** Snippets in the pack's order, so their new ids keep the exported order (ranking ties break by id). */
async function insertSnippets(client: pg.ClientBase, sourceId: string, where: string, staged: number): Promise<void> {
  await client.query('CREATE TEMP TABLE pack_snippet_ids (id bigint NOT NULL, code_hash text NOT NULL) ON COMMIT DROP');
  const result = await client.query(
    `WITH inserted AS (
       INSERT INTO snippets (source_id, document_id, title, description, language, language_confidence, code, code_hash, filename,
                             source_url, position, page_count, llm_enhanced, flags, flagged_passage, kind)
       SELECT $1, d.id, t.title, t.description, t.language, t.language_confidence, t.code, t.code_hash, t.filename,
              t.source_url, t.position, t.page_count, t.llm_enhanced, coalesce(string_to_array(t.flags, ','), '{}'), t.flagged_passage, t.kind
         FROM pack_snippets t JOIN pack_pages d ON d.url = t.document_url
        ORDER BY t.n
       ON CONFLICT (source_id, code_hash) DO NOTHING
       RETURNING id, code_hash)
     INSERT INTO pack_snippet_ids (id, code_hash) SELECT id, code_hash FROM inserted`,
    [sourceId],
  );
  if (result.rowCount !== staged) throw invalid(`${where} lists a code hash twice, or a snippet on a page the pack does not have.`);
  await client.query('CREATE INDEX ON pack_snippet_ids (code_hash)');
  await client.query('ANALYZE pack_snippet_ids');
}

async function insertOccurrences(client: pg.ClientBase, where: string, staged: number): Promise<void> {
  const result = await client.query(
    `INSERT INTO snippet_occurrences (snippet_id, document_id, position)
     SELECT i.id, d.id, o.position
       FROM pack_snippets t JOIN pack_snippet_ids i ON i.code_hash = t.code_hash
            CROSS JOIN LATERAL json_to_recordset(t.occurrences) AS o(url text, position int)
            JOIN pack_pages d ON d.url = o.url
     ON CONFLICT DO NOTHING`,
  );
  if (result.rowCount !== staged) throw invalid(`${where} lists an occurrence twice, or on a page the pack does not have.`);
}

async function insertRelationships(client: pg.ClientBase, where: string, staged: number): Promise<void> {
  if (staged === 0) return;
  const result = await client.query(
    `INSERT INTO snippet_relationships (source_snippet_id, target_snippet_id, relationship_type, description)
     SELECT s.id, g.id, r.type, r.description
       FROM pack_snippets t JOIN pack_snippet_ids s ON s.code_hash = t.code_hash
            CROSS JOIN LATERAL json_to_recordset(t.relationships) AS r(target text, type text, description text)
            JOIN pack_snippet_ids g ON g.code_hash = r.target
      WHERE t.relationships IS NOT NULL AND s.id <> g.id
     ON CONFLICT DO NOTHING`,
  );
  if (result.rowCount !== staged) throw invalid(`${where} has a relationship to a snippet the pack does not have.`);
}

/**
 * Writes a verified library's pages, snippets, occurrences and relationships for the new source, in the
 * caller's transaction. Anything the database refuses (a duplicate URL or code hash, an occurrence on a page
 * the pack lacks, a dangling relationship) throws pack_invalid, and the caller rolls the version back.
 */
export async function writeLibraryRows(client: pg.ClientBase, sourceId: string, jobs: ImportJobs, parts: { documents: Part; snippets: Part }): Promise<void> {
  const pages = await copyDocuments(client, sourceId, jobs, parts.documents);
  await stagePageIds(client, sourceId);
  const staged = await stageSnippets(client, parts.snippets, pages);
  await insertSnippets(client, sourceId, parts.snippets.where, staged.snippets);
  await insertOccurrences(client, parts.snippets.where, staged.occurrences);
  await insertRelationships(client, parts.snippets.where, staged.relationships);
}
