import type pg from 'pg';
import { NotFoundError, ValidationError } from '../errors.js';

export interface SnippetRecord {
  id: number;
  /** 'section': a page section (a search result of that kind), its code its markdown. Listings hold snippets only. */
  kind: 'snippet' | 'section';
  title: string;
  description: string;
  language: string;
  code: string;
  filename: string | null;
  source_url: string;
  source_id: string;
  source_name: string;
  version: string;
  page_count: number;
  position: number;
  llm_enhanced: boolean;
  related: Array<{ id: number; relationship: string; description: string }>;
  created_at: string;
  updated_at: string;
}

const SNIPPET_COLUMNS = `s.id, s.kind, s.title, s.description, s.language, s.code, s.filename, s.source_url, s.source_id,
  src.name AS source_name, src.version, s.page_count, s.position, s.llm_enhanced, s.created_at, s.updated_at`;

export async function getSnippet(pool: pg.Pool, idText: string): Promise<SnippetRecord> {
  if (!/^\d{1,15}$/.test(idText)) throw new ValidationError(`Snippet id must be a positive integer, got ${JSON.stringify(idText)}.`);
  const { rows } = await pool.query<Omit<SnippetRecord, 'related'>>(`SELECT ${SNIPPET_COLUMNS} FROM snippets s JOIN sources src ON src.id = s.source_id WHERE s.id = $1`, [Number(idText)]);
  const row = rows[0];
  if (!row) throw new NotFoundError(`Snippet ${idText} not found.`);
  const related = await pool.query<{ id: number; relationship: string; description: string }>(
    `SELECT target_snippet_id AS id, relationship_type AS relationship, description FROM snippet_relationships WHERE source_snippet_id = $1
     UNION ALL
     SELECT source_snippet_id AS id, relationship_type || ' (inverse)' AS relationship, description FROM snippet_relationships WHERE target_snippet_id = $1`,
    [row.id],
  );
  return { ...row, related: related.rows };
}

export async function listSourceSnippets(
  pool: pg.Pool,
  sourceId: string,
  options: { limit: number; offset: number; language?: string },
): Promise<{ items: Array<Omit<SnippetRecord, 'related'>>; total: number; limit: number; offset: number }> {
  const exists = await pool.query('SELECT 1 FROM sources WHERE id = $1', [sourceId]);
  if (exists.rowCount === 0) throw new NotFoundError(`Source ${sourceId} not found.`);
  const params: unknown[] = [sourceId, options.limit, options.offset];
  const languageClause = options.language ? `AND s.language = $${params.push(options.language)}` : '';
  const [items, total] = await Promise.all([
    pool.query<Omit<SnippetRecord, 'related'>>(
      `SELECT ${SNIPPET_COLUMNS} FROM snippets s JOIN sources src ON src.id = s.source_id
        WHERE s.source_id = $1 AND s.kind = 'snippet' ${languageClause} ORDER BY s.document_id, s.position, s.id LIMIT $2 OFFSET $3`,
      params,
    ),
    pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM snippets s WHERE s.source_id = $1 AND s.kind = 'snippet' ${options.language ? 'AND s.language = $2' : ''}`,
      options.language ? [sourceId, options.language] : [sourceId],
    ),
  ]);
  return { items: items.rows, total: total.rows[0]!.n, limit: options.limit, offset: options.offset };
}
