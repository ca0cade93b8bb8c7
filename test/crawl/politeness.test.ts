import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { startCrawl, startCrawlWorkers } from '../../src/core/crawl/index.js';
import type { CrawlWorkers } from '../../src/core/crawl/index.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { FAST_WORKER, frontier, waitJob } from './helpers/crawl.js';
import { docPage, isSiteFile } from './helpers/site.js';
import { ThreadSite } from './helpers/thread-site.js';
import type { Arrival } from './helpers/thread-site.js';

const DELAY_S = 0.3;
let db: TestDatabase;
const running: CrawlWorkers[] = [];
const sites: ThreadSite[] = [];

beforeAll(async () => {
  db = await createTestDatabase({ CRAWL_DELAY: String(DELAY_S) });
});

afterAll(async () => {
  for (const w of running) await w.stop();
  for (const s of sites) await s.close();
  await db?.drop();
});

function gaps(arrivals: Arrival[]): number[] {
  const t = arrivals.map((a) => a.t);
  return t.slice(1).map((x, i) => x - t[i]!);
}

describe('politeness', () => {
  it('keeps CRAWL_DELAY between requests to each host across two workers, while hosts proceed in parallel', async () => {
    const config = loadConfig(db.env);
    expect(config.crawl.delaySeconds).toBe(DELAY_S);
    const leaves = ['/a', '/b', '/c', '/d', '/e'];
    const routes = Object.fromEntries([['/', { body: docPage({ title: 'root', links: leaves }) }], ...leaves.map((p) => [p, { body: docPage({ title: p }) }])]);
    const site = await ThreadSite.start(routes);
    sites.push(site);
    const a = await startCrawlWorkers(db, config, { ...FAST_WORKER, concurrency: 4 });
    const b = await startCrawlWorkers(db, config, { ...FAST_WORKER, concurrency: 4 });
    running.push(a, b);
    // 127.0.0.1 and localhost are one server but two hosts for politeness.
    const job = await startCrawl(db, config, { name: 'polite', start_urls: [site.url('/'), site.url('/', 'localhost')], max_concurrent_crawls: 8 });
    const final = await waitJob(db, job.job_id, 30_000);
    expect(final.status).toBe('completed');
    expect(final.pages_crawled).toBe(12);

    const arrivals = await site.arrivals();
    for (const host of ['127.0.0.1', 'localhost']) {
      const mine = arrivals.filter((r) => r.host.startsWith(host));
      expect(mine.length, host).toBe(9); // robots.txt, llms-full.txt, llms.txt + 6 pages: the site's files are polite too
      const g = gaps(mine);
      expect(Math.min(...g), `${host} gaps ${g.map((x) => x.toFixed(1)).join(' ')}`).toBeGreaterThanOrEqual(DELAY_S * 1000);
    }
    // Per host, not global: with one delay for all hosts, every two consecutive requests would be
    // CRAWL_DELAY apart. The two hosts' streams run side by side, so some requests come closer together.
    // (A bound on the elapsed time said the same, but failed on a loaded CI machine.)
    const merged = gaps(arrivals.filter((r) => r.host.startsWith('127.0.0.1') || r.host.startsWith('localhost')));
    expect(Math.min(...merged), `all gaps ${merged.map((x) => x.toFixed(1)).join(' ')}`).toBeLessThan(DELAY_S * 1000);
    const workersUsed = new Set((await frontier(db.pool, job.job_id)).map((r) => r.worker_id));
    expect(workersUsed.size).toBe(2);
    await a.stop();
    await b.stop();
  });

  it('requests robots.txt once per host when two workers share a crawl and robots.txt is slow', async () => {
    // The controller asks for robots.txt as the job starts. A start page queued before the answer was stored,
    // and claimed by the other worker, requested it a second time (most runs did, with two hosts).
    const config = loadConfig({ ...db.env, CRAWL_DELAY: '0' });
    const site = await ThreadSite.start({
      '/robots.txt': { headers: { 'content-type': 'text/plain' }, body: 'User-agent: *\nAllow: /\n', delayMs: 400 },
      '/': { body: docPage({ title: 'root', links: ['/a'] }) },
      '/a': { body: docPage({ title: 'a' }) },
    });
    sites.push(site);
    const a = await startCrawlWorkers(db, config, { ...FAST_WORKER, concurrency: 4 });
    const b = await startCrawlWorkers(db, config, { ...FAST_WORKER, concurrency: 4 });
    running.push(a, b);
    const job = await startCrawl(db, config, { name: 'slow-robots', start_urls: [site.url('/'), site.url('/', 'localhost')], max_concurrent_crawls: 8 });
    expect((await waitJob(db, job.job_id)).pages_crawled).toBe(4);
    const arrivals = await site.arrivals();
    for (const host of ['127.0.0.1', 'localhost']) {
      expect(arrivals.filter((r) => r.host.startsWith(host) && r.path === '/robots.txt').length, host).toBe(1);
    }
    await a.stop();
    await b.stop();
  });

  it('applies robots.txt Crawl-delay when it is larger than CRAWL_DELAY', async () => {
    const config = loadConfig({ ...db.env, CRAWL_DELAY: '0' });
    const leaves = ['/a', '/b', '/c'];
    const site = await ThreadSite.start({
      '/robots.txt': { headers: { 'content-type': 'text/plain' }, body: 'User-agent: *\nCrawl-delay: 0.4\n' },
      '/': { body: docPage({ title: 'root', links: leaves }) },
      ...Object.fromEntries(leaves.map((p) => [p, { body: docPage({ title: p }) }])),
    });
    sites.push(site);
    const w = await startCrawlWorkers(db, config, { ...FAST_WORKER, concurrency: 4 });
    running.push(w);
    const job = await startCrawl(db, config, { name: 'crawl-delay', start_urls: [site.url('/')], max_concurrent_crawls: 4 });
    expect((await waitJob(db, job.job_id)).pages_crawled).toBe(4);
    const pages = (await site.arrivals()).filter((r) => !isSiteFile(r.path));
    expect(pages).toHaveLength(4);
    const g = gaps(pages);
    expect(Math.min(...g), g.map((x) => x.toFixed(1)).join(' ')).toBeGreaterThanOrEqual(400);
    await w.stop();
  });
});
