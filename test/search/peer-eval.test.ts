import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluatePeer, groupPeer, loadPeerQueries, normaliseUrl, rankedPeerPages, scorePeer, summarisePeer } from '../../bench/harness/peer.js';
import type { PeerLibrary, PeerOutcome } from '../../bench/harness/peer.js';
import { REALWORLD_LIBRARIES, repositoryFile } from '../../bench/harness/realworld.js';
import { pageKey } from '../../bench/harness/relevance.js';
import { searchSnippets } from '../../src/core/search/search.js';
import { ROOT } from '../helpers/cli.js';
import { sharedRealworldCorpus } from '../helpers/corpus-sets.js';
import type { TestDatabase } from '../helpers/db.js';

/**
 * The peer benchmark (docs-mcp-server's dataset in ../shared/eval/peer-benchmark) on the shared corpus:
 * react.dev, vite and fastapi through `docdex add file://…@tag --path <docs>`, python's Debian HTML loaded
 * through extractDocument and storePage; built once per run and shared (test/helpers/corpus-sets.ts). `npm run eval` prints the full tables; this fails when the figures fall below floors a little under them.
 */

describe('peer scoring, as the peer benchmark README says', () => {
  it('normalises URLs: fragment, query, trailing slash, .md and .html', () => {
    expect(normaliseUrl('https://fastapi.tiangolo.com/tutorial/cors/#anchor')).toBe('https://fastapi.tiangolo.com/tutorial/cors');
    expect(normaliseUrl('https://docs.python.org/3/library/json.html?x=1#json.dumps')).toBe('https://docs.python.org/3/library/json');
    expect(normaliseUrl('https://vite.dev/guide/why.md')).toBe('https://vite.dev/guide/why');
  });

  it('counts a page once, at its first rank', () => {
    expect(rankedPeerPages(['https://a/x#1', 'https://a/x#2', 'https://a/y/', 'https://a/x'])).toEqual(['https://a/x', 'https://a/y']);
  });

  it('scores MRR, Hit@k, Recall@5 and nDCG@5 with gain 2^grade - 1 over the first five pages', () => {
    const qrels = { 'https://a/x': 3, 'https://a/y': 2 };
    const s = scorePeer(['https://a/z', 'https://a/y', 'https://a/q', 'https://a/r', 'https://a/s', 'https://a/x'], qrels);
    expect(s.rr).toBe(0.5);
    expect([s.hit1, s.hit3, s.hit5]).toEqual([0, 1, 1]);
    // x is at rank 6: beyond the five looked at.
    expect(s.recall5).toBe(0.5);
    const ideal = 7 / Math.log2(2) + 3 / Math.log2(3);
    expect(s.ndcg5).toBeCloseTo(3 / Math.log2(3) / ideal, 10);
    expect(scorePeer(['https://a/x', 'https://a/y'], qrels).ndcg5).toBeCloseTo(1, 10);
    expect(scorePeer([], qrels)).toEqual({ rr: 0, hit1: 0, hit3: 0, hit5: 0, recall5: 0, ndcg5: 0 });
  });

  it("maps the repositories' files to their live URLs as the corpus README says", () => {
    const [react, vite, fastapi] = REALWORLD_LIBRARIES;
    expect(react!.liveUrl('src/content/reference/react/useState.md')).toBe('https://react.dev/reference/react/useState');
    expect(react!.liveUrl('src/content/learn/index.md')).toBe('https://react.dev/learn/');
    expect(vite!.liveUrl('docs/index.md')).toBe('https://vite.dev/');
    expect(vite!.liveUrl('docs/guide/why.md')).toBe('https://vite.dev/guide/why');
    expect(fastapi!.liveUrl('docs/en/docs/tutorial/cors.md')).toBe('https://fastapi.tiangolo.com/tutorial/cors/');
    expect(fastapi!.liveUrl('docs/en/docs/tutorial/dependencies/index.md')).toBe('https://fastapi.tiangolo.com/tutorial/dependencies/');
    expect(fastapi!.liveUrl('README.md')).toBeNull();
    expect(repositoryFile(`file:///tmp/r/vite@${'a'.repeat(40)}/docs/guide/why.md#the-problems`)).toBe('docs/guide/why.md');
  });
});

const corpusDir = process.env.DOCDEX_CORPUS_DIR;
const required = process.env.DOCDEX_REQUIRE_CORPUS === '1';
const sharedDir = (...parts: string[]) =>
  [path.resolve(ROOT, '..', 'shared', ...parts), path.resolve(ROOT, '..', '..', 'shared', ...parts)].find((d) => existsSync(d)) ?? path.resolve(ROOT, '..', 'shared', ...parts);
const realworldDir = process.env.EVAL_REALWORLD_DIR ?? sharedDir('corpus', 'realworld');
const datasetFile = path.join(sharedDir('eval'), 'peer-benchmark', 'dataset.yaml');
const missing = !corpusDir
  ? 'DOCDEX_CORPUS_DIR is not set'
  : !existsSync(path.join(corpusDir, 'python'))
    ? `${corpusDir}/python is missing`
    : (REALWORLD_LIBRARIES.map((l) => path.join(realworldDir, l.folder)).find((d) => !existsSync(d)) ?? (existsSync(datasetFile) ? null : `the peer dataset ${datasetFile} is missing`));
if (missing && !required) console.log(`Skipping the peer benchmark floor on the real corpus: ${missing}.`);

describe.skipIf(missing !== null && !required)('the peer benchmark on the real corpus', () => {
  let db: TestDatabase;
  const libraries: Record<string, PeerLibrary> = {};

  beforeAll(async () => {
    if (missing) throw new Error(`DOCDEX_REQUIRE_CORPUS=1 but ${missing}.`);
    const shared = await sharedRealworldCorpus(corpusDir!, realworldDir);
    db = shared.db;
    const { python, repositories } = shared.manifest;
    libraries.python = { sourceId: python.sourceId, liveUrl: (url) => `https://docs.python.org/3/${pageKey(url, python.baseUrl)}` };
    for (const r of repositories) {
      const lib = REALWORLD_LIBRARIES.find((l) => l.library === r.library)!;
      libraries[r.library] = {
        sourceId: r.sourceId,
        liveUrl: (url) => {
          const file = repositoryFile(url);
          return file === null ? null : lib.liveUrl(file);
        },
      };
      console.log(`indexed ${r.library}: ${r.pages} pages, ${r.snippets} snippets in ${r.seconds.toFixed(1)} s`);
    }
  }, 900_000);

  afterAll(async () => {
    await db?.drop();
  });

  const show = (label: string, outcomes: PeerOutcome[]) => {
    const s = summarisePeer(outcomes);
    console.log(`${label}: MRR ${s.rr.toFixed(3)} Hit@1 ${s.hit1.toFixed(3)} Hit@5 ${s.hit5.toFixed(3)} Recall@5 ${s.recall5.toFixed(3)} nDCG@5 ${s.ndcg5.toFixed(3)}`);
    for (const [intent, g] of groupPeer(outcomes, (o) => o.intent)) console.log(`  ${intent}: MRR ${g.rr.toFixed(3)} nDCG@5 ${g.ndcg5.toFixed(3)}`);
    return s;
  };

  it('ranks the judged pages of the 48 queries with a corpus, named and mixed', async () => {
    const queries = loadPeerQueries(datasetFile, Object.keys(libraries));
    // The dataset's 59 less Tailwind's 11 (no corpus here).
    expect(queries.length).toBe(48);
    const named = show('named', await evaluatePeer({ searchSnippets }, db.pool, queries, libraries));
    const mixed = show('mixed', await evaluatePeer({ searchSnippets }, db.pool, queries, libraries, { mixed: true }));
    // Floors a little under what `npm run eval` reports (the figures are in the CHANGELOG).
    expect(named.rr).toBeGreaterThanOrEqual(0.76);
    expect(named.hit5).toBeGreaterThanOrEqual(0.83);
    expect(named.ndcg5).toBeGreaterThanOrEqual(0.7);
    expect(mixed.rr).toBeGreaterThanOrEqual(0.74);
    expect(mixed.ndcg5).toBeGreaterThanOrEqual(0.68);
  }, 300_000);
});
