import type pg from 'pg';
import { withTransaction } from '../db/transaction.js';
import type { RelationshipType } from './schema.js';

/** The SQL the enhancer needs: reading a page's snippets, writing enhanced values and relationships. */

export interface PageSnippetRow {
  id: number;
  title: string;
  description: string;
  language: string;
  language_confidence: string | null;
  code: string;
  code_hash: string;
  position: number;
  llm_enhanced: boolean;
}

export interface PageRow {
  id: string;
  url: string;
  title: string;
  markdown: string;
}

export async function loadPage(db: pg.Pool, documentId: string): Promise<PageRow | null> {
  const { rows } = await db.query<PageRow>('SELECT id, url, title, markdown FROM documents WHERE id = $1', [documentId]);
  return rows[0] ?? null;
}

/**
 * The code snippets still present (a recrawl may have replaced the page since the job was queued), in page
 * order. Sections (kind 'section', migration 038) share the table but are never the model's to describe.
 */
export async function loadSnippets(db: pg.Pool, snippetIds: number[]): Promise<PageSnippetRow[]> {
  if (snippetIds.length === 0) return [];
  const { rows } = await db.query<PageSnippetRow>(
    `SELECT id, title, description, language, language_confidence, code, code_hash, position, llm_enhanced
       FROM snippets WHERE id = ANY($1::bigint[]) AND kind = 'snippet'`,
    [snippetIds],
  );
  const order = new Map(snippetIds.map((id, i) => [id, i]));
  return rows.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
}

export interface SnippetUpdate {
  id: number;
  title: string | null;
  description: string | null;
  language: string | null;
}

/**
 * Writes enhanced values (null keeps the stored value) and marks the rows enhanced. The search vector is a
 * generated column over title, description and code, so it follows; the search-term trigger picks up new words.
 * The new entries wait in the search index's pending list: the caller tells index upkeep (enhance.ts).
 */
export async function applyUpdates(db: pg.Pool, updates: SnippetUpdate[], andThen?: (client: pg.ClientBase, enhanced: number) => Promise<void>): Promise<number> {
  if (!andThen) return updateSnippets(db, updates);
  // The caller's step (the page's outcome for its job) commits with the rows: a reader never sees the page's
  // snippets enhanced while the page is not yet recorded as done, which let a job complete one page early.
  return withTransaction(db, async (client) => {
    const enhanced = await updateSnippets(client, updates);
    await andThen(client, enhanced);
    return enhanced;
  });
}

async function updateSnippets(db: pg.Pool | pg.ClientBase, updates: SnippetUpdate[]): Promise<number> {
  if (updates.length === 0) return 0;
  // Sorted ids: concurrent workers lock rows in the same order.
  const sorted = [...updates].sort((a, b) => a.id - b.id);
  const { rowCount } = await db.query(
    `UPDATE snippets s SET
       title = coalesce(t.title, s.title),
       description = coalesce(t.description, s.description),
       language = coalesce(t.language, s.language),
       language_confidence = CASE WHEN t.language IS NULL THEN s.language_confidence ELSE 'llm' END,
       llm_enhanced = true,
       updated_at = now()
     FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) AS t(id, title, description, language)
     WHERE s.id = t.id`,
    [sorted.map((u) => u.id), sorted.map((u) => u.title), sorted.map((u) => u.description), sorted.map((u) => u.language)],
  );
  return rowCount ?? 0;
}

export interface RelationshipRow {
  sourceId: number;
  targetId: number;
  type: RelationshipType;
  description: string;
}

/** Inserts relationships between snippets that still exist; returns how many were new. */
export async function insertRelationships(db: pg.Pool, relationships: RelationshipRow[]): Promise<number> {
  const list = relationships.filter((r) => r.sourceId !== r.targetId);
  if (list.length === 0) return 0;
  try {
    const { rowCount } = await db.query(
      `INSERT INTO snippet_relationships (source_snippet_id, target_snippet_id, relationship_type, description)
       SELECT t.source_id, t.target_id, t.type, t.description
         FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[]) AS t(source_id, target_id, type, description)
        WHERE EXISTS (SELECT 1 FROM snippets WHERE id = t.source_id) AND EXISTS (SELECT 1 FROM snippets WHERE id = t.target_id)
       ON CONFLICT (source_snippet_id, target_snippet_id, relationship_type) DO NOTHING`,
      [list.map((r) => r.sourceId), list.map((r) => r.targetId), list.map((r) => r.type), list.map((r) => r.description)],
    );
    return rowCount ?? 0;
  } catch (error) {
    // A recrawl deleted one of the snippets between the check and the insert: the relationship went with it.
    if ((error as { code?: string }).code === '23503') return 0;
    throw error;
  }
}
