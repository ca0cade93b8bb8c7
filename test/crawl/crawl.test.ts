import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCrawl, startCrawlWorkers } from '../../src/core/crawl/index.js';
import type { CrawlWorkers } from '../../src/core/crawl/index.js';
import { ValidationError } from '../../src/core/errors.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { crawlToEnd, documentPaths, FAST_WORKER, frontier, snippetCount } from './helpers/crawl.js';
import { docPage, graphRoutes, isSiteFile, reachable, TestSite } from './helpers/site.js';

let db: TestDatabase;
let workers: CrawlWorkers;
const sites: TestSite[] = [];

async function site(routes: Parameters<typeof TestSite.start>[0]): Promise<TestSite> {
  const s = await TestSite.start(routes);
  sites.push(s);
  return s;
}

beforeAll(async () => {
  db = await createTestDatabase();
  workers = await startCrawlWorkers(db, db.config, FAST_WORKER);
});

afterAll(async () => {
  await workers?.stop();
  for (const s of sites) await s.close();
  await db?.drop();
});

// A graph where the shortest path matters: /d is 2 hops away through /b (slow) but 3 through /a -> /c, so
// a crawler that keeps the first depth it sees would stop at /d and miss /e at max_depth 3.
const GRAPH: Record<string, string[]> = {
  '/': ['/a', '/b', '/'],
  '/a': ['/c', '/'],
  '/b': ['/d'],
  '/c': ['/d', '/c2'],
  '/c2': [],
  '/d': ['/e'],
  '/e': ['/f'],
  '/f': [],
};

describe('depth', () => {
  for (const depth of [0, 1, 2, 3]) {
    it(`max_depth ${depth} stores exactly the pages within ${depth} links`, async () => {
      const routes = graphRoutes(GRAPH);
      routes['/b'] = { ...routes['/b']!, delayMs: 300 };
      const s = await site(routes);
      const job = await crawlToEnd(db, db.config, { name: `depth${depth}`, start_urls: [s.url('/')], max_depth: depth });
      expect(job.status).toBe('completed');
      const expected = [...reachable(GRAPH, '/', depth)].sort();
      expect(await documentPaths(db.pool, job.source_id)).toEqual(expected);
      expect(job.pages_crawled).toBe(expected.length);
      // Nothing beyond the depth was even requested.
      const requested = new Set(s.log.filter((r) => !isSiteFile(r.path)).map((r) => r.path));
      expect([...requested].sort()).toEqual(expected);
      expect(await snippetCount(db.pool, job.source_id)).toBe(expected.length);
    });
  }
});

describe('scope', () => {
  it('stays on the start host without a domain filter, and follows the filter when given', async () => {
    const s = await site({});
    s.set('/', { body: docPage({ title: 'root', links: [s.url('/local'), s.url('/other', 'localhost'), 'https://example.invalid/x'] }) });
    s.set('/local', { body: docPage({ title: 'local' }) });
    s.set('/other', { body: docPage({ title: 'other' }) });
    const plain = await crawlToEnd(db, db.config, { name: 'scope-plain', start_urls: [s.url('/')] });
    expect(await documentPaths(db.pool, plain.source_id)).toEqual(['/', '/local']);
    expect(s.requests(undefined, 'localhost')).toHaveLength(0);

    // A domain filter must be a registrable domain: localhost (the test's second host) is refused before anything
    // is written; createScope's handling of a filter is covered in units.test.ts.
    const refused = await crawlToEnd(db, db.config, { name: 'scope-filter', start_urls: [s.url('/')], domain_filter: 'localhost' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ValidationError);
  });

  it('url_patterns include and exclude_patterns exclude (start URLs always crawled)', async () => {
    const s = await site({});
    s.set('/', { body: docPage({ title: 'root', links: ['/docs/a', '/docs/old/b', '/blog/c', '/docs/d?x=1'] }) });
    for (const p of ['/docs/a', '/docs/old/b', '/blog/c', '/docs/d']) s.set(p, { body: docPage({ title: p }) });
    const job = await crawlToEnd(db, db.config, {
      name: 'patterns',
      start_urls: [s.url('/')],
      url_patterns: ['/docs/**'],
      exclude_patterns: ['**/old/**'],
    });
    expect(await documentPaths(db.pool, job.source_id)).toEqual(['/', '/docs/a', '/docs/d?x=1']);
    expect(s.count('/blog/c')).toBe(0);
    expect(s.count('/docs/old/b')).toBe(0);
  });

  it('normalises URLs: fragments, default ports, index.html and trailing slashes are one page', async () => {
    const s = await site({});
    s.set('/', { body: docPage({ title: 'root', links: ['/guide/', '/guide/index.html', '/guide#intro', '/guide/#x', s.url('/guide/')] }) });
    s.set('/guide/', { body: docPage({ title: 'guide' }) });
    const job = await crawlToEnd(db, db.config, { name: 'normalise', start_urls: [s.url('/')] });
    expect(await documentPaths(db.pool, job.source_id)).toEqual(['/', '/guide/']);
    expect(s.count('/guide/') + s.count('/guide/index.html') + s.count('/guide')).toBe(1);
  });
});

describe('robots.txt', () => {
  it('honours Disallow for our group and identifies itself', async () => {
    const s = await site({});
    s.set('/robots.txt', {
      headers: { 'content-type': 'text/plain' },
      body: 'User-agent: *\nDisallow: /\n\nUser-agent: docdex\nDisallow: /private\nAllow: /private/ok\n',
    });
    s.set('/', { body: docPage({ title: 'root', links: ['/a', '/private/secret', '/private/ok'] }) });
    for (const p of ['/a', '/private/secret', '/private/ok']) s.set(p, { body: docPage({ title: p }) });
    const job = await crawlToEnd(db, db.config, { name: 'robots', start_urls: [s.url('/')] });
    expect(await documentPaths(db.pool, job.source_id)).toEqual(['/', '/a', '/private/ok']);
    expect(s.count('/private/secret')).toBe(0);
    const rows = await frontier(db.pool, job.job_id);
    expect(rows.find((r) => r.url.endsWith('/private/secret'))).toMatchObject({ status: 'skipped', skip_reason: 'disallowed by robots.txt' });
    expect(job.pages_skipped).toBe(1);
    for (const r of s.log) expect(r.userAgent).toMatch(/^docdex\/\S+ \(\+https:\/\//);
  });

  it('fails pages when robots.txt answers 5xx, and crawls everything when it is missing', async () => {
    const down = await site({ '/robots.txt': { status: 503 }, '/': { body: docPage({ title: 'x' }) } });
    const failed = await crawlToEnd(db, db.config, { name: 'robots-503', start_urls: [down.url('/')] });
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/robots\.txt unreachable/);
    expect(down.count('/')).toBe(0);
  });
});

describe('fetching', () => {
  it('follows redirects, stores under the final URL, detects loops and too many hops', async () => {
    const s = await site({});
    s.set('/', { body: docPage({ title: 'root', links: ['/old', '/new', '/loop1', '/hop1', '/elsewhere'] }) });
    s.set('/old', { status: 301, headers: { location: '/new' } });
    s.set('/new', { body: docPage({ title: 'new' }) });
    s.set('/loop1', { status: 302, headers: { location: '/loop2' } });
    s.set('/loop2', { status: 302, headers: { location: '/loop1' } });
    s.set('/hop1', { status: 307, headers: { location: '/hop2' } });
    s.set('/hop2', { status: 308, headers: { location: '/hop3' } });
    s.set('/hop3', { body: docPage({ title: 'hop3' }) });
    s.set('/elsewhere', { status: 301, headers: { location: 'https://example.invalid/' } });
    const job = await crawlToEnd(db, db.config, { name: 'redirects', start_urls: [s.url('/')] });
    expect(await documentPaths(db.pool, job.source_id)).toEqual(['/', '/hop3', '/new']);
    const rows = await frontier(db.pool, job.job_id);
    const by = (p: string) => rows.find((r) => new URL(r.url).pathname === p);
    expect(by('/loop1')).toMatchObject({ status: 'failed' });
    expect(by('/loop1')!.last_error).toMatch(/redirect loop/);
    expect(by('/hop3')).toMatchObject({ status: 'done' });
    expect(by('/hop1')).toMatchObject({ status: 'skipped' });
    expect(by('/elsewhere')).toMatchObject({ status: 'skipped' });
    expect(by('/elsewhere')!.skip_reason).toMatch(/out of scope/);
    // /new was linked directly and reached through /old: fetched as a page once, never stored twice.
    const documents = await db.pool.query('SELECT url FROM documents WHERE source_id = $1 AND url LIKE $2', [job.source_id, '%/new']);
    expect(documents.rowCount).toBe(1);
  });

  it('records 404, 500 (after retries), timeouts, huge bodies and wrong content types', async () => {
    let flaky = 0;
    const s = await site({
      '/missing': { status: 404 },
      '/error': { status: 500 },
      '/flaky': () => (++flaky === 1 ? { status: 503, headers: { 'retry-after': '0' } } : { body: docPage({ title: 'flaky' }) }),
      '/slow': { delayMs: 2500, body: docPage({ title: 'slow' }) },
      '/huge': { body: Buffer.alloc(11 * 1024 * 1024, 'x') },
      '/huge-stream': { streamBytes: 11 * 1024 * 1024 },
      '/image.png': { headers: { 'content-type': 'image/png' }, body: Buffer.from([0x89, 0x50, 0x4e, 0x47]) },
      '/notes.txt': { headers: { 'content-type': 'text/plain' }, body: 'Example:\n\n    pip install docdex\n' },
      '/readme.md': { headers: { 'content-type': 'text/markdown' }, body: '# Readme\n\n```js\nconsole.log(1)\n```\n' },
    });
    s.set('/', { body: docPage({ title: 'root', links: ['/missing', '/error', '/flaky', '/slow', '/huge', '/huge-stream', '/image.png', '/notes.txt', '/readme.md'] }) });
    const job = await crawlToEnd(db, db.config, { name: 'errors', start_urls: [s.url('/')] });
    expect(job.status).toBe('completed');
    const rows = await frontier(db.pool, job.job_id);
    const by = (p: string) => rows.find((r) => new URL(r.url).pathname === p)!;
    expect(by('/missing')).toMatchObject({ status: 'failed', http_status: 404 });
    expect(by('/error')).toMatchObject({ status: 'failed', http_status: 500 });
    expect(s.count('/error')).toBe(2); // one retry (FAST_FETCH.maxRetries = 1)
    expect(by('/flaky')).toMatchObject({ status: 'done' });
    expect(by('/slow')).toMatchObject({ status: 'failed' });
    expect(by('/slow').last_error).toMatch(/timeout/);
    expect(by('/huge')).toMatchObject({ status: 'skipped' });
    expect(by('/huge').skip_reason).toMatch(/larger than 10 MB/);
    expect(by('/huge-stream')).toMatchObject({ status: 'skipped' });
    expect(by('/image.png')).toMatchObject({ status: 'skipped' });
    expect(by('/image.png').skip_reason).toMatch(/unsupported content type image\/png/);
    expect(by('/notes.txt')).toMatchObject({ status: 'done' });
    expect(by('/readme.md')).toMatchObject({ status: 'done' });
    expect(job.pages_failed).toBe(3);
    expect(job.pages_skipped).toBe(3);
    expect(job.pages_crawled).toBe(4);
  });

  it('honours Retry-After on 429', async () => {
    let n = 0;
    const s = await site({
      '/': () => (++n === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { body: docPage({ title: 'ok' }) }),
    });
    const job = await crawlToEnd(db, db.config, { name: 'retry-after', start_urls: [s.url('/')], max_depth: 0 });
    expect(job.status).toBe('completed');
    const times = s.requests('/').map((r) => r.t);
    expect(times).toHaveLength(2);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(1000);
  });

  it('respects rel=canonical: a duplicate page is stored once under its canonical URL', async () => {
    const s = await site({});
    s.set('/', { body: docPage({ title: 'root', links: ['/page?ref=nav', '/print/page'] }) });
    const canonical = `<link rel="canonical" href="${s.url('/page')}">`;
    s.set('/page', { body: docPage({ title: 'page', head: canonical, code: 'x = 1' }) });
    s.set('/print/page', { body: docPage({ title: 'page (print)', head: canonical, code: 'x = 1' }) });
    const job = await crawlToEnd(db, db.config, { name: 'canonical', start_urls: [s.url('/')] });
    expect(await documentPaths(db.pool, job.source_id)).toEqual(['/', '/page']);
  });
});

describe('sources and names', () => {
  it('detects the name from og:site_name, the <title> suffix or the host, and the description', async () => {
    const og = await site({ '/': { body: docPage({ title: 'Home', head: '<meta property="og:site_name" content="Widget Docs">', description: 'Widgets for everyone.' }) } });
    const a = await crawlToEnd(db, db.config, { start_urls: [og.url('/')], max_depth: 0 });
    expect(a.name).toBe('widget');
    const src = await db.pool.query<{ name: string; description: string; base_url: string; crawl_config: Record<string, unknown> }>(
      'SELECT name, description, base_url, crawl_config FROM sources WHERE id = $1',
      [a.source_id],
    );
    expect(src.rows[0]).toMatchObject({ name: 'widget', description: 'Widgets for everyone.', base_url: og.url('/') });
    expect(src.rows[0]!.crawl_config).toMatchObject({ start_urls: [og.url('/')], max_depth: 0, max_concurrent_crawls: 3 });

    // The name and version from the title (issue #49): gizmo@2.1, described by the site's own title; a given
    // version wins over the site's, and a given name is taken as it is, without a version.
    const titled = await site({ '/': { body: docPage({ title: 'json', siteName: 'Gizmo 2.1 documentation' }) } });
    const gizmo = await crawlToEnd(db, db.config, { start_urls: [titled.url('/')], max_depth: 0 });
    expect(gizmo).toMatchObject({ name: 'gizmo', version: '2.1' });
    const described = await db.pool.query<{ description: string }>('SELECT description FROM sources WHERE id = $1', [gizmo.source_id]);
    expect(described.rows[0]!.description).toBe('Gizmo 2.1 documentation');
    expect(await crawlToEnd(db, db.config, { start_urls: [titled.url('/')], max_depth: 0, version: '2.1.7' })).toMatchObject({ name: 'gizmo', version: '2.1.7' });
    expect(await crawlToEnd(db, db.config, { start_urls: [titled.url('/')], max_depth: 0, name: 'Gizmo docs' })).toMatchObject({ name: 'Gizmo docs', version: '' });

    const bare = await site({ '/': { body: '<html><body><pre><code>x</code></pre></body></html>' } });
    expect((await crawlToEnd(db, db.config, { start_urls: [bare.url('/', 'localhost')], max_depth: 0 })).name).toBe('localhost');
  });

  it('creates or updates the source by (name, version); metadata.description wins; one active crawl per source', async () => {
    const s = await site({ '/': { body: docPage({ title: 'v', description: 'from the page' }) } });
    const first = await crawlToEnd(db, db.config, { name: 'Lib', version: '1.0', start_urls: [s.url('/')], max_depth: 0, metadata: { description: 'from metadata', repo: 'x/y' } });
    const second = await crawlToEnd(db, db.config, { name: 'Lib', version: '1.0', start_urls: [s.url('/')], max_depth: 0 });
    const other = await crawlToEnd(db, db.config, { name: 'Lib', version: '2.0', start_urls: [s.url('/')], max_depth: 0 });
    expect(second.source_id).toBe(first.source_id);
    expect(other.source_id).not.toBe(first.source_id);
    const { rows } = await db.pool.query<{ description: string; metadata: Record<string, unknown> }>('SELECT description, metadata FROM sources WHERE id = $1', [first.source_id]);
    expect(rows[0]).toMatchObject({ description: 'from metadata', metadata: { repo: 'x/y', description: 'from metadata' } });
    const v2 = await db.pool.query<{ description: string }>('SELECT description FROM sources WHERE id = $1', [other.source_id]);
    expect(v2.rows[0]!.description).toBe('from the page');

    const slow = await site({ '/': { delayMs: 500, body: docPage({ title: 'slow' }) } });
    const running = await startCrawl(db, db.config, { name: 'Busy', start_urls: [slow.url('/')], max_depth: 0 });
    await expect(startCrawl(db, db.config, { name: 'Busy', start_urls: [slow.url('/')], max_depth: 0 })).rejects.toMatchObject({ code: 'conflict' });
    // startCrawl wakes the workers before it reads the job back, so a worker may already have adopted it.
    expect(['queued', 'running']).toContain(running.status);
  });

  it('refuses invalid requests before writing anything', async () => {
    const before = await db.pool.query<{ s: number; j: number }>('SELECT (SELECT count(*) FROM sources)::int AS s, (SELECT count(*) FROM crawl_jobs)::int AS j');
    const bad = [
      { name: 'x', start_urls: ['not a url'] },
      { name: 'x', start_urls: ['ftp://example.com/'] },
      { name: 'x', start_urls: [] },
      { name: 'x', start_urls: ['https://example.com/'], max_depth: 4 },
      { name: 'x', start_urls: ['https://example.com/'], max_concurrent_crawls: 0 },
      { name: 'x', start_urls: ['https://example.com/'], max_concurrent_crawls: 21 },
      { name: 'x', start_urls: ['https://example.com/'], url_patterns: ['/docs/[a'] },
      { name: 'x', start_urls: ['https://example.com/'], domain_filter: 'not a domain!' },
      { name: 'x', start_urls: ['https://example.com/'], domain_filter: 'co.uk' },
      { name: 'x', start_urls: ['https://example.com/'], max_pages: 0 },
      { name: 'x', start_urls: ['https://example.com/'], metadata: { blob: 'x'.repeat(20_000) } },
    ];
    for (const request of bad) {
      const error = await startCrawl(db, db.config, request as never).catch((e: unknown) => e);
      expect(error, JSON.stringify(request)).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).exitCode).toBe(2);
    }
    const after = await db.pool.query<{ s: number; j: number }>('SELECT (SELECT count(*) FROM sources)::int AS s, (SELECT count(*) FROM crawl_jobs)::int AS j');
    expect(after.rows[0]).toEqual(before.rows[0]);
  });
});
