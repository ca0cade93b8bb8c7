import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCrawlJob, startCrawl, startCrawlWorkers } from '../../src/core/crawl/index.js';
import type { CrawlWorkers } from '../../src/core/crawl/index.js';
import { UserError } from '../../src/core/errors.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { runCli } from '../helpers/cli.js';
import { crawlToEnd, FAST_WORKER } from '../crawl/helpers/crawl.js';
import { serveRenderedSite, sitePages } from './helpers/spa-sites.js';
import type { ServedSite } from './helpers/spa-sites.js';

/**
 * A machine without Chromium (DOCDEX_CHROMIUM names a file that is not there): `auto` crawls as before and says
 * once, on the job, how many pages looked client-rendered, with the hint to install Chromium; `always` is
 * refused before anything is written. Runs whether or not this machine has a browser.
 */

let db: TestDatabase;
let workers: CrawlWorkers;
let site: ServedSite;

beforeAll(async () => {
  db = await createTestDatabase({ DOCDEX_CHROMIUM: '/nonexistent/chromium' });
  workers = await startCrawlWorkers(db, db.config, FAST_WORKER);
  site = await serveRenderedSite('history', sitePages('shell', 3));
});

afterAll(async () => {
  await workers?.stop();
  await site?.close();
  await db?.drop();
});

describe('without a browser', () => {
  it('auto crawls the fetched pages and counts those that looked client-rendered, with the install hint', async () => {
    const job = await crawlToEnd(db, db.config, { name: 'shells', start_urls: [`${site.url}/`], max_depth: 1 });
    expect(job.status).toBe('completed');
    expect(job.pages_rendered).toBe(0);
    expect(job.pages_render_missed).toBe(1);
    expect(job.render_hint).toMatch(/^1 page looked client-rendered but no Chromium was found.*apt-get install chromium.*DOCDEX_CHROMIUM/);
    expect((await getCrawlJob(db.pool, job.job_id)).render_hint).toBe(job.render_hint);
  });

  it('always fails fast with the hint, and writes nothing', async () => {
    const refused = await startCrawl(db, db.config, { name: 'always', start_urls: [`${site.url}/`], render: 'always' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UserError);
    expect((refused as UserError).code).toBe('browser_unavailable');
    expect((refused as UserError).message).toContain('DOCDEX_CHROMIUM (/nonexistent/chromium) is not an executable');
    expect((refused as UserError).hint).toContain('apt-get install chromium');
    const { rows } = await db.pool.query(`SELECT 1 FROM crawl_jobs WHERE name = 'always'`);
    expect(rows).toHaveLength(0);
  });

  it('the CLI says so in one Error line and one Hint line', async () => {
    const result = await runCli(['crawl', 'start', `${site.url}/`, '--name', 'cli-always', '--render', 'always'], { env: { ...db.env, DOCDEX_CHROMIUM: '/nonexistent/chromium' } });
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toMatch(/^Error: Cannot render pages: DOCDEX_CHROMIUM \(\/nonexistent\/chromium\) is not an executable\.$/m);
    expect(result.stderr).toMatch(/^Hint: Install Chromium/m);
  });
});
