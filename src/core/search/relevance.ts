import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type pg from 'pg';
import { searchSnippets } from './search.js';

/**
 * Relevance measurement for `npm run eval` and its CI floor: graded queries run through searchSnippets, scored
 * by page (URL without fragment, relative to the site root, each page counted once at its best rank).
 */

export interface EvalQuery {
  id: string;
  source: string;
  query: string;
  /** Page path relative to the site root → grade (2 = the answer, 1 = also useful). */
  relevant: Record<string, number>;
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
}

export interface EvalSummary {
  queries: number;
  mrr10: number;
  hit1: number;
  hit5: number;
  ndcg10: number;
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
    const p = 1 + (hw % (w.length - 2));
    switch ((hw >> 8) % 4) {
      case 0:
        words[i] = w.slice(0, p) + w[p + 1]! + w[p]! + w.slice(p + 2);
        break;
      case 1:
        words[i] = w.slice(0, p) + w.slice(p + 1);
        break;
      case 2:
        words[i] = w.slice(0, p) + w[p]! + w.slice(p);
        break;
      default: {
        const keys = 'qwertyuiopasdfghjklzxcvbnm';
        const c = keys[(keys.indexOf(w[p]!.toLowerCase()) + 1) % keys.length]!;
        words[i] = w.slice(0, p) + c + w.slice(p + 1);
      }
    }
  }
  return words.join('');
}

export async function evaluate(
  pool: pg.Pool,
  queries: readonly EvalQuery[],
  sites: Readonly<Record<string, EvalSite>>,
  options: { typos?: boolean } = {},
): Promise<EvalSummary> {
  const outcomes: QueryOutcome[] = [];
  for (const q of queries) {
    const site = sites[q.source];
    if (!site) throw new Error(`No indexed site for source "${q.source}" (query ${q.id}).`);
    const text = options.typos ? typoVariant(q.query) : q.query;
    const started = performance.now();
    // Deeper than the cut-off: several snippets of one page collapse into one ranked page.
    const r = await searchSnippets(pool, { query: text, source: site.sourceId, limit: 50 });
    const ms = performance.now() - started;
    const pages = rankedPages(
      r.items.map((i) => i.source_url),
      site.baseUrl,
    );
    outcomes.push({
      id: q.id,
      source: q.source,
      query: text,
      firstRelevant: firstRelevantRank(pages, q.relevant),
      ndcg: ndcgAt(pages, q.relevant),
      pages: pages.slice(0, CUTOFF),
      corrected: r.corrected ?? [],
      ms,
    });
  }
  const n = Math.max(outcomes.length, 1);
  return {
    queries: outcomes.length,
    mrr10: outcomes.reduce((s, o) => s + (o.firstRelevant ? 1 / o.firstRelevant : 0), 0) / n,
    hit1: outcomes.filter((o) => o.firstRelevant === 1).length / n,
    hit5: outcomes.filter((o) => o.firstRelevant !== null && o.firstRelevant <= 5).length / n,
    ndcg10: outcomes.reduce((s, o) => s + o.ndcg, 0) / n,
    outcomes,
  };
}
