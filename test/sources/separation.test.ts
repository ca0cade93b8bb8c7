import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCrawlJob, resumeCrawl, startCrawlWorkers } from '../../src/core/crawl/index.js';
import type { CrawlWorkers } from '../../src/core/crawl/index.js';
import { listSources } from '../../src/core/sources/manage.js';
import { recrawlSource } from '../../src/core/crawl/recrawl.js';
import { distinguishedName, isUnderBaseUrl, siteLabel } from '../../src/core/sources/site.js';
import { crawlToEnd, FAST_WORKER } from '../crawl/helpers/crawl.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { serveSite } from '../helpers/site.js';
import type { TestSite } from '../helpers/site.js';

/**
 * Sources are never merged by accident: a crawl whose name was detected joins only its own site's source,
 * and a crawl that stores nothing leaves no empty source behind.
 */

let db: TestDatabase;
let workers: CrawlWorkers;
const sites: TestSite[] = [];

/** A page that names no site (no og:site_name, no title suffix): its crawl is named after the host. */
function barePage(heading: string, code: string): string {
  return `<!doctype html><html><head><meta name="description" content="${heading} docs"></head><body><main><h1>${heading}</h1>
<h2 id="use">Use</h2><p>How to use ${heading}.</p><pre><code class="language-python">${code}</code></pre></main></body></html>`;
}

async function site(pages: Record<string, string>): Promise<TestSite> {
  const s = await serveSite(pages);
  sites.push(s);
  return s;
}

async function sourceRow(id: string) {
  const { rows } = await db.pool.query<{ name: string; base_url: string; description: string; crawl_config: { start_urls: string[] }; snippet_count: number }>(
    'SELECT name, base_url, description, crawl_config, snippet_count FROM sources WHERE id = $1',
    [id],
  );
  return rows[0]!;
}

beforeAll(async () => {
  db = await createTestDatabase({ CRAWL_ALLOW_HOSTS: '127.0.0.1' });
  workers = await startCrawlWorkers(db, db.config, FAST_WORKER);
});

afterAll(async () => {
  await workers?.stop();
  for (const s of sites) await s.close();
  await db?.drop();
});

describe('no silent merges', () => {
  it('keeps two sites on two ports of one host apart, each with its own snippets, configuration and recrawl', async () => {
    const python = await site({ '/': barePage('Python', 'import json\nprint(json.dumps({"a": 1}))') });
    const mkdocs = await site({ '/': barePage('MkDocs', 'mkdocs build --clean\nmkdocs serve') });
    const first = await crawlToEnd(db, db.config, { start_urls: [`${python.base}/`], max_depth: 0 });
    const second = await crawlToEnd(db, db.config, { start_urls: [`${mkdocs.base}/`], max_depth: 0 });
    expect(first.status).toBe('completed');
    expect(second.status).toBe('completed');
    expect(second.source_id).not.toBe(first.source_id);
    const port = new URL(mkdocs.base).port;
    expect(first.name).toBe('127.0.0.1');
    expect(second.name).toBe(`127.0.0.1-${port}`);

    const a = await sourceRow(first.source_id!);
    const b = await sourceRow(second.source_id!);
    expect(a).toMatchObject({ base_url: `${python.base}/`, description: 'Python docs', snippet_count: 1, crawl_config: { start_urls: [`${python.base}/`] } });
    expect(b).toMatchObject({ base_url: `${mkdocs.base}/`, description: 'MkDocs docs', snippet_count: 1, crawl_config: { start_urls: [`${mkdocs.base}/`] } });

    // The same site crawled again without a name joins its own source.
    const again = await crawlToEnd(db, db.config, { start_urls: [`${mkdocs.base}/`], max_depth: 0 });
    expect(again.source_id).toBe(second.source_id);

    python.hits.length = 0;
    mkdocs.hits.length = 0;
    const recrawlA = await recrawlSource(db, db.config, first.source_id!);
    await crawlToEndOf(recrawlA.job_id);
    expect(python.hits).toContain('/');
    expect(mkdocs.hits).toEqual([]);
    python.hits.length = 0;
    const recrawlB = await recrawlSource(db, db.config, second.source_id!);
    await crawlToEndOf(recrawlB.job_id);
    expect(mkdocs.hits).toContain('/');
    expect(python.hits).toEqual([]);
  });

  it('joins another site by its given name without moving its base URL or description', async () => {
    const one = await site({ '/': barePage('One', 'one = 1') });
    const two = await site({ '/': barePage('Two', 'two = 2') });
    const first = await crawlToEnd(db, db.config, { name: 'Joined', start_urls: [`${one.base}/`], max_depth: 0 });
    const second = await crawlToEnd(db, db.config, { name: 'Joined', start_urls: [`${two.base}/`], max_depth: 0 });
    expect(second.source_id).toBe(first.source_id);
    const row = await sourceRow(first.source_id!);
    expect(row).toMatchObject({ base_url: `${one.base}/`, description: 'One docs', snippet_count: 2 });
    expect(row.crawl_config.start_urls).toEqual([`${one.base}/`, `${two.base}/`]);
  });
});

async function crawlToEndOf(jobId: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const job = await getCrawlJob(db.pool, jobId);
    if (job.status === 'completed' || job.status === 'failed' || job.status === 'cancelled') return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`job ${jobId} did not finish`);
}

describe('no empty libraries', () => {
  it('removes the source of a first crawl that stored nothing (404, refused), keeping the failed job', async () => {
    const missing = await site({});
    const closed = await site({});
    await closed.close();
    for (const url of [`${missing.base}/nothing-here/`, `${closed.base}/`]) {
      const job = await crawlToEnd(db, db.config, { name: `empty-${url}`, start_urls: [url], max_depth: 0 });
      expect(job.status).toBe('failed');
      expect(job.error).toMatch(/No page was crawled/);
      expect(job.source_id).toBeNull();
      const left = await db.pool.query('SELECT 1 FROM sources WHERE name = $1', [`empty-${url}`]);
      expect(left.rowCount).toBe(0);
      await expect(resumeCrawl(db, db.config, job.job_id)).rejects.toMatchObject({ code: 'conflict' });
    }
    expect((await listSources(db.pool, { query: 'empty' })).items).toEqual([]);
  });

  it('keeps a source with pages when a later crawl of it fails', async () => {
    const pages: Record<string, string> = { '/': barePage('Kept', 'kept = True') };
    const s = await site(pages);
    const first = await crawlToEnd(db, db.config, { name: 'Kept', start_urls: [`${s.base}/`], max_depth: 0 });
    delete pages['/'];
    const failed = await crawlToEnd(db, db.config, { name: 'Kept', start_urls: [`${s.base}/`], max_depth: 0 });
    expect(failed.status).toBe('failed');
    expect(failed.source_id).toBe(first.source_id);
    expect((await sourceRow(first.source_id!)).name).toBe('Kept');
  });
});

describe('site rules', () => {
  it('labels sites by host, port and directory', () => {
    expect(siteLabel('http://127.0.0.1:8001/')).toBe('127.0.0.1-8001');
    expect(siteLabel('https://user.github.io/project/index.html')).toBe('user.github.io/project');
    expect(siteLabel('not a url')).toBe('');
    expect(distinguishedName('127.0.0.1', 'http://127.0.0.1:8001/')).toBe('127.0.0.1-8001');
    expect(distinguishedName('Python docs', 'http://127.0.0.1:8001/')).toBe('Python docs (127.0.0.1-8001)');
    expect(isUnderBaseUrl('https://user.github.io/a/x.html', 'https://user.github.io/a/')).toBe(true);
    expect(isUnderBaseUrl('https://user.github.io/b/', 'https://user.github.io/a/')).toBe(false);
    expect(isUnderBaseUrl('http://h:8001/', 'http://h:8000/')).toBe(false);
  });

  it('never throws on hostile URLs and names, and keeps names within 200 characters', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.webUrl({ withQueryParameters: true, withFragments: true })), fc.string({ maxLength: 300 }), fc.integer({ min: 1, max: 60 }), (url, name, attempt) => {
        const label = siteLabel(url);
        expect(label.length).toBeLessThanOrEqual(150);
        const distinct = distinguishedName(name || 'x', url, attempt);
        expect(distinct.length).toBeGreaterThan(0);
        expect(distinct.length).toBeLessThanOrEqual(200);
        expect(typeof isUnderBaseUrl(url, url)).toBe('boolean');
      }),
    );
  });
});
