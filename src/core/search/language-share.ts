import type pg from 'pg';

type Db = Pick<pg.Pool, 'query'>;

/**
 * The share of all snippets in each language, as the planner's statistics have it (the most common values of
 * snippets.language, kept by ANALYZE and autovacuum): counting the rows of a language costs about as much as
 * the search it would steer at a million snippets. The shares only choose how a language filter is applied,
 * never which snippets match, so they are kept per database handle for a short while.
 */
const KEEP_MS = 30_000;

const kept = new WeakMap<object, { at: number; shares: ReadonlyMap<string, number> }>();

/** Fractions (0 to 1) by normalised language name; empty when the table was never analysed. */
export async function languageShares(db: Db, owner: object = db): Promise<ReadonlyMap<string, number>> {
  const now = Date.now();
  const hit = kept.get(owner);
  if (hit && now - hit.at <= KEEP_MS) return hit.shares;
  const { rows } = await db.query<{ vals: string[] | null; freqs: number[] | null }>(
    `SELECT most_common_vals::text::text[] AS vals, most_common_freqs AS freqs FROM pg_stats
      WHERE schemaname = current_schema() AND tablename = 'snippets' AND attname = 'language' AND NOT inherited`,
  );
  const vals = rows[0]?.vals ?? [];
  const freqs = rows[0]?.freqs ?? [];
  const shares = new Map(vals.map((v, i) => [v, Number(freqs[i] ?? 0)]));
  kept.set(owner, { at: now, shares });
  return shares;
}

/** Forgets the kept shares of this handle (after a bulk load, or in tests). */
export function clearLanguageShares(owner: object): void {
  kept.delete(owner);
}
