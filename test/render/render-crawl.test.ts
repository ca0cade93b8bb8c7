import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startCrawlWorkers } from '../../src/core/crawl/index.js';
import type { CrawlJob, CrawlWorkers } from '../../src/core/crawl/index.js';
import { describeWithBrowser } from '../helpers/browser.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { crawlToEnd, FAST_WORKER } from '../crawl/helpers/crawl.js';
import { isShellPage, servePrerenderedSite, serveRenderedSite, sitePages } from './helpers/spa-sites.js';
import type { ServedSite, SiteShape } from './helpers/spa-sites.js';

/**
 * Client-rendered documentation sites crawled with `render: auto` through the real crawl path (workers, the
 * frontier, the extraction pool, the store) and a real Chromium: what they index is what a crawl of the same
 * content served as plain HTML indexes.
 */

let db: TestDatabase;
let workers: CrawlWorkers;
const servers: ServedSite[] = [];

async function track<T extends { close(): Promise<void> }>(server: Promise<T>): Promise<T> {
  const s = await server;
  servers.push(s as unknown as ServedSite);
  return s;
}

async function codeOf(pool: pg.Pool, sourceId: string | null): Promise<string[]> {
  const { rows } = await pool.query<{ code: string; language: string }>("SELECT code, language FROM snippets WHERE source_id = $1 AND kind = 'snippet'", [sourceId]);
  return rows.map((r) => `${r.language}: ${r.code}`).sort();
}

async function documentUrls(pool: pg.Pool, sourceId: string | null): Promise<string[]> {
  const { rows } = await pool.query<{ url: string }>('SELECT url FROM documents WHERE source_id = $1 ORDER BY url', [sourceId]);
  return rows.map((r) => {
    const u = new URL(r.url);
    return u.pathname + u.hash;
  });
}

/** Crawls the rendered site (auto) and its pre-rendered twin (never); returns both jobs. */
async function crawlBoth(shape: SiteShape, count: number): Promise<{ rendered: CrawlJob; twin: CrawlJob; site: ServedSite }> {
  const pages = sitePages(shape, count);
  const site = await track(serveRenderedSite(shape, pages));
  const twinSite = await track(servePrerenderedSite(pages));
  const rendered = await crawlToEnd(db, db.config, { name: `${shape}-rendered`, start_urls: [`${site.url}/`], max_depth: 2, render: 'auto' }, 90_000);
  const twin = await crawlToEnd(db, db.config, { name: `${shape}-twin`, start_urls: [`${twinSite.url}/`], max_depth: 2, render: 'never' }, 60_000);
  expect(rendered.status).toBe('completed');
  expect(twin.status).toBe('completed');
  return { rendered, twin, site };
}

describeWithBrowser('client-rendered sites, crawled with render auto', () => {
  beforeAll(async () => {
    db = await createTestDatabase();
    workers = await startCrawlWorkers(db, db.config, FAST_WORKER);
  });

  afterAll(async () => {
    await workers?.stop();
    await Promise.all(servers.map((s) => s.close()));
    await db?.drop();
  });

  it('a single-page app with history routes indexes what its pre-rendered twin does', async () => {
    const { rendered, twin, site } = await crawlBoth('history', 4);
    const code = await codeOf(db.pool, rendered.source_id);
    expect(code).toHaveLength(4);
    expect(code).toEqual(await codeOf(db.pool, twin.source_id));
    expect(await documentUrls(db.pool, rendered.source_id)).toEqual(await documentUrls(db.pool, twin.source_id));
    expect(rendered.pages_rendered).toBe(4);
    expect(rendered.render_hint).toBeNull();
    // The browser was given the fetched document: each page was requested once, by the crawler.
    expect(site.hits.filter((p) => p === '/guide/page-1')).toHaveLength(1);
  }, 180_000);

  it('a hash-routed site: each #/ route is a page of its own', async () => {
    const { rendered, twin } = await crawlBoth('hash', 4);
    expect(await codeOf(db.pool, rendered.source_id)).toEqual(await codeOf(db.pool, twin.source_id));
    const urls = await documentUrls(db.pool, rendered.source_id);
    for (const route of ['/#/guide/page-1', '/#/guide/page-2', '/#/guide/page-3']) expect(urls).toContain(route);
    expect(rendered.pages_rendered).toBeGreaterThanOrEqual(4);
  }, 180_000);

  it('a mixed site: only the pages that need it are rendered, and the job says how many', async () => {
    const count = 6;
    const { rendered, twin } = await crawlBoth('mixed', count);
    expect(await codeOf(db.pool, rendered.source_id)).toEqual(await codeOf(db.pool, twin.source_id));
    const shells = Array.from({ length: count }, (_, i) => i).filter((i) => isShellPage('mixed', i)).length;
    expect(rendered.pages_rendered).toBe(shells);
    expect(rendered.pages_crawled).toBe(count);
  }, 180_000);

  // SECURITY.md, "What a page's scripts may reach": "An answer from another origin keeps the browser's
  // protections: it carries the CORS headers its server sent, never permissive ones, so the page reads it only
  // when that server allows it; a subrequest's redirect that leaves its origin is not followed."
  it('a cross-origin answer is readable exactly when its server grants CORS; same-origin redirects are followed', async () => {
    const cdn = http.createServer((req, res) => {
      if (req.url === '/lib.mjs') return void res.writeHead(200, { 'content-type': 'text/javascript', 'access-control-allow-origin': '*' }).end('export const LIB = "module from the cdn";');
      if (req.url === '/open.txt') return void res.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' }).end('open answer');
      res.writeHead(200, { 'content-type': 'text/plain' }).end('closed answer');
    });
    await new Promise<void>((resolve) => cdn.listen(0, '127.0.0.1', resolve));
    const cdnUrl = `http://127.0.0.1:${(cdn.address() as AddressInfo).port}`;
    const page = `<!doctype html><html><head><title>Loading</title></head><body><div id="root"></div><script type="module">
import { LIB } from '${cdnUrl}/lib.mjs';
const read = (u) => fetch(u).then((r) => r.text()).catch(() => 'blocked');
const got = [LIB, await read('${cdnUrl}/open.txt'), await read('${cdnUrl}/closed.txt'), await read('/moved'), await read('/away')];
document.getElementById('root').innerHTML = '<main><h1>CORS page</h1><p>' + got.join(' | ') + '</p><pre><code class="language-python">import cors_page</code></pre></main>';
</script></body></html>`;
    const site = http.createServer((req, res) => {
      if (req.url === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(page);
      if (req.url === '/moved') return void res.writeHead(302, { location: '/data.txt' }).end();
      if (req.url === '/away') return void res.writeHead(302, { location: `${cdnUrl}/open.txt` }).end();
      if (req.url === '/data.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('own data');
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    try {
      const start = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
      const job = await crawlToEnd(db, db.config, { name: 'cors', start_urls: [start], max_depth: 0, render: 'always' }, 90_000);
      expect(job.status).toBe('completed');
      const { rows } = await db.pool.query<{ markdown: string }>('SELECT markdown FROM documents WHERE source_id = $1', [job.source_id]);
      expect(rows[0]!.markdown).toContain('module from the cdn | open answer | blocked | own data | blocked');
    } finally {
      await Promise.all([cdn, site].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    }
  }, 180_000);

  it("a rendered page's scripts never reach an address the crawl may not (fetch, XHR, iframe, WebSocket, beacon)", async () => {
    let connections = 0;
    const secret = http.createServer((_req, res) => res.end('AWS_SECRET_ACCESS_KEY'));
    secret.on('connection', () => connections++);
    await new Promise<void>((resolve) => secret.listen(0, '127.0.0.2', resolve));
    const target = `127.0.0.2:${(secret.address() as AddressInfo).port}`;
    const probes = `
fetch('http://${target}/fetch').catch(() => {});
const x = new XMLHttpRequest(); x.open('GET', 'http://${target}/xhr'); x.send();
try { new WebSocket('ws://${target}/ws'); } catch {}
navigator.sendBeacon('http://${target}/beacon', 'x');
const f = document.createElement('iframe'); f.src = 'http://${target}/frame'; document.body.appendChild(f);
const i = new Image(); i.src = 'http://${target}/img.png';
fetch('http://localhost:${target.split(':')[1]}/by-name').catch(() => {});
`;
    const site = await track(serveRenderedSite('history', sitePages('probe', 2), probes));
    try {
      // Started like REST and MCP crawls: no loopback beyond CRAWL_ALLOW_HOSTS (127.0.0.1 only in tests).
      const job = await crawlToEnd(db, db.config, { name: 'probe', start_urls: [`${site.url}/`], max_depth: 1, render: 'always' }, 90_000);
      expect(job.status).toBe('completed');
      expect(job.pages_rendered).toBe(2);
      expect(await codeOf(db.pool, job.source_id)).toHaveLength(2);
      expect(connections).toBe(0);
    } finally {
      await new Promise<void>((resolve) => secret.close(() => resolve()));
    }
  }, 180_000);
});
