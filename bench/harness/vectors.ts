import { performance } from 'node:perf_hooks';
import type pg from 'pg';

// The search vectors' cost alone: what no write path can skip, since the vectors are computed from the text
// whatever brings it (a pack's vectors would be third-party input, so a pack carries none).

/** The generated column's expression as the catalog holds it, its columns unqualified. */
export async function generatedExpression(pool: pg.Pool, table: string): Promise<string> {
  const { rows } = await pool.query<{ expr: string }>(
    `SELECT pg_get_expr(d.adbin, d.adrelid) AS expr FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
      WHERE d.adrelid = $1::regclass AND a.attname = 'search_vector'`,
    [table],
  );
  return rows[0]!.expr;
}

/**
 * Seconds PostgreSQL takes to compute the search vectors of every stored row (documents, then snippets and
 * sections), by the generated columns' own expressions, writing nothing: the floor of any ingest, since the
 * vectors are computed from the text whatever brings it (a pack's vectors would be third-party input).
 */
export async function vectorFloorSeconds(pool: pg.Pool): Promise<number> {
  const docExpr = await generatedExpression(pool, 'documents');
  const unitExpr = await generatedExpression(pool, 'snippets');
  const started = performance.now();
  await pool.query(`SELECT sum(length(${docExpr})) FROM documents`);
  await pool.query(`SELECT sum(length(${unitExpr})) FROM snippets`);
  return (performance.now() - started) / 1000;
}
