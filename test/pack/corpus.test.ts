import { existsSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVAL_SITES } from '../../bench/harness/corpus.js';
import { loadQueries } from '../../bench/harness/relevance.js';
import { importPack } from '../../src/core/pack/import.js';
import { refreshSearchTerms } from '../../src/core/search/lexicon.js';
import { searchSnippets } from '../../src/core/search/search.js';
import { ROOT } from '../helpers/cli.js';
import { sharedDebianCorpus } from '../helpers/corpus-sets.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { connectMcpClient } from '../helpers/mcp.js';
import { resultText } from '../mcp/helpers.js';
import { exportToBuffer } from './pack-helpers.js';

/**
 * Issue #38's round trip on real documentation: the Python, PostgreSQL and Node docs indexed, exported into one
 * pack and imported into a fresh database; the 20 dev queries must give the same results there (ids aside),
 * named and mixed, and get_page_markdown the same pages.
 */

const corpusDir = process.env.DOCDEX_CORPUS_DIR;
const required = process.env.DOCDEX_REQUIRE_CORPUS === '1';
const sharedEval = [path.resolve(ROOT, '..', 'shared', 'eval'), path.resolve(ROOT, '..', '..', 'shared', 'eval')].find((d) => existsSync(d)) ?? path.resolve(ROOT, '..', 'shared', 'eval');
const queryFile = path.join(sharedEval, 'queries-dev.jsonl');
const missing = !corpusDir
  ? 'DOCDEX_CORPUS_DIR is not set'
  : (EVAL_SITES.filter((s) => !existsSync(path.join(corpusDir, s))).map((s) => `${corpusDir}/${s} is missing`)[0] ?? (existsSync(queryFile) ? null : `the query file ${queryFile} is missing`));

if (missing && !required) console.log(`Skipping the pack round trip on the real corpus: ${missing}.`);

type Item = Awaited<ReturnType<typeof searchSnippets>>['items'][number];

/** Results without ids; within equal scores as a set (ties break by snippet id, and ids are new on import). */
function comparable(items: Item[]): unknown[] {
  // Ids aside (a pack installs rows under new ids), and the results folded under each (`more`, issue 50): they
  // are a ranking of their own, where the page-id tie breaks described below move near-equal scores.
  const rest = items.map(({ id: _id, source_id: _s, more: _more, ...r }) => r);
  return rest.sort((a, b) => b.score - a.score || JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

describe.skipIf(missing !== null && !required)('index packs: round trip of the real documentation corpus', () => {
  let from: TestDatabase;
  let to: TestDatabase;
  let names: Record<string, string>;

  beforeAll(async () => {
    if (missing) throw new Error(`DOCDEX_REQUIRE_CORPUS=1 but ${missing}.`);
    const shared = await sharedDebianCorpus(corpusDir!);
    from = shared.db;
    const indexed = shared.manifest;
    to = await createTestDatabase();
    names = Object.fromEntries(indexed.map((s) => [s.site, s.site]));
    // The lexicon's word counts steer the search plan. Ingest only ever adds to them (a snippet replaced or
    // moved to a more specific page is counted again), while an import counts the final rows once. Counted
    // afresh here, both sides plan alike, so any difference left is the pack's.
    await from.pool.query('TRUNCATE search_terms');
    await from.pool.query('INSERT INTO search_terms_queue (snippet_id) SELECT id FROM snippets');
    await refreshSearchTerms(from.pool);
    const started = performance.now();
    const pack = await exportToBuffer(from.pool, 'all');
    const exported = performance.now();
    await importPack(to.pool, Readable.from([pack]), { home: to.home, maxBytes: 1024 * 1024 * 1024 });
    const snippets = indexed.reduce((n, s) => n + s.snippets, 0);
    console.log(
      `pack of ${indexed.length} libraries, ${snippets} snippets: ${(pack.length / 1e6).toFixed(1)} MB, export ${((exported - started) / 1000).toFixed(1)} s, import ${((performance.now() - exported) / 1000).toFixed(1)} s`,
    );
  }, 900_000);

  afterAll(async () => {
    await from?.drop();
    await to?.drop();
  });

  // Identical data ranks identically except where a score reads which pages are "best" for the query, a set
  // whose ties break by page id: ids are random UUIDs, so two indexes of the same site can differ there by a
  // hair (a fraction of a percent) further down a list. The first result must be the same snippet everywhere.
  it('answers the 20 dev queries the same, named and mixed, ids aside', async () => {
    const queries = loadQueries(queryFile);
    expect(queries.length).toBeGreaterThanOrEqual(20);
    let identical = 0;
    let searches = 0;
    for (const q of queries) {
      for (const source of [names[q.source], undefined]) {
        const options = { query: q.query, limit: 10, ...(source === undefined ? {} : { source }) };
        const [a, b] = [await searchSnippets(from.pool, options), await searchSnippets(to.pool, options)];
        const [ca, cb] = [comparable(a.items), comparable(b.items)];
        searches += 1;
        if (JSON.stringify(ca) === JSON.stringify(cb)) identical += 1;
        // Equal scores in canonical order (comparable), so a tie is compared as a set.
        const first = (items: unknown[]) =>
          items.slice(0, 1).map((i) => {
            // The first result itself; the units folded under it (`more`, issue 50) are a ranking of their own,
            // where the page-id tie breaks described above move near-equal scores.
            const { score: _s, more: _more, ...rest } = i as Record<string, unknown>;
            return rest;
          });
        expect(first(cb), `${q.id} ${source ?? 'mixed'}`).toEqual(first(ca));
      }
    }
    console.log(`${identical} of ${searches} searches (20 dev queries, named and mixed) return identical top-10 lists, scores included`);
    // Sections (issue 50) put more units of equal score on one page, so more lists meet the page-id tie breaks:
    // 36 of 40 identical where 37 was the floor before them. Every first result above is still the same.
    expect(identical).toBeGreaterThanOrEqual(searches - 5);
  }, 300_000);

  it('serves the same pages through get_page_markdown', async () => {
    const queries = loadQueries(queryFile);
    const urls = new Set<string>();
    for (const q of queries) {
      const top = (await searchSnippets(from.pool, { query: q.query, source: names[q.source]!, limit: 1 })).items[0];
      if (top) urls.add(top.source_url.split('#')[0]!);
    }
    expect(urls.size).toBeGreaterThanOrEqual(10);
    const [a, b] = [await connectMcpClient(from), await connectMcpClient(to)];
    try {
      for (const url of urls) {
        const args = { name: 'get_page_markdown', arguments: { url } };
        const [pa, pb] = [resultText(await a.callTool(args)), resultText(await b.callTool(args))];
        expect(pa).toContain('<documentation');
        expect(pb, url).toBe(pa);
      }
    } finally {
      await a.close();
      await b.close();
    }
  }, 300_000);
});
