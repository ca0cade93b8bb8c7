import type pg from 'pg';
import type { PackDocument, PackSnippet, PackSource } from './format.js';

/**
 * The exporter's reads, all in one read-only snapshot of the caller's: pages in keyset batches over their
 * unique index (source_id, url), snippets through a cursor; no read holds more than a batch.
 */

const DOCUMENT_BATCH = 200;
const SNIPPET_BATCH = 2000;

interface SourceRow {
  name: string;
  version: string;
  description: string;
  base_url: string | null;
  kind: 'crawl' | 'upload' | 'git';
  crawl_config: Record<string, unknown>;
  metadata: Record<string, unknown>;
  aliases: string[];
  last_crawled_at: Date | null;
}

/** Where the pages came from, in the words of docs/pack-format.md. */
function originOf(row: SourceRow): Record<string, unknown> {
  const git = row.crawl_config.git as { remote?: unknown; commit?: unknown } | undefined;
  if (row.kind === 'git' && git) return { type: 'git', remote: git.remote ?? null, commit: git.commit ?? null };
  if (typeof row.metadata.origin === 'string') return { type: 'registry', spec: row.metadata.origin };
  if (row.kind === 'crawl') return { type: 'crawl', url: row.base_url };
  return { type: 'upload' };
}

export async function readPackSource(pool: pg.ClientBase, sourceId: string): Promise<PackSource> {
  const { rows } = await pool.query<SourceRow>(`SELECT name, version, description, base_url, kind, crawl_config, metadata, aliases, last_crawled_at FROM sources WHERE id = $1`, [sourceId]);
  const row = rows[0]!;
  return {
    name: row.name,
    version: row.version,
    description: row.description,
    kind: row.kind,
    baseUrl: row.base_url,
    aliases: row.aliases,
    origin: originOf(row),
    crawlConfig: row.crawl_config,
    metadata: row.metadata,
    lastCrawledAt: row.last_crawled_at?.toISOString() ?? null,
  };
}

export async function* readPackDocuments(pool: pg.ClientBase, sourceId: string): AsyncGenerator<PackDocument[]> {
  let after = '';
  for (;;) {
    const { rows } = await pool.query<PackDocument>(
      `SELECT url, title, markdown, content_hash AS "contentHash", etag, last_modified AS "lastModified", source_type AS "sourceType"
         FROM documents WHERE source_id = $1 AND url > $2 ORDER BY url LIMIT $3`,
      [sourceId, after, DOCUMENT_BATCH],
    );
    if (rows.length === 0) return;
    yield rows;
    after = rows[rows.length - 1]!.url;
  }
}

const SNIPPET_COLUMNS = `s.kind, s.code_hash AS "codeHash", s.title, s.description, s.language, s.language_confidence AS "languageConfidence",
  s.code, s.filename, s.source_url AS "sourceUrl", s.position, s.page_count AS "pageCount", s.llm_enhanced AS "llmEnhanced",
  d.url AS "documentUrl",
  (SELECT coalesce(json_agg(json_build_object('url', od.url, 'position', o.position) ORDER BY od.url), '[]')
     FROM snippet_occurrences o JOIN documents od ON od.id = o.document_id WHERE o.snippet_id = s.id) AS occurrences,
  (SELECT coalesce(json_agg(json_build_object('target', t.code_hash, 'type', r.relationship_type, 'description', r.description)
                            ORDER BY t.code_hash, r.relationship_type), '[]')
     FROM snippet_relationships r JOIN snippets t ON t.id = r.target_snippet_id
    WHERE r.source_snippet_id = s.id AND t.source_id = s.source_id) AS relationships`;

/**
 * A source's snippets in id order (the order they were stored, which breaks ranking ties, so an import keeps
 * it), through a cursor in the caller's transaction: one sort, then batches, whatever the source's size.
 */
export async function* readPackSnippets(client: pg.ClientBase, sourceId: string): AsyncGenerator<PackSnippet[]> {
  await client.query(
    `DECLARE pack_snippets NO SCROLL CURSOR FOR
       SELECT ${SNIPPET_COLUMNS} FROM snippets s JOIN documents d ON d.id = s.document_id WHERE s.source_id = $1 ORDER BY s.id`,
    [sourceId],
  );
  try {
    for (;;) {
      const { rows } = await client.query<PackSnippet>(`FETCH ${SNIPPET_BATCH} FROM pack_snippets`);
      if (rows.length === 0) return;
      yield rows;
    }
  } finally {
    await client.query('CLOSE pack_snippets');
  }
}

/** The ids of every source, for `export --all`, in name and version order. */
export async function allSourceIds(pool: pg.Pool): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>('SELECT id FROM sources ORDER BY name, version');
  return rows.map((r) => r.id);
}
