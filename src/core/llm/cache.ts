import type pg from 'pg';
import type { BlockResult, RelationshipType } from './schema.js';

/**
 * Validated answers keyed by (code hash, model, prompt version). Global rather than per source: the same code
 * in another page, another source or a recrawl costs no call. Relationships are stored on the snippet they
 * start from and name their target by code hash, so they can be restored wherever both blocks appear again.
 */

export interface CachedRelationship {
  target_hash: string;
  type: RelationshipType;
  description: string;
}

export interface CachedResult extends BlockResult {
  relationships: CachedRelationship[];
}

export interface CacheKey {
  model: string;
  promptVersion: number;
}

/** Looks up answers for these code hashes and counts the hits. */
export async function readCache(db: pg.Pool | pg.ClientBase, key: CacheKey, codeHashes: string[]): Promise<Map<string, CachedResult>> {
  if (codeHashes.length === 0) return new Map();
  const { rows } = await db.query<{ code_hash: string; result: CachedResult }>(
    `UPDATE llm_cache SET hits = hits + 1
      WHERE model = $1 AND prompt_version = $2 AND code_hash = ANY($3::text[])
      RETURNING code_hash, result`,
    [key.model, key.promptVersion, [...new Set(codeHashes)].sort()],
  );
  return new Map(rows.map((r) => [r.code_hash, { ...r.result, relationships: r.result.relationships ?? [] }]));
}

export async function writeCache(db: pg.Pool | pg.ClientBase, key: CacheKey, entries: Array<{ codeHash: string; result: CachedResult; tokens: number }>): Promise<void> {
  if (entries.length === 0) return;
  const sorted = [...entries].sort((a, b) => (a.codeHash < b.codeHash ? -1 : a.codeHash > b.codeHash ? 1 : 0));
  // DO NOTHING: two workers answering the same code at once keep the first answer; both are valid.
  await db.query(
    `INSERT INTO llm_cache (code_hash, model, prompt_version, result, tokens)
     SELECT t.code_hash, $1, $2, t.result, t.tokens
       FROM unnest($3::text[], $4::jsonb[], $5::int[]) AS t(code_hash, result, tokens)
     ON CONFLICT (code_hash, model, prompt_version) DO NOTHING`,
    [key.model, key.promptVersion, sorted.map((e) => e.codeHash), sorted.map((e) => JSON.stringify(e.result)), sorted.map((e) => e.tokens)],
  );
}
