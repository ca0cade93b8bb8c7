import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCrawlRequest, startCrawl, startCrawlWorkers } from '../../src/core/crawl/index.js';
import type { CrawlWorkers } from '../../src/core/crawl/index.js';
import { PageFetcher } from '../../src/core/crawl/fetch.js';
import { mcpRoutes } from '../../src/daemon/mcp/routes.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { runCli } from '../helpers/cli.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { crawlToEnd, FAST_WORKER, waitJob } from './helpers/crawl.js';
import { docPage, isSiteFile, TestSite } from './helpers/site.js';

/** Resource caps of a crawl (issue 30, item 7): each against real loopback sites, the daemon, MCP and the CLI. */

let db: TestDatabase;
let workers: CrawlWorkers;
let daemon: Awaited<ReturnType<typeof startTestDaemon>>;
const sites: TestSite[] = [];

async function site(routes: Parameters<typeof TestSite.start>[0] = {}): Promise<TestSite> {
  const s = await TestSite.start(routes);
  sites.push(s);
  return s;
}

beforeAll(async () => {
  db = await createTestDatabase({ CRAWL_ALLOW_HOSTS: '127.0.0.1' });
  workers = await startCrawlWorkers(db, db.config, { ...FAST_WORKER, maxCrawlDelaySeconds: 1 });
  daemon = await startTestDaemon(db.config, { routes: [...docsIndexRoutes, ...mcpRoutes] });
});

afterAll(async () => {
  await daemon?.close();
  await workers?.stop();
  for (const s of sites) await s.close();
  await db?.drop();
});

function postCrawl(body: unknown): Promise<Response> {
  return fetch(`${daemon.base}/api/crawl-jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

describe('pages per job', () => {
  it('admits max_pages pages, completes, and reports the cap over REST; recrawls keep it', async () => {
    const s = await site();
    const children = Array.from({ length: 30 }, (_, i) => `/p${i}`);
    s.set('/', { body: docPage({ title: 'root', links: children }) });
    for (const p of children) s.set(p, { body: docPage({ title: p, links: children }) });
    const job = await crawlToEnd(db, db.config, { name: 'capped', start_urls: [s.url('/')], max_depth: 2, max_pages: 5 });
    expect(job.status).toBe('completed');
    expect(job.pages_found).toBe(5);
    expect(job.pages_crawled).toBe(5);
    expect(s.requests().filter((r) => !isSiteFile(r.path))).toHaveLength(5);
    const viaRest = (await (await fetch(`${daemon.base}/api/crawl-jobs/${job.job_id}`)).json()) as Record<string, unknown>;
    expect(viaRest).toMatchObject({ max_pages: 5, page_cap_reached: true, pages_found: 5 });
    const stored = await db.pool.query<{ c: { max_pages: number } }>('SELECT crawl_config AS c FROM sources WHERE id = $1', [job.source_id]);
    expect(stored.rows[0]!.c.max_pages).toBe(5);

    const small = await crawlToEnd(db, db.config, { name: 'uncapped', start_urls: [s.url('/p1')], max_depth: 0 });
    expect(small).toMatchObject({ status: 'completed', max_pages: 10_000, page_cap_reached: false });
  });

  it('refuses max_pages outside 1..100,000 from REST (422), the CLI (exit 2) and MCP', async () => {
    for (const max_pages of [0, 100_001, 2.5]) {
      const res = await postCrawl({ name: 'x', start_urls: ['https://example.com/'], max_pages });
      expect(res.status).toBe(422);
      expect(await res.json()).toMatchObject({ code: 'validation_error' });
    }
    const cli = await runCli(['crawl', 'start', 'https://example.com/', '--name', 'x', '--max-pages', '0'], { env: db.env });
    expect(cli.exitCode).toBe(2);
    // The CLI names the field by its flag, as it does every crawl request field.
    expect(String(cli.stderr)).toMatch(/^Error: Invalid crawl request: --max-pages: must be from 1 to 100000\.$/m);
  });
});

describe('links per page', () => {
  it('takes at most 1,000 links from one page and counts the rest', async () => {
    const s = await site();
    const links = Array.from({ length: 1500 }, (_, i) => `/l/${i}`);
    s.set('/', { body: docPage({ title: 'index', links }) });
    // Excluded so the test fetches one page; the cap applies to the links taken, before scope.
    const job = await crawlToEnd(db, db.config, { name: 'many-links', start_urls: [s.url('/')], max_depth: 1, exclude_patterns: ['/l/**'] });
    expect(job.status).toBe('completed');
    const viaRest = (await (await fetch(`${daemon.base}/api/crawl-jobs/${job.job_id}`)).json()) as Record<string, unknown>;
    expect(viaRest).toMatchObject({ links_ignored: 500 });
    const record = await db.pool.query<{ n: number }>('SELECT cardinality(links) AS n FROM crawl_pages WHERE source_id = $1', [job.source_id]);
    expect(record.rows[0]!.n).toBe(1000);
  });
});

describe('crawl-delay ceiling', () => {
  it('lowers a robots.txt Crawl-delay above the ceiling and reports the delay it lowered', async () => {
    const s = await site({
      '/robots.txt': { body: 'User-agent: *\nCrawl-delay: 3600\n', headers: { 'content-type': 'text/plain' } },
      '/': { body: docPage({ title: 'root', links: ['/a'] }) },
      '/a': { body: docPage({ title: 'a' }) },
    });
    // The workers here have a 1 s ceiling; without one the second page would wait an hour.
    const job = await crawlToEnd(db, db.config, { name: 'slow-robots', start_urls: [s.url('/')], max_depth: 1 }, 20_000);
    expect(job).toMatchObject({ status: 'completed', pages_crawled: 2, crawl_delay_clamped: 3600 });
    const pages = s.requests().filter((r) => !isSiteFile(r.path));
    expect(pages[1]!.t - pages[0]!.t).toBeGreaterThanOrEqual(900);
  });
});

/** A server that sends headers at once, then one byte every `everyMs`, for as long as the client listens. */
async function drippingServer(everyMs: number): Promise<{ url: string; requests: () => number; close(): Promise<void> }> {
  let requests = 0;
  const server = http.createServer((_req, res) => {
    requests++;
    res.writeHead(200, { 'content-type': 'text/html' });
    const timer = setInterval(() => res.write('a'), everyMs);
    res.on('close', () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    requests: () => requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('per-page total time', () => {
  it('bounds a slow-drip page across all its attempts, not just each attempt', async () => {
    const drip = await drippingServer(200);
    // Each attempt may take 1 s and there are 4 attempts: 4 s or more per page without a page budget.
    const fetcher = new PageFetcher({ totalTimeoutMs: 1000, bodyTimeoutMs: 5000, maxRetries: 3, retryBaseMs: 10, pageTimeoutMs: 1500 });
    try {
      const started = performance.now();
      // The test server is on loopback, which a crawl the local user starts may reach.
      const result = await fetcher.fetch(drip.url, { allowLoopback: true });
      const elapsed = performance.now() - started;
      expect(result.kind).toBe('error');
      expect(result.kind === 'error' && result.message).toMatch(/page took longer than 1.5 s in total/);
      expect(elapsed).toBeLessThan(2900);
      expect(drip.requests()).toBeLessThanOrEqual(2);
    } finally {
      await fetcher.close();
      await drip.close();
    }
  });
});

describe('fair sharing of worker slots', () => {
  it('gives two running crawls each a share of the slots instead of the first taking all', async () => {
    const other = await createTestDatabase({ CRAWL_ALLOW_HOSTS: '127.0.0.1' });
    const own = await startCrawlWorkers(other, other.config, { ...FAST_WORKER, concurrency: 4, maxCrawlDelaySeconds: 1 });
    try {
      const a = await site();
      const b = await site();
      const total = 25;
      for (const s of [a, b]) {
        const children = Array.from({ length: total - 1 }, (_, i) => `/c${i}`);
        s.set('/', { body: docPage({ title: 'root', links: children }) });
        for (const p of children) s.set(p, { body: docPage({ title: p }), delayMs: 400 });
      }
      const jobA = await startCrawl(other, other.config, { name: 'fair-a', start_urls: [a.url('/')], max_concurrent_crawls: 4 });
      // A has every slot by the time B starts.
      await waitUntil(() => a.maxInFlight >= 3, 10_000);
      const jobB = await startCrawl(other, other.config, { name: 'fair-b', start_urls: [b.url('/')], max_concurrent_crawls: 4 });
      // B runs two pages at once while A still has pages it has not even requested: before fair sharing, B's
      // pages queued behind all of A's and it got a second slot only once A's queue had drained.
      const aUnrequested = () => total - a.requests().filter((r) => !isSiteFile(r.path)).length;
      const overlap = await waitUntilValue(() => (b.inFlight >= 2 && aUnrequested() >= 4 ? b.inFlight : 0), 15_000);
      expect(overlap).toBeGreaterThanOrEqual(2);
      expect(a.maxInFlight).toBeLessThanOrEqual(4);
      expect((await waitJob(other, jobA.job_id)).status).toBe('completed');
      expect((await waitJob(other, jobB.job_id)).status).toBe('completed');
    } finally {
      await own.stop();
      await other.drop();
    }
  });
});

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<void> {
  await waitUntilValue(() => (check() ? 1 : 0), timeoutMs);
}

async function waitUntilValue(value: () => number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const v = value();
    if (v > 0) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  return 0;
}

describe('domain_filter', () => {
  const refused = ['com', 'co.uk', '1', 'localhost', '127.0.0.1', 'github.io', '[::1]', 'http://10.0.0.1/'];

  it('refuses public suffixes, IP addresses and single labels the same way from REST, MCP and the CLI', async () => {
    for (const domain_filter of refused) {
      const res = await postCrawl({ name: 'x', start_urls: ['https://example.com/'], domain_filter });
      expect(res.status, domain_filter).toBe(422);
      const body = (await res.json()) as { code: string; error: string };
      expect(body.code).toBe('validation_error');
      expect(body.error).toMatch(/domain_filter: /);
    }
    const client = new Client({ name: 'caps-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.base}/mcp`)));
    try {
      const result = await client.callTool({ name: 'init_crawl', arguments: { name: 'x', start_urls: ['https://example.com/'], domain_filter: 'co.uk' } });
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toMatch(/public suffix/);
      expect(result._meta?.['docdex/error']).toMatchObject({ code: 'validation_error' });
    } finally {
      await client.close();
    }
    const cli = await runCli(['crawl', 'start', 'https://example.com/', '--name', 'x', '--domain', 'com'], { env: db.env });
    expect(cli.exitCode).toBe(2);
    expect(String(cli.stderr)).toMatch(/^Error: .*public suffix/m);
    expect(String(cli.stderr)).toMatch(/^Hint: /m);
    expect((await db.pool.query("SELECT 1 FROM sources WHERE name = 'x'")).rowCount).toBe(0);
  });

  it('accepts registrable domains and their subdomains', () => {
    for (const d of ['example.com', 'docs.example.co.uk', 'user.github.io', 'https://Docs.Python.org/3/']) {
      expect(parseCrawlRequest({ start_urls: ['https://example.com/'], domain_filter: d }).domain_filter).toBe(d.includes('://') ? 'docs.python.org' : d);
    }
  });

  it('never throws anything but a validation error, whatever the string', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (domain_filter) => {
        try {
          parseCrawlRequest({ start_urls: ['https://example.com/'], domain_filter });
        } catch (error) {
          expect((error as { code?: string }).code).toBe('validation_error');
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('metadata size', () => {
  it('refuses metadata over 16 KB as JSON over REST, and accepts it under', async () => {
    const big = await postCrawl({ name: 'meta', start_urls: ['https://example.com/'], metadata: { blob: 'x'.repeat(17 * 1024) } });
    expect(big.status).toBe(422);
    expect(await big.json()).toMatchObject({ code: 'validation_error', error: expect.stringMatching(/metadata: .*16384 bytes/) });
    expect(parseCrawlRequest({ start_urls: ['https://example.com/'], metadata: { blob: 'x'.repeat(15 * 1024) } }).metadata.blob).toHaveLength(15 * 1024);
    expect((await db.pool.query("SELECT 1 FROM sources WHERE name = 'meta'")).rowCount).toBe(0);
  });

  it('answers any JSON metadata with a result or a validation error, never anything else', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 20 }), fc.jsonValue({ maxDepth: 4 })), (metadata) => {
        try {
          parseCrawlRequest({ start_urls: ['https://example.com/'], metadata });
        } catch (error) {
          expect((error as { code?: string }).code).toBe('validation_error');
        }
      }),
      { numRuns: 200 },
    );
  });
});
