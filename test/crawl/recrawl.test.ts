import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelCrawl, getCrawlJob, startCrawlWorkers, waitForJob, startCrawl } from '../../src/core/crawl/index.js';
import type { CrawlJob, CrawlWorkers } from '../../src/core/crawl/index.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { crawlToEnd, documentPaths, FAST_WORKER, frontier, snippetCount } from './helpers/crawl.js';
import { docPage, TestSite } from './helpers/site.js';

let db: TestDatabase;
let workers: CrawlWorkers;
let site: TestSite;

beforeAll(async () => {
  db = await createTestDatabase();
  workers = await startCrawlWorkers(db, db.config, FAST_WORKER);
  site = await TestSite.start();
});

afterAll(async () => {
  await workers?.stop();
  await site?.close();
  await db?.drop();
});

const LAST_MODIFIED = 'Wed, 01 Jan 2025 00:00:00 GMT';

describe('recrawl', () => {
  it('skips unchanged pages (304 or same MD5) without re-extracting, re-stores changed ones, removes vanished ones', async () => {
    const links = ['/etag', '/plain', '/dated', '/changes', '/vanishes'];
    site.set('/', { etag: true, body: docPage({ title: 'root', links, code: 'root()' }) });
    site.set('/etag', { etag: true, body: docPage({ title: 'etag', code: 'etag()' }) });
    site.set('/plain', { body: docPage({ title: 'plain', code: 'plain()' }) });
    site.set('/dated', { lastModified: LAST_MODIFIED, body: docPage({ title: 'dated', code: 'dated()' }) });
    site.set('/changes', { etag: true, body: docPage({ title: 'changes', code: 'before_change()' }) });
    site.set('/vanishes', { etag: true, body: docPage({ title: 'vanishes', code: ['vanishes()', 'shared_code()'] }) });
    site.set('/other', { body: docPage({ title: 'other', code: 'other()' }) });
    const request = { name: 'recrawl', start_urls: [site.url('/')], max_depth: 1 };

    const first = await crawlToEnd(db, db.config, request);
    expect(first.status).toBe('completed');
    expect(first.pages_crawled).toBe(6);
    expect(await snippetCount(db.pool, first.source_id)).toBe(7);
    const docsBefore = await db.pool.query<{ url: string; updated_at: Date; etag: string | null; last_modified: string | null }>(
      'SELECT url, updated_at, etag, last_modified FROM documents WHERE source_id = $1',
      [first.source_id],
    );
    const updatedBefore = new Map(docsBefore.rows.map((r) => [new URL(r.url).pathname, r.updated_at.getTime()]));
    expect(docsBefore.rows.find((r) => r.url.endsWith('/etag'))!.etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(docsBefore.rows.find((r) => r.url.endsWith('/dated'))!.last_modified).toBe(LAST_MODIFIED);
    const plainSnippet = await db.pool.query<{ id: number }>(`SELECT id FROM snippets WHERE source_id = $1 AND code = 'plain()'`, [first.source_id]);

    // The site changes: one page edited, one gone (still linked), the rest identical.
    site.set('/changes', { etag: true, body: docPage({ title: 'changes', code: 'after_change()' }) });
    site.set('/vanishes', { status: 404 });
    site.resetLog();

    const second = await crawlToEnd(db, db.config, request);
    expect(second.status).toBe('completed');
    expect(second.source_id).toBe(first.source_id);
    // Every page was requested exactly once; three of them answered 304 (no body at all).
    for (const p of ['/', ...links]) expect(site.count(p), p).toBe(1);
    expect(
      site.log
        .filter((r) => r.status === 304)
        .map((r) => r.path)
        .sort(),
    ).toEqual(['/', '/dated', '/etag']);
    expect(site.requests('/etag')[0]!.ifNoneMatch).toMatch(/^"[0-9a-f]{32}"$/);
    expect(site.requests('/dated')[0]!.ifModifiedSince).toBe(LAST_MODIFIED);
    expect(site.requests('/plain')[0]!.ifNoneMatch).toBeNull();

    const rows = await frontier(db.pool, second.job_id);
    const status = Object.fromEntries(rows.map((r) => [new URL(r.url).pathname, [r.status, r.http_status]]));
    expect(status).toEqual({
      '/': ['unchanged', 304],
      '/etag': ['unchanged', 304],
      '/plain': ['unchanged', 200],
      '/dated': ['unchanged', 304],
      '/changes': ['done', 200],
      '/vanishes': ['failed', 404],
    });
    expect(second).toMatchObject({ pages_crawled: 1, pages_skipped: 4, pages_failed: 1, snippets_stored: 1 });

    // Unchanged documents were not rewritten; the plain one kept its snippet row.
    const docsAfter = await db.pool.query<{ url: string; updated_at: Date }>('SELECT url, updated_at FROM documents WHERE source_id = $1', [first.source_id]);
    for (const r of docsAfter.rows) {
      const p = new URL(r.url).pathname;
      if (p !== '/changes') expect(r.updated_at.getTime(), p).toBe(updatedBefore.get(p));
    }
    expect(await documentPaths(db.pool, first.source_id)).toEqual(['/', '/changes', '/dated', '/etag', '/plain']);
    const plainAfter = await db.pool.query<{ id: number }>(`SELECT id FROM snippets WHERE source_id = $1 AND code = 'plain()'`, [first.source_id]);
    expect(plainAfter.rows[0]!.id).toBe(plainSnippet.rows[0]!.id);
    const codes = (await db.pool.query<{ code: string }>("SELECT code FROM snippets WHERE source_id = $1 AND kind = 'snippet' ORDER BY code", [first.source_id])).rows.map((r) => r.code);
    expect(codes).toEqual(['after_change()', 'dated()', 'etag()', 'plain()', 'root()']);
    const counters = await db.pool.query<{ snippet_count: number; document_count: number }>('SELECT snippet_count, document_count FROM sources WHERE id = $1', [first.source_id]);
    expect(counters.rows[0]).toEqual({ snippet_count: 5, document_count: 5 });
  });

  it('seeds the frontier from sitemap.xml when asked, within the depth and patterns', async () => {
    const s = await TestSite.start({
      '/robots.txt': { headers: { 'content-type': 'text/plain' }, body: `Sitemap: /maps/index.xml\n` },
      '/': { body: docPage({ title: 'home', links: ['/linked'] }) },
      '/linked': { body: docPage({ title: 'linked' }) },
      '/only-in-sitemap': { body: docPage({ title: 'only in sitemap' }) },
      '/blog/post': { body: docPage({ title: 'post' }) },
    });
    try {
      s.set('/robots.txt', { headers: { 'content-type': 'text/plain' }, body: `Sitemap: ${s.url('/maps/index.xml')}\n` });
      s.set('/maps/index.xml', {
        headers: { 'content-type': 'application/xml' },
        body: `<sitemapindex><sitemap><loc>${s.url('/maps/pages.xml')}</loc></sitemap></sitemapindex>`,
      });
      s.set('/maps/pages.xml', {
        headers: { 'content-type': 'application/xml' },
        body: `<urlset>${['/only-in-sitemap', '/blog/post', '/linked'].map((p) => `<url><loc>${s.url(p)}</loc></url>`).join('')}</urlset>`,
      });
      const job = await crawlToEnd(db, db.config, { name: 'sitemap', start_urls: [s.url('/')], use_sitemap: true, exclude_patterns: ['/blog/**'] });
      expect(await documentPaths(db.pool, job.source_id)).toEqual(['/', '/linked', '/only-in-sitemap']);
      const without = await crawlToEnd(db, db.config, { name: 'no-sitemap', start_urls: [s.url('/')] });
      expect(await documentPaths(db.pool, without.source_id)).toEqual(['/', '/linked']);
    } finally {
      await s.close();
    }
  });

  it('waitForJob stops at once for a signal aborted before it listens (a Ctrl-C as the first progress line shows)', async () => {
    const s = await TestSite.start({ '/': { delayMs: 5_000, body: docPage({ title: 'slow' }) } });
    const job = await startCrawl(db, db.config, { name: 'aborted-wait', start_urls: [s.url('/')] });
    try {
      const stop = new AbortController();
      stop.abort(new Error('stopped following'));
      // Before, the abort was missed and this waited for the crawl to end, then resolved with it.
      await expect(waitForJob(db, job.job_id, undefined, { signal: stop.signal })).rejects.toThrow('stopped following');
      expect((await getCrawlJob(db.pool, job.job_id)).status).not.toBe('completed');
    } finally {
      // It may have ended by now (the slow page over the workers' fetch timeout).
      await cancelCrawl(db.pool, job.job_id).catch(() => undefined);
      await s.close();
    }
  });

  it('publishes progress and completion events that waitForJob follows', async () => {
    const paths = Array.from({ length: 12 }, (_, i) => `/e${i}`);
    const s = await TestSite.start({ '/': { body: docPage({ title: 'events', links: paths }) } });
    try {
      for (const p of paths) s.set(p, { delayMs: 80, body: docPage({ title: p }) });
      const job = await startCrawl(db, db.config, { name: 'events', start_urls: [s.url('/')], max_concurrent_crawls: 2 });
      const seen: CrawlJob[] = [];
      const final = await waitForJob(db, job.job_id, (j) => seen.push(j), { pollMs: 60_000, signal: AbortSignal.timeout(20_000) });
      expect(final.status).toBe('completed');
      // With the poll fallback out of the way, only NOTIFY events can have produced intermediate updates.
      const running = seen.filter((j) => j.status === 'running');
      expect(running.length).toBeGreaterThan(1);
      expect(running.some((j) => j.pages_per_second > 0 && j.current_url !== null)).toBe(true);
      expect(running.some((j) => j.eta_seconds !== null && j.eta_seconds > 0)).toBe(true);
      expect(final.pages_crawled).toBe(13);
    } finally {
      await s.close();
    }
  });
});
