import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCrawlWorkers } from '../../src/core/crawl/index.js';
import type { CrawlJob, CrawlWorkers } from '../../src/core/crawl/index.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { crawlToEnd, FAST_WORKER, frontier } from './helpers/crawl.js';
import { TestSite } from './helpers/site.js';

/**
 * The crawler on real documentation: the Python and PostgreSQL HTML docs from the corpus, served on
 * 127.0.0.1 by a static server that behaves like a real one (directory redirects, index.html), crawled at
 * CRAWL_DELAY=0 within a bounded scope.
 */
const corpus = process.env.DOCDEX_CORPUS_DIR;
const PYTHON = corpus ? path.join(corpus, 'python') : '';
const POSTGRES = corpus ? path.join(corpus, 'postgres') : '';
const present = Boolean(corpus) && existsSync(path.join(PYTHON, 'library', 'json.html')) && existsSync(path.join(POSTGRES, 'tutorial.html'));
const reason = corpus ? `the corpus at ${corpus} lacks python/library/json.html or postgres/tutorial.html` : 'DOCDEX_CORPUS_DIR is not set';

if (!present) {
  if (process.env.DOCDEX_REQUIRE_CORPUS === '1') {
    describe('real documentation corpus', () => {
      it('is present (DOCDEX_REQUIRE_CORPUS=1)', () => {
        throw new Error(`Real-corpus crawl tests cannot run: ${reason}. Run ../shared/bin/fetch-doc-corpus.`);
      });
    });
  } else {
    console.log(`Skipping real-corpus crawl tests: ${reason}.`);
  }
}

describe.skipIf(!present)('crawling real documentation', () => {
  let db: TestDatabase;
  let workers: CrawlWorkers;
  let python: TestSite;
  let postgres: TestSite;

  beforeAll(async () => {
    db = await createTestDatabase();
    workers = await startCrawlWorkers(db, db.config, { ...FAST_WORKER, fetch: { ...FAST_WORKER.fetch, headersTimeoutMs: 5000, bodyTimeoutMs: 5000, totalTimeoutMs: 20_000 } });
    python = await TestSite.start();
    python.staticRoot = PYTHON;
    postgres = await TestSite.start();
    postgres.staticRoot = POSTGRES;
  });

  afterAll(async () => {
    await workers?.stop();
    await python?.close();
    await postgres?.close();
    await db?.drop();
  });

  async function check(job: CrawlJob): Promise<{ pages: number; snippets: number; languages: Record<string, number> }> {
    expect(job.status).toBe('completed');
    expect(job.pages_failed).toBe(0);
    const rows = await frontier(db.pool, job.job_id);
    expect(rows.filter((r) => r.status === 'failed')).toEqual([]);
    const docs = await db.pool.query<{ n: number; empty: number }>(`SELECT count(*)::int AS n, count(*) FILTER (WHERE length(markdown) < 200)::int AS empty FROM documents WHERE source_id = $1`, [
      job.source_id,
    ]);
    expect(docs.rows[0]!.n).toBe(job.pages_crawled);
    const langs = await db.pool.query<{ language: string; n: number }>("SELECT language, count(*)::int AS n FROM snippets WHERE source_id = $1 AND kind = 'snippet' GROUP BY 1", [job.source_id]);
    const languages = Object.fromEntries(langs.rows.map((r) => [r.language, r.n]));
    const snippets = langs.rows.reduce((a, r) => a + r.n, 0);
    expect(snippets).toBe(job.snippets_stored);
    console.log(`${job.name}: ${job.pages_crawled} pages, ${job.pages_skipped} skipped, ${snippets} snippets, ${JSON.stringify(languages)}, ${docs.rows[0]!.empty} near-empty pages`);
    return { pages: job.pages_crawled, snippets, languages };
  }

  it('Python docs: depth 1 from library/json.html', async () => {
    const job = await crawlToEnd(db, db.config, { name: 'python-json', start_urls: [python.url('/library/json.html')], max_depth: 1, max_concurrent_crawls: 8 }, 120_000);
    const r = await check(job);
    // json.html links about twenty pages of the same site (its neighbours, indexes, about pages).
    expect(r.pages).toBeGreaterThanOrEqual(15);
    expect(r.pages).toBeLessThanOrEqual(45);
    expect(r.snippets).toBeGreaterThanOrEqual(150);
    expect(r.languages.python ?? 0).toBeGreaterThan(r.snippets / 3);
    const json = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM snippet_occurrences o JOIN documents d ON d.id = o.document_id WHERE d.source_id = $1 AND d.url LIKE '%/library/json.html'`,
      [job.source_id],
    );
    expect(json.rows[0]!.n).toBeGreaterThanOrEqual(10);
    // Nothing outside the start host was requested, and the directory redirect was followed, not stored twice.
    const docs = await db.pool.query<{ url: string }>('SELECT url FROM documents WHERE source_id = $1', [job.source_id]);
    for (const d of docs.rows) expect(d.url.startsWith(python.origin)).toBe(true);
  });

  it('PostgreSQL docs: the tutorial, depth 2 within /tutorial*', async () => {
    const job = await crawlToEnd(
      db,
      db.config,
      { name: 'postgres-tutorial', start_urls: [postgres.url('/tutorial.html')], max_depth: 2, url_patterns: ['/tutorial*'], max_concurrent_crawls: 8 },
      120_000,
    );
    const r = await check(job);
    expect(r.pages).toBeGreaterThanOrEqual(15);
    expect(r.pages).toBeLessThanOrEqual(40);
    expect(r.snippets).toBeGreaterThanOrEqual(40);
    expect(r.languages.sql ?? 0).toBeGreaterThan(r.snippets / 3);
    const paths = (await db.pool.query<{ url: string }>('SELECT url FROM documents WHERE source_id = $1', [job.source_id])).rows.map((d) => new URL(d.url).pathname);
    for (const p of paths) expect(p.startsWith('/tutorial')).toBe(true);
  });
});
