import type pg from 'pg';
import { withTransaction } from '../db/transaction.js';
import { editDistance } from '../edit-distance.js';
import { refreshSearchTerms } from './lexicon.js';

/**
 * Typo tolerance against the index's own vocabulary: search_terms holds the stemmed lexemes of every snippet's
 * search vector (queued by a trigger on snippets and folded in by lexicon.ts, see migrations/010). A query
 * word whose stem no snippet contains is expanded with the closest words that do: edit distance 1 (Damerau: a swap of neighbours counts
 * as one edit, so "gahter" → "gather"), found by stemming every one-edit variant of the word and looking the
 * stems up, which is exact and costs one index probe per variant; for longer words, edit distance 2 on the
 * stem through the trigram index. The original word always stays in the query, so a correction can add matches
 * but never lose one. Words the lexicon knows are left alone, however rare: checking them would cost every
 * query with a specific name the variant lookups.
 */

// Shorter words have too many one-edit neighbours for a correction to be a good guess ("cat" → "car", "cut").
const MIN_WORD = 4;
// Two edits only on longer words: on a 5-letter word two edits can turn any word into many others.
const MIN_WORD_TWO_EDITS = 7;
// A second correction is kept when it is at least this common relative to the best one (ambiguous typo).
const SECOND_RATIO = 0.5;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz';
// Queued snippets a search folds into the lexicon before correcting (about a second's work at most).
const SEARCH_REFRESH_ROWS = 20_000;

/** Every string one edit (deletion, neighbour swap, substitution, insertion) away from `word`. */
export function editsOne(word: string): string[] {
  const out = new Set<string>();
  for (let i = 0; i <= word.length; i++) {
    const a = word.slice(0, i);
    const b = word.slice(i);
    if (b.length > 0) out.add(a + b.slice(1));
    if (b.length > 1) out.add(a + b[1]! + b[0]! + b.slice(2));
    for (const c of ALPHABET) {
      if (b.length > 0) out.add(a + c + b.slice(1));
      out.add(a + c + b);
    }
  }
  out.delete(word);
  return [...out];
}

/** True when b is a with two neighbouring letters swapped: the most common typing slip. */
export function isSwap(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return i < a.length - 1 && a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2);
}

// A swap ranks ahead of other single edits: "chani" is "chain" mistyped far more often than "chang(e)".
const SWAP_DISTANCE = 0.5;

function correctable(word: string): boolean {
  return word.length >= MIN_WORD && word.length <= 32 && /^[a-z]+$/.test(word);
}

type Db = pg.Pool | pg.ClientBase;

export interface WordStats {
  /**
   * Stem (lexeme) of each word; null for stop words. `count`: snippets containing it (0 when unknown); `code`:
   * those holding it in their code.
   */
  words: Map<string, { stem: string | null; count: number; code: number }>;
  /** Snippets in the index, to turn counts into shares. */
  total: number;
  /** Snippets are waiting to be folded into the lexicon: a word it lacks may only be new. */
  queued: boolean;
}

// Every search looks its words up in the lexicon before it can plan, a round trip of its own. Words the lexicon
// knows are kept for a short while per database handle: their counts only steer how the search runs (how common
// a term is) and which spellings typo correction offers, never which snippets match; a word whose last snippet
// went (doc_count 0, migration 029) is at most WORD_CACHE_MS late to be forgotten. Words the lexicon lacks are never kept, so a new word or a typo is always checked afresh.
const WORD_CACHE_MS = 30_000;
const WORD_CACHE_MAX = 20_000;

interface WordCache {
  words: Map<string, { stem: string | null; count: number; code: number; at: number }>;
  total: number;
}

const wordCaches = new WeakMap<object, WordCache>();

/** Forgets the kept word counts of this database handle (after a bulk change, or to measure a cold search). */
export function clearWordStatsCache(db: Db): void {
  wordCaches.delete(db);
}

function cachedStats(db: Db, unique: readonly string[], now: number): WordStats | null {
  const cache = wordCaches.get(db);
  if (!cache) return null;
  const words = new Map<string, { stem: string | null; count: number; code: number }>();
  for (const w of unique) {
    const hit = cache.words.get(w);
    if (!hit || now - hit.at > WORD_CACHE_MS) return null;
    words.set(w, { stem: hit.stem, count: hit.count, code: hit.code });
  }
  // `queued` only matters for a word the lexicon lacks, and those are never kept.
  return { words, total: cache.total, queued: false };
}

function keepStats(db: Db, stats: WordStats, now: number): void {
  let cache = wordCaches.get(db);
  if (!cache) {
    cache = { words: new Map(), total: stats.total };
    wordCaches.set(db, cache);
  }
  cache.total = stats.total;
  for (const [w, s] of stats.words) {
    if (s.stem !== null && s.count === 0) continue;
    cache.words.delete(w);
    cache.words.set(w, { ...s, at: now });
  }
  for (const oldest of cache.words.keys()) {
    if (cache.words.size <= WORD_CACHE_MAX) break;
    cache.words.delete(oldest);
  }
}

/**
 * Each word's stem and how many snippets contain it (from the lexicon), in one round trip, or none when every
 * word was looked up in the last WORD_CACHE_MS. Used for typo correction and by the search to tell rare,
 * selective words from ones in most snippets. `fresh` skips the kept answers.
 */
export async function wordStats(db: Db, words: readonly string[], options: { fresh?: boolean; cacheOwner?: Db } = {}): Promise<WordStats> {
  const unique = [...new Set(words.map((w) => w.toLowerCase()).filter((w) => w.length > 0 && w.length <= 64))];
  const now = Date.now();
  // A search runs on one checked-out client; its answers are kept for the pool the client came from.
  const owner = options.cacheOwner ?? db;
  if (options.fresh !== true && unique.length > 0) {
    const kept = cachedStats(owner, unique, now);
    if (kept) return kept;
  }
  const { rows } = await db.query<{ word: string; stem: string | null; count: number | null; code: number | null; total: number; queued: boolean }>({
    name: 'docdex-search-word-stats',
    text: `SELECT x.word, x.stem, t.doc_count AS count, t.code_count AS code, (SELECT COALESCE(sum(snippet_count + section_count), 0)::float8 FROM sources) AS total,
            EXISTS (SELECT 1 FROM search_terms_queue) AS queued
       FROM (SELECT w AS word, (tsvector_to_array(to_tsvector('english', w)))[1] AS stem FROM unnest($1::text[]) AS w) AS x
       LEFT JOIN search_terms t ON t.term = x.stem`,
    values: [unique],
  });
  const stats = {
    words: new Map(rows.map((r) => [r.word, { stem: r.stem, count: r.count ?? 0, code: r.code ?? 0 }])),
    total: Number(rows[0]?.total ?? 0),
    queued: rows[0]?.queued ?? false,
  };
  keepStats(owner, stats, now);
  return stats;
}

/** Variants (spellings) whose stem is in the lexicon, with the stem's count. */
async function knownVariants(db: Db, variants: string[]): Promise<Map<string, { stem: string; count: number }>> {
  if (variants.length === 0) return new Map();
  const { rows } = await db.query<{ word: string; stem: string; count: number }>(
    `SELECT x.word, x.stem, t.doc_count AS count
       FROM (SELECT w AS word, (tsvector_to_array(to_tsvector('english', w)))[1] AS stem FROM unnest($1::text[]) AS w) AS x
       JOIN search_terms t ON t.term = x.stem`,
    [variants],
  );
  return new Map(rows.map((r) => [r.word, { stem: r.stem, count: r.count }]));
}

async function nearStems(db: Db, stem: string): Promise<Array<{ term: string; doc_count: number }>> {
  // The trigram index (words seen at least twice, `shared`: migrations/013) finds candidates; pg_trgm's default
  // similarity threshold, 0.3, suits words of seven letters and more, the only ones corrected this way. The
  // edit distance in the caller decides.
  const { rows } = await db.query<{ term: string; doc_count: number }>(
    `SELECT term, doc_count FROM search_terms
      WHERE shared AND term % $1 AND length(term) BETWEEN length($1) - 2 AND length($1) + 2
      ORDER BY similarity(term, $1) DESC, doc_count DESC
      LIMIT 40`,
    [stem],
  );
  return rows;
}

export interface Candidate {
  /** The spelling added to the query. */
  word: string;
  stem: string;
  count: number;
  distance: number;
}

// How much a candidate's commonness weighs against its edits, as in a noisy-channel speller: a word ten times
// as common is worth 0.35 of an edit. Typos also land one edit from rare words (the docs' own misspellings,
// "occurences"; code tokens, "idxe"), and fewest edits first handed "idex" to "idxe" (a swap, half an edit)
// over "index" in thousands of snippets. A swap still wins unless the other word is about 27 times as common.
const COMMONNESS_WEIGHT = 0.35;

function cost(c: Candidate): number {
  return c.distance - COMMONNESS_WEIGHT * Math.log10(c.count + 1);
}

export function chooseCorrections(candidates: Candidate[]): string[] {
  // One candidate per stem (several spellings stem alike); fewest edits, then the spelling that is its own
  // stem (a dictionary form). Then the cheapest (edits against commonness), most common, and alphabetical
  // for determinism.
  const byStem = new Map<string, Candidate>();
  for (const c of candidates) {
    const seen = byStem.get(c.stem);
    const better = !seen || c.distance < seen.distance || (c.distance === seen.distance && (c.word === c.stem) > (seen.word === seen.stem));
    if (better) byStem.set(c.stem, c);
  }
  const sorted = [...byStem.values()].sort((x, y) => cost(x) - cost(y) || y.count - x.count || (x.word < y.word ? -1 : 1));
  const best = sorted[0];
  if (!best) return [];
  const second = sorted[1];
  // The runner-up is kept when it is nearly as likely: with equal edits, at least half as common.
  const close = second !== undefined && cost(second) - cost(best) <= COMMONNESS_WEIGHT * Math.log10(1 / SECOND_RATIO) + 1e-9;
  return close ? [best.word, second.word] : [best.word];
}

/**
 * Corrections for the words of a query: word → close spellings of lexicon words (best first). Only words no
 * snippet contains are corrected.
 */
export async function correctWords(db: Db, words: readonly string[], known?: WordStats, cacheOwner?: Db): Promise<Map<string, string[]>> {
  const candidates = [...new Set(words.filter(correctable))];
  const result = new Map<string, string[]>();
  if (candidates.length === 0) return result;
  let stats = known ?? (await wordStats(db, candidates, { ...(cacheOwner ? { cacheOwner } : {}) }));
  // Stop words have no stem and need no correction.
  const unknown = (st: WordStats) =>
    candidates.filter((w) => {
      const s = st.words.get(w);
      return s !== undefined && s.stem !== null && s.count === 0;
    });
  let suspects = unknown(stats);
  if (suspects.length > 0 && stats.queued) {
    // Just-written snippets may hold the word: fold them in before calling it a typo (bounded, so a search
    // never pays for a whole bulk load; background refreshes take the rest).
    await refreshSearchTerms(db, SEARCH_REFRESH_ROWS);
    stats = await wordStats(db, candidates, { fresh: true, ...(cacheOwner ? { cacheOwner } : {}) });
    suspects = unknown(stats);
  }
  if (suspects.length === 0) return result;

  const variants = new Map<string, string[]>();
  for (const w of suspects) variants.set(w, editsOne(w));
  const found = await knownVariants(db, [...new Set([...variants.values()].flat())]);
  for (const w of suspects) {
    const own = stats.words.get(w)!;
    const near: Candidate[] = [];
    for (const v of variants.get(w)!) {
      const hit = found.get(v);
      if (hit !== undefined && hit.stem !== own.stem) near.push({ word: v, stem: hit.stem, count: hit.count, distance: isSwap(w, v) ? SWAP_DISTANCE : 1 });
    }
    let chosen = chooseCorrections(near);
    if (chosen.length === 0 && w.length >= MIN_WORD_TWO_EDITS && own.stem !== null) {
      const far = (await nearStems(db, own.stem)).map((r) => ({ word: r.term, stem: r.term, count: r.doc_count, distance: editDistance(own.stem!, r.term, 2) })).filter((c) => c.distance <= 2);
      chosen = chooseCorrections(far);
    }
    if (chosen.length > 0) result.set(w, chosen);
  }
  return result;
}

/**
 * Rebuilds the lexicon from the stored snippets, after a bulk load that bypassed the triggers (deleted and
 * changed snippets are subtracted by the refresh itself, migration 029). Runs in one transaction: searches keep the old lexicon until it commits.
 */
export async function rebuildSearchTerms(pool: pg.Pool): Promise<number> {
  const terms = await withTransaction(pool, async (client) => {
    // Refreshers wait: one folding queued changes into the lexicon as it is rebuilt would count them twice.
    await client.query("SELECT pg_advisory_xact_lock(hashtext('docdex.search_terms_queue'))");
    await client.query('DELETE FROM search_terms');
    // One statement, so one snapshot: what is queued and visible is in the count; later commits stay queued.
    const result = await client.query(
      `WITH cleared AS (DELETE FROM search_terms_queue)
       INSERT INTO search_terms (term, doc_count, code_count)
       SELECT a.word, a.ndoc, COALESCE(c.ndoc, 0)
         FROM ts_stat('SELECT search_vector FROM snippets') AS a
         LEFT JOIN ts_stat('SELECT search_vector FROM snippets', 'c') AS c ON c.word = a.word
        WHERE is_lexicon_word(a.word) ORDER BY a.word`,
    );
    return result.rowCount ?? 0;
  });
  // Words of deleted snippets have left the lexicon: kept answers may still name them.
  clearWordStatsCache(pool);
  return terms;
}
