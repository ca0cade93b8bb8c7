import { readFileSync } from 'node:fs';
import type pg from 'pg';
import { parse as parseYaml } from 'yaml';
import type { searchSnippets } from '../../src/core/search/search.js';

/**
 * The peer benchmark (../shared/eval/peer-benchmark: docs-mcp-server's search-quality dataset), scored exactly
 * as its README says the peer scores it: results are pages, each counted once at its first rank (anchors
 * ignored), the first 5 looked at; URLs on both sides normalised (fragment, query string, trailing `/`, `.md`
 * and `.html` removed); MRR, Hit@1/3/5, Recall@5 and nDCG@5 with gain 2^grade − 1 and the ideal order from
 * the grades. Also reads held-out sets written the same way as JSON lines.
 */

export interface PeerQuery {
  id: string;
  library: string;
  query: string;
  intent: string;
  /** Normalised live URL → grade (3 canonical, 2 closely related, 1 peripheral). */
  qrels: Record<string, number>;
}

export const PEER_K = 5;

/** A URL as the peer compares it: no fragment, query string, trailing `/`, `.md` or `.html`. */
export function normaliseUrl(url: string): string {
  let u = url.split('#')[0]!.split('?')[0]!;
  u = u.replace(/\/+$/, '');
  u = u.replace(/\.(md|html)$/, '');
  return u;
}

type RawQrel = { url: string; grade: number };
type RawEntry = { id?: string; library: string; query: string; intent: string; qrels: RawQrel[] };

function toQuery(raw: RawEntry, index: number, file: string): PeerQuery {
  if (typeof raw.query !== 'string' || typeof raw.library !== 'string' || !Array.isArray(raw.qrels)) throw new Error(`${file}: entry ${index + 1} lacks query, library or qrels.`);
  const qrels: Record<string, number> = {};
  for (const q of raw.qrels) qrels[normaliseUrl(q.url)] = Math.max(qrels[normaliseUrl(q.url)] ?? 0, q.grade);
  return { id: raw.id ?? `${raw.library}-${index + 1}`, library: raw.library, query: raw.query, intent: raw.intent ?? 'unknown', qrels };
}

/**
 * The queries of a set: the peer's YAML (`entries[].vars`) or JSON lines of the same fields (with an `id`),
 * keeping only the libraries given (the corpus has no Tailwind).
 */
export function loadPeerQueries(file: string, libraries: readonly string[]): PeerQuery[] {
  const text = readFileSync(file, 'utf8');
  const raws: RawEntry[] = /\.ya?ml$/.test(file)
    ? ((parseYaml(text) as { entries: Array<{ vars: RawEntry }> }).entries ?? []).map((e) => e.vars)
    : text
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as RawEntry);
  return raws.map((r, i) => toQuery(r, i, file)).filter((q) => libraries.includes(q.library));
}

export interface PeerScores {
  rr: number;
  hit1: number;
  hit3: number;
  hit5: number;
  recall5: number;
  ndcg5: number;
}

/** The pages of a ranked result list: normalised, each once at its first rank. */
export function rankedPeerPages(urls: readonly string[]): string[] {
  const pages: string[] = [];
  for (const url of urls) {
    const page = normaliseUrl(url);
    if (!pages.includes(page)) pages.push(page);
  }
  return pages;
}

/** One query's scores from its ranked pages (already deduplicated) and its judgements. */
export function scorePeer(pages: readonly string[], qrels: Readonly<Record<string, number>>): PeerScores {
  const top = pages.slice(0, PEER_K);
  const grade = (p: string) => qrels[p] ?? 0;
  const first = top.findIndex((p) => grade(p) > 0);
  const judged = Object.values(qrels).filter((g) => g > 0);
  const dcg = top.reduce((s, p, i) => s + (2 ** grade(p) - 1) / Math.log2(i + 2), 0);
  const ideal = [...judged]
    .sort((a, b) => b - a)
    .slice(0, PEER_K)
    .reduce((s, g, i) => s + (2 ** g - 1) / Math.log2(i + 2), 0);
  const hit = (k: number) => (first >= 0 && first < k ? 1 : 0);
  return {
    rr: first < 0 ? 0 : 1 / (first + 1),
    hit1: hit(1),
    hit3: hit(3),
    hit5: hit(5),
    recall5: judged.length === 0 ? 0 : top.filter((p) => grade(p) > 0).length / judged.length,
    ndcg5: ideal === 0 ? 0 : dcg / ideal,
  };
}

export interface PeerOutcome extends PeerScores {
  id: string;
  library: string;
  intent: string;
  query: string;
  /** The first ranked pages, normalised live URLs (another library's pages prefixed `other:`). */
  pages: string[];
}

export interface PeerSummary extends PeerScores {
  queries: number;
}

export function summarisePeer(outcomes: readonly PeerOutcome[]): PeerSummary {
  const n = Math.max(outcomes.length, 1);
  const mean = (k: keyof PeerScores) => outcomes.reduce((s, o) => s + o[k], 0) / n;
  return { queries: outcomes.length, rr: mean('rr'), hit1: mean('hit1'), hit3: mean('hit3'), hit5: mean('hit5'), recall5: mean('recall5'), ndcg5: mean('ndcg5') };
}

/** Where each library's results live: its source, and its results' live URLs. */
export interface PeerLibrary {
  sourceId: string;
  /** A result URL of this library's source as its live URL, or null for a page the live site does not have. */
  liveUrl(resultUrl: string): string | null;
}

export interface PeerOptions {
  /** No library named: every source searched. */
  mixed?: boolean;
  /** Results asked for (default: the search's default, what a user or an assistant sees). */
  limit?: number;
}

/**
 * Every query through searchSnippets, with its library named (`source`) or all mixed; a result of any source
 * is mapped to its own live URL space, so a page of another library never counts.
 */
export async function evaluatePeer(
  parts: { searchSnippets: typeof searchSnippets },
  pool: pg.Pool,
  queries: readonly PeerQuery[],
  libraries: Readonly<Record<string, PeerLibrary>>,
  options: PeerOptions = {},
): Promise<PeerOutcome[]> {
  const bySource = new Map(Object.entries(libraries).map(([name, lib]) => [lib.sourceId, { name, lib }]));
  const outcomes: PeerOutcome[] = [];
  for (const q of queries) {
    const lib = libraries[q.library];
    if (!lib) throw new Error(`No indexed library "${q.library}" (query ${q.id}).`);
    const r = await parts.searchSnippets(pool, { query: q.query, ...(options.mixed ? {} : { source: lib.sourceId }), ...(options.limit ? { limit: options.limit } : {}) });
    const urls = r.items.map((item) => {
      const owner = bySource.get(item.source_id);
      const live = owner?.lib.liveUrl(item.source_url) ?? null;
      return live ?? `other:${item.source_id}:${item.source_url}`;
    });
    const pages = rankedPeerPages(urls);
    outcomes.push({ id: q.id, library: q.library, intent: q.intent, query: q.query, pages: pages.slice(0, PEER_K), ...scorePeer(pages, q.qrels) });
  }
  return outcomes;
}

/** The summary of each group of outcomes (by library, by intent), keys sorted. */
export function groupPeer(outcomes: readonly PeerOutcome[], key: (o: PeerOutcome) => string): Array<[string, PeerSummary]> {
  const groups = new Map<string, PeerOutcome[]>();
  for (const o of outcomes) groups.set(key(o), [...(groups.get(key(o)) ?? []), o]);
  return [...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, summarisePeer(v)]);
}
