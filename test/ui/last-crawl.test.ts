import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCrawlJob, startCrawl, startCrawlWorkers } from '../../src/core/crawl/index.js';
import type { CrawlWorkers } from '../../src/core/crawl/index.js';
import { createDashboardData } from '../../src/ui/data/postgres.js';
import { FAST_WORKER } from '../crawl/helpers/crawl.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { generatedSite, serveSite } from '../helpers/site.js';
import type { TestSite } from '../helpers/site.js';

/** The dashboard's "last crawl" of a source counts a crawl that was cancelled after fetching pages. */

let db: TestDatabase;
let workers: CrawlWorkers;
let site: TestSite;

beforeAll(async () => {
  db = await createTestDatabase({ CRAWL_ALLOW_HOSTS: '127.0.0.1' });
  workers = await startCrawlWorkers(db, db.config, FAST_WORKER);
  site = await serveSite(generatedSite(30), { delayMs: 150 });
});

afterAll(async () => {
  await workers?.stop();
  await site?.close();
  await db?.drop();
});

describe('last crawl', () => {
  it('is set by a cancelled crawl that fetched pages', async () => {
    const data = createDashboardData(db, db.config);
    const job = await startCrawl(db, db.config, { name: 'cancelled-midway', start_urls: [`${site.base}/`], max_depth: 1, max_concurrent_crawls: 1 });
    const deadline = Date.now() + 30_000;
    while ((await getCrawlJob(db.pool, job.job_id)).pages_crawled < 2) {
      if (Date.now() > deadline) throw new Error('the crawl fetched no page in 30 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await data.cancelCrawl(job.job_id);
    const cancelled = await getCrawlJob(db.pool, job.job_id);
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.pages_crawled).toBeGreaterThan(0);
    const row = (await data.sources()).find((s) => s.name === 'cancelled-midway');
    expect(row?.lastCrawledAt).not.toBeNull();
  });
});
