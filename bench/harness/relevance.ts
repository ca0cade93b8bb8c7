import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type pg from 'pg';
import type { searchSnippets } from '../../src/core/search/search.js';
import type { correctWords } from '../../src/core/search/typo.js';

/**
 * Relevance measurement for `npm run eval` and its CI floor: graded queries run through searchSnippets, scored
 * by page (URL without fragment, relative to the site root, each page counted once at its best rank).
 */

/**
 * The product's search functions the harness measures, passed in by its caller: the benches pass the built
 * `dist/`, the tests pass `src/`, so one harness serves both.
 */
export interface SearchParts {
  searchSnippets: typeof searchSnippets;
  correctWords: typeof correctWords;
}

export interface EvalQuery {
  id: string;
  source: string;
  query: string;
  /** Page path relative to the site root → grade (2 = the answer, 1 = also useful). */
  relevant: Record<string, number>;
  /** Pattern the answering snippet's code matches (a leading `(?i)` makes it case-insensitive). */
  code?: string;
}

export interface QueryOutcome {
  id: string;
  source: string;
  query: string;
  /** 1-based rank of the first relevant page within the cut-off, or null. */
  firstRelevant: number | null;
  ndcg: number;
  /** Ranked pages (top 10) as paths relative to the site root. */
  pages: string[];
  corrected: Array<{ from: string; to: string }>;
  ms: number;
  /** 1-based rank of the first snippet from a relevant page whose code matches the query's pattern, or null. */
  firstAnswer: number | null;
}

export interface EvalSummary {
  queries: number;
  mrr10: number;
  hit1: number;
  hit5: number;
  ndcg10: number;
  /** Share of queries whose first snippet answers them (relevant page, code matching the pattern). */
  snip1: number;
  /** Share of queries with an answering snippet among the first three. */
  snip3: number;
  outcomes: QueryOutcome[];
}

export interface EvalSite {
  /** Source id to filter on. */
  sourceId: string;
  /** The site root URL pages are relative to (with trailing slash). */
  baseUrl: string;
}

export const CUTOFF = 10;

export function loadQueries(file: string): EvalQuery[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as EvalQuery);
}

/** A result URL as a page key: the path under the site root, without query or fragment. */
export function pageKey(url: string, baseUrl: string): string {
  const noFragment = url.split('#')[0]!.split('?')[0]!;
  const base = baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
  let rel = noFragment;
  if (noFragment.startsWith(base)) rel = noFragment.slice(base.length);
  else {
    try {
      rel = decodeURIComponent(new URL(noFragment).pathname.replace(/^\//, ''));
    } catch {
      // Not a URL: compared as it is.
    }
  }
  return rel === '' || rel.endsWith('/') ? `${rel}index.html` : rel;
}

/** Each page once, at its best rank. */
export function rankedPages(urls: readonly string[], baseUrl: string): string[] {
  const pages: string[] = [];
  for (const url of urls) {
    const key = pageKey(url, baseUrl);
    if (!pages.includes(key)) pages.push(key);
  }
  return pages;
}

export function ndcgAt(pages: readonly string[], relevant: Record<string, number>, k = CUTOFF): number {
  let dcg = 0;
  pages.slice(0, k).forEach((p, i) => {
    const g = relevant[p] ?? 0;
    if (g > 0) dcg += (2 ** g - 1) / Math.log2(i + 2);
  });
  const ideal = Object.values(relevant)
    .filter((g) => g > 0)
    .sort((a, b) => b - a)
    .slice(0, k)
    .reduce((sum, g, i) => sum + (2 ** g - 1) / Math.log2(i + 2), 0);
  return ideal === 0 ? 0 : dcg / ideal;
}

export function firstRelevantRank(pages: readonly string[], relevant: Record<string, number>, k = CUTOFF): number | null {
  const i = pages.slice(0, k).findIndex((p) => (relevant[p] ?? 0) > 0);
  return i < 0 ? null : i + 1;
}

function hash(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0);
}

export type TypoKind = 'swap' | 'drop' | 'double' | 'wrong';
export const TYPO_KINDS: readonly TypoKind[] = ['swap', 'drop', 'double', 'wrong'];

/**
 * `word` with one typo of `kind` at position `p` (1 ≤ p ≤ length - 2): neighbour swap, dropped letter, doubled
 * letter, or the next key of the keyboard's letter rows.
 */
export function typoAt(word: string, kind: TypoKind, p: number): string {
  switch (kind) {
    case 'swap':
      return word.slice(0, p) + word[p + 1]! + word[p]! + word.slice(p + 2);
    case 'drop':
      return word.slice(0, p) + word.slice(p + 1);
    case 'double':
      return word.slice(0, p) + word[p]! + word.slice(p);
    case 'wrong': {
      const keys = 'qwertyuiopasdfghjklzxcvbnm';
      const c = keys[(keys.indexOf(word[p]!.toLowerCase()) + 1) % keys.length]!;
      return word.slice(0, p) + c + word.slice(p + 1);
    }
  }
}

/**
 * The query with 1 or 2 deterministic typos (the kinds people make: neighbour swap, dropped letter, doubled
 * letter, wrong letter), applied to words of five letters or more (four when there are none) so that the word
 * stays recognisable.
 */
export function typoVariant(query: string): string {
  const words = query.split(/(\s+)/);
  const long = words.map((w, i) => ({ w, i })).filter(({ w }) => /^[a-z]{5,}$/i.test(w));
  // A query of short words only ("load json from a file") still gets its typo, in a four-letter word.
  const candidates = long.length > 0 ? long : words.map((w, i) => ({ w, i })).filter(({ w }) => /^[a-z]{4}$/i.test(w));
  if (candidates.length === 0) return query;
  const h = hash(query);
  const count = Math.min(candidates.length, 1 + (h % 2));
  const chosen = new Set<number>();
  for (let k = 0; chosen.size < count; k++) chosen.add(candidates[(h + k * 7) % candidates.length]!.i);
  for (const i of chosen) {
    const w = words[i]!;
    const hw = hash(`${query}/${w}`);
    // Never the first letter: people rarely get that wrong, and neither do spelling correctors expect it.
    // (hw >> 8) is signed: a negative remainder has always meant a wrong letter, and stays so, so that the typo
    // queries are the ones every earlier figure was measured on.
    const k = (hw >> 8) % 4;
    words[i] = typoAt(w, TYPO_KINDS[k < 0 ? 3 : k]!, 1 + (hw % (w.length - 2)));
  }
  return words.join('');
}

export interface CorrectionAccuracy {
  /** Typos measured: every single typo of every kind and position, of the queries' words the index knows. */
  cases: number;
  /** Share whose first correction is the intended word (by stem). */
  top1: number;
  /** Share where the intended word is among the corrections the search adds. */
  found: number;
  byKind: Record<TypoKind, { cases: number; top1: number }>;
  /** Typos not read as the intended word: `typo → corrections (intended)`. */
  misses: string[];
}

/** Each word's stem (null for a stop word) and whether the lexicon knows it (stop words count as known). */
async function lexiconEntries(pool: pg.Pool, words: string[]): Promise<Map<string, { stem: string | null; known: boolean }>> {
  const { rows } = await pool.query<{ word: string; stem: string | null; known: boolean }>(
    `SELECT x.word, x.stem, x.stem IS NULL OR EXISTS (SELECT 1 FROM search_terms t WHERE t.term = x.stem) AS known
       FROM (SELECT w AS word, (tsvector_to_array(to_tsvector('english', w)))[1] AS stem FROM unnest($1::text[]) AS w) AS x`,
    [words],
  );
  return new Map(rows.map((r) => [r.word, { stem: r.stem, known: r.known }]));
}

/**
 * How well typo correction recovers the words of the queries, over every single typo (each kind at each
 * position but the first letter) of each word of five letters or more that the index knows. Typos that are
 * themselves indexed words are left out: they are not corrected, by design. A sharper measure than the typo
 * queries' ranking, where one typo in a query of four words often goes unnoticed.
 */
export async function correctionAccuracy(parts: Pick<SearchParts, 'correctWords'>, pool: pg.Pool, queries: readonly EvalQuery[]): Promise<CorrectionAccuracy> {
  const words = [...new Set(queries.flatMap((q) => q.query.toLowerCase().match(/[a-z]{5,}/g) ?? []))];
  const typos = new Map<string, { word: string; kind: TypoKind }>();
  for (const word of words) {
    for (const kind of TYPO_KINDS) {
      for (let p = 1; p < word.length - 1; p++) {
        const t = typoAt(word, kind, p);
        if (t !== word && !typos.has(t)) typos.set(t, { word, kind });
      }
    }
  }
  const info = await lexiconEntries(pool, [...new Set([...words, ...typos.keys()])]);
  const cases = [...typos].filter(([t, { word }]) => info.get(word)?.known === true && info.get(word)?.stem !== null && info.get(t)?.known === false);
  // One typo per call, as a search would see it; the variant lookups of a call are one statement.
  const corrected: Array<{ typo: string; word: string; kind: TypoKind; corrections: string[] }> = [];
  for (const [typo, { word, kind }] of cases) corrected.push({ typo, word, kind, corrections: (await parts.correctWords(pool, [typo])).get(typo) ?? [] });
  const newWords = [...new Set(corrected.flatMap((c) => c.corrections))].filter((w) => !info.has(w));
  for (const [w, entry] of await lexiconEntries(pool, newWords)) info.set(w, entry);

  const byKind = Object.fromEntries(TYPO_KINDS.map((k) => [k, { cases: 0, top1: 0 }])) as CorrectionAccuracy['byKind'];
  const misses: string[] = [];
  let top1 = 0;
  let found = 0;
  for (const { typo, word, kind, corrections } of corrected) {
    const stems = corrections.map((c) => info.get(c)?.stem ?? null);
    const want = info.get(word)!.stem;
    byKind[kind].cases++;
    if (stems[0] === want) {
      top1++;
      byKind[kind].top1++;
    }
    if (stems.includes(want)) found++;
    else misses.push(`${typo} → ${corrections.join(' / ') || '(none)'} (${word})`);
  }
  const n = Math.max(cases.length, 1);
  return { cases: cases.length, top1: top1 / n, found: found / n, byKind, misses };
}

/** The query's code pattern as a RegExp: the files write case-insensitivity the PCRE way, `(?i)` in front. */
export function codePattern(q: EvalQuery): RegExp | null {
  if (q.code === undefined) return null;
  const insensitive = q.code.startsWith('(?i)');
  return new RegExp(insensitive ? q.code.slice(4) : q.code, insensitive ? 'i' : '');
}

type ResultItem = { source_url: string; source_id: string; code: string };

/**
 * Each result's page key; a result of another source (mixed mode) gets a key no relevant page has, so a page of
 * the same path on another site never counts.
 */
function resultKeys(items: readonly ResultItem[], site: EvalSite): string[] {
  return items.map((i) => (i.source_id === site.sourceId ? pageKey(i.source_url, site.baseUrl) : `other:${i.source_url}`));
}

function firstAnswerRank(items: readonly ResultItem[], keys: readonly string[], q: EvalQuery, k = CUTOFF): number | null {
  const pattern = codePattern(q);
  if (pattern === null) return null;
  const i = items.slice(0, k).findIndex((item, j) => (q.relevant[keys[j]!] ?? 0) > 0 && pattern.test(item.code));
  return i < 0 ? null : i + 1;
}

export interface EvaluateOptions {
  /** Each query with 1-2 deterministic typos (typoVariant). */
  typos?: boolean;
  /** No library named: every source searched, as an assistant that does not know which library to ask. */
  mixed?: boolean;
}

export async function evaluate(
  parts: Pick<SearchParts, 'searchSnippets'>,
  pool: pg.Pool,
  queries: readonly EvalQuery[],
  sites: Readonly<Record<string, EvalSite>>,
  options: EvaluateOptions = {},
): Promise<EvalSummary> {
  const outcomes: QueryOutcome[] = [];
  for (const q of queries) {
    const site = sites[q.source];
    if (!site) throw new Error(`No indexed site for source "${q.source}" (query ${q.id}).`);
    const text = options.typos ? typoVariant(q.query) : q.query;
    const started = performance.now();
    // Deeper than the cut-off: several snippets of one page collapse into one ranked page.
    const r = await parts.searchSnippets(pool, { query: text, ...(options.mixed ? {} : { source: site.sourceId }), limit: 50 });
    const ms = performance.now() - started;
    const keys = resultKeys(r.items, site);
    const pages = [...new Set(keys)];
    outcomes.push({
      id: q.id,
      source: q.source,
      query: text,
      firstRelevant: firstRelevantRank(pages, q.relevant),
      ndcg: ndcgAt(pages, q.relevant),
      pages: pages.slice(0, CUTOFF),
      corrected: r.corrected ?? [],
      ms,
      firstAnswer: firstAnswerRank(r.items, keys, q),
    });
  }
  return summarise(outcomes);
}

/** The figures of a set of outcomes (also of several query files' outcomes together). */
export function summarise(outcomes: QueryOutcome[]): EvalSummary {
  const n = Math.max(outcomes.length, 1);
  const share = (test: (o: QueryOutcome) => boolean) => outcomes.filter(test).length / n;
  return {
    queries: outcomes.length,
    mrr10: outcomes.reduce((s, o) => s + (o.firstRelevant ? 1 / o.firstRelevant : 0), 0) / n,
    hit1: share((o) => o.firstRelevant === 1),
    hit5: share((o) => o.firstRelevant !== null && o.firstRelevant <= 5),
    ndcg10: outcomes.reduce((s, o) => s + o.ndcg, 0) / n,
    snip1: share((o) => o.firstAnswer === 1),
    snip3: share((o) => o.firstAnswer !== null && o.firstAnswer <= 3),
    outcomes,
  };
}
