import type http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelCrawl, startCrawl } from '../../src/core/crawl/jobs.js';
import { mcpRoutes } from '../../src/daemon/mcp/routes.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { crawlWorkerService } from '../../src/daemon/services.js';
import { runCli } from '../helpers/cli.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { listen } from '../helpers/listener.js';
import type { Listener } from '../helpers/listener.js';
import { docPage, serveSite } from '../helpers/site.js';

/**
 * SSRF against the real daemon over HTTP and the official MCP client. "Secret" listeners sit on loopback
 * addresses the allow-list does not name (Linux routes all of 127/8 to lo) and count every TCP connection
 * they accept: the guarantee is that none arrives, not merely that no page is stored. Private and public
 * ranges other than loopback get no traffic from this file; test/security/outbound.test.ts shows the policy
 * refuses them before any socket exists.
 */

const SECRET = 'AWS_SECRET_ACCESS_KEY';
const secretPage = docPage('Internal secrets', [{ heading: 'Keys', prose: 'internal only', code: `${SECRET} = "wJalrXUtnFEMI/K7MDENG"` }]);

const serveSecret = (_req: http.IncomingMessage, res: http.ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/html' }).end(secretPage);
};

async function post(base: string, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

async function get(base: string, path: string): Promise<any> {
  return (await fetch(`${base}${path}`)).json();
}

async function connectMcp(base: string): Promise<Client> {
  const client = new Client({ name: 'ssrf-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
  return client;
}

function toolText(result: Awaited<ReturnType<Client['callTool']>>): string {
  return (result.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? '').join('\n');
}

async function waitForJob(base: string, jobId: string): Promise<any> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const job = await get(base, `/api/crawl-jobs/${jobId}`);
    if (['completed', 'failed', 'cancelled'].includes(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${job.status}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function secretSearchable(base: string): Promise<boolean> {
  const found = await get(base, `/api/search?q=${SECRET}`);
  return JSON.stringify(found).includes('wJalrXUtnFEMI');
}

describe('with CRAWL_ALLOW_HOSTS empty: REST and MCP never reach loopback', () => {
  let db: TestDatabase;
  let daemon: Awaited<ReturnType<typeof startTestDaemon>>;
  let mcp: Client;
  let v4: Listener;
  let v4b: Listener;
  let v6: Listener;
  let targets: string[];

  beforeAll(async () => {
    db = await createTestDatabase({ CRAWL_ALLOW_HOSTS: '' });
    v4 = await listen('127.0.0.1', serveSecret);
    v4b = await listen('127.0.0.2', serveSecret);
    v6 = await listen('::1', serveSecret);
    daemon = await startTestDaemon(db.config, { routes: [...docsIndexRoutes, ...mcpRoutes], services: [crawlWorkerService] });
    mcp = await connectMcp(daemon.base);
    targets = [
      `${v4.url}/secret.html`,
      `http://0.0.0.0:${v4.port}/secret.html`,
      `http://2130706433:${v4.port}/secret.html`,
      `http://0x7f.1:${v4.port}/secret.html`,
      `http://[::ffff:127.0.0.1]:${v4.port}/secret.html`,
      `http://localhost:${v4.port}/secret.html`,
      `${v4b.url}/secret.html`,
      `${v6.url}/secret.html`,
    ];
  });
  afterAll(async () => {
    await mcp?.close();
    await daemon?.close();
    await Promise.all([v4, v4b, v6].map((l) => l?.close()));
    await db?.drop();
  });

  it('refuses each loopback spelling over REST with 422, a clear message, and nothing written', async () => {
    for (const url of targets) {
      for (const path of ['/api/crawl-jobs', '/crawl/init']) {
        const res = await post(daemon.base, path, { start_urls: [url] });
        expect(res.status, url).toBe(422);
        expect(res.body.code).toBe('validation_error');
        expect(res.body.error).toMatch(/refused: .*(loopback|unspecified) address; add it to CRAWL_ALLOW_HOSTS/);
      }
    }
    expect((await db.pool.query('SELECT count(*)::int AS n FROM crawl_jobs')).rows[0].n).toBe(0);
  });

  it('refuses each loopback spelling over MCP init_crawl', async () => {
    for (const url of targets) {
      const result = await mcp.callTool({ name: 'init_crawl', arguments: { start_urls: [url], name: 'secrets' } });
      expect(result.isError, url).toBe(true);
      expect(toolText(result)).toContain('refused: ');
    }
    expect((await db.pool.query('SELECT count(*)::int AS n FROM crawl_jobs')).rows[0].n).toBe(0);
  });

  it('lets the real CLI crawl a 127.0.0.1 site without the allow-list, but refuses 10.x and the metadata address', async () => {
    const site = await serveSite({ '/': docPage('Local docs', [{ heading: 'Use', prose: 'local', code: 'import localdocs' }]) });
    try {
      const ok = await runCli(['crawl', 'start', `${site.base}/`, '--name', 'localdocs', '--depth', '0', '--wait'], { env: db.env, timeout: 120_000 });
      expect(ok.exitCode, String(ok.stderr)).toBe(0);
      const stored = await db.pool.query("SELECT allow_loopback, status FROM crawl_jobs WHERE name = 'localdocs'");
      expect(stored.rows[0]).toEqual({ allow_loopback: true, status: 'completed' });
      // A REST recrawl of that source is an API caller's crawl: it may not reach loopback.
      const source = (await db.pool.query("SELECT id FROM sources WHERE name = 'localdocs'")).rows[0].id;
      const recrawl = await post(daemon.base, `/api/sources/${source}/recrawl`, {});
      expect(recrawl.status).toBe(422);
      expect(recrawl.body.error).toContain('refused: 127.0.0.1 is a loopback address');
      for (const url of ['http://10.0.0.1/docs/', 'http://169.254.169.254/latest/meta-data/', 'http://[fd00::1]/']) {
        const refused = await runCli(['crawl', 'start', url, '--name', 'internal', '--wait'], { env: db.env });
        expect(refused.exitCode, url).toBe(2);
        expect(String(refused.stderr)).toMatch(/^Error: .*refused: .* add it to CRAWL_ALLOW_HOSTS/m);
        expect(String(refused.stderr)).toMatch(/^Hint: /m);
      }
    } finally {
      await site.close();
    }
  });

  it('a REST resume of a CLI-started crawl loses loopback: the job then fails with the refusal', async () => {
    // A CLI crawl of a local port nobody listens on: it retries, so it can be cancelled while it runs.
    const closed = await listen('127.0.0.1', serveSecret);
    const port = closed.port;
    await closed.close();
    const job = await startCrawl(db, db.config, { start_urls: [`http://127.0.0.1:${port}/`], name: 'resumable', max_depth: 0 }, { provenance: 'user' });
    await cancelCrawl(db.pool, job.job_id);
    const resumed = await post(daemon.base, `/api/crawl-jobs/${job.job_id}/resume`, {});
    expect(resumed.status).toBe(202);
    expect((await db.pool.query('SELECT allow_loopback FROM crawl_jobs WHERE id = $1', [job.job_id])).rows[0].allow_loopback).toBe(false);
    const done = await waitForJob(daemon.base, job.job_id);
    expect(done.status).toBe('failed');
    expect(done.error).toContain(`refused: 127.0.0.1 is a loopback address`);
  });

  it('none of the secret listeners ever saw a connection, and search never returns the secret', async () => {
    expect([v4.connections, v4b.connections, v6.connections]).toEqual([0, 0, 0]);
    expect(await secretSearchable(daemon.base)).toBe(false);
  });
});

describe('a hostile site on an allow-listed address cannot lead the crawler to loopback', () => {
  let db: TestDatabase;
  let daemon: Awaited<ReturnType<typeof startTestDaemon>>;
  let mcp: Client;
  let secret2: Listener;
  let secret3: Listener;
  let secretOtherPort: Listener;
  const hostile: Listener[] = [];

  beforeAll(async () => {
    // 127.0.0.1 is listed (the hostile sites live there); 127.0.0.2, 127.0.0.3 are not.
    db = await createTestDatabase({ CRAWL_ALLOW_HOSTS: '127.0.0.1' });
    secret2 = await listen('127.0.0.2', serveSecret);
    secret3 = await listen('127.0.0.3', (req, res) => {
      if (req.url === '/robots.txt') res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
      else if (req.url?.startsWith('/sitemap')) res.writeHead(200, { 'content-type': 'application/xml' }).end(`<urlset><url><loc>${secret3.url}/secret.html</loc></url></urlset>`);
      else serveSecret(req, res);
    });
    secretOtherPort = await listen('127.0.0.1', serveSecret);
    daemon = await startTestDaemon(db.config, { routes: [...docsIndexRoutes, ...mcpRoutes], services: [crawlWorkerService] });
    mcp = await connectMcp(daemon.base);
  });
  afterAll(async () => {
    await mcp?.close();
    await daemon?.close();
    await Promise.all([secret2, secret3, secretOtherPort, ...hostile].map((l) => l?.close()));
    await db?.drop();
  });

  /** A hostile site on 127.0.0.1: `routes` answers by path; anything else is a plain docs page. */
  async function hostileSite(routes: Record<string, (res: http.ServerResponse, self: Listener) => void>): Promise<Listener> {
    const site = await listen('127.0.0.1', (req, res, self) => {
      const route = routes[(req.url ?? '/').split('?')[0]!];
      if (route) route(res, self);
      else if (req.url === '/robots.txt') res.writeHead(404).end();
      else res.writeHead(200, { 'content-type': 'text/html' }).end(docPage('Hostile docs', [{ heading: 'Use', prose: 'x', code: 'import hostile' }]));
    });
    hostile.push(site);
    return site;
  }
  const redirect = (to: () => string) => (res: http.ServerResponse) => res.writeHead(302, { location: to() }).end();
  const secretConnections = () => ({ secret2: secret2.connections, secret3: secret3.connections, otherPort: secretOtherPort.connections });
  const none = { secret2: 0, secret3: 0, otherPort: 0 };

  it('a start URL that redirects to loopback fails the page with the refusal (REST, name detection included)', async () => {
    const site = await hostileSite({ '/': redirect(() => `${secret2.url}/secret.html`) });
    // No name: the daemon fetches the start page to detect one, under the same policy.
    const created = await post(daemon.base, '/api/crawl-jobs', { start_urls: [`${site.url}/`] });
    expect(created.status).toBe(202);
    const job = await waitForJob(daemon.base, created.body.job_id);
    expect(job.status).toBe('failed');
    expect(job.error).toContain('refused: 127.0.0.2 is a loopback address; add it to CRAWL_ALLOW_HOSTS');
    expect(secretConnections()).toEqual(none);
  });

  it('init_crawl on a public-looking URL that redirects to localhost, then get_page_markdown, returns nothing internal (MCP)', async () => {
    const site = await hostileSite({ '/': redirect(() => `http://localhost:${secret2.port}/secret.html`), '/docs': redirect(() => `${secret2.url}/secret.html`) });
    const started = await mcp.callTool({ name: 'init_crawl', arguments: { start_urls: [`${site.url}/`, `${site.url}/docs`], name: 'mcp-redirector' } });
    expect(started.isError).toBeFalsy();
    const job = await waitForJob(daemon.base, (started.structuredContent as { job_id: string }).job_id);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/refused: .*loopback address/);
    for (const url of [`http://localhost:${secret2.port}/secret.html`, `${secret2.url}/secret.html`]) {
      const page = await mcp.callTool({ name: 'get_page_markdown', arguments: { url } });
      expect(toolText(page)).not.toContain('wJalrXUtnFEMI');
    }
    expect(secretConnections()).toEqual(none);
  });

  it('robots.txt that redirects to loopback is not followed, and the site is still crawled', async () => {
    const site = await hostileSite({ '/robots.txt': redirect(() => `${secret3.url}/robots.txt`) });
    const created = await post(daemon.base, '/api/crawl-jobs', { start_urls: [`${site.url}/`], name: 'robots-redirector', max_depth: 0 });
    const job = await waitForJob(daemon.base, created.body.job_id);
    expect(job).toMatchObject({ status: 'completed', pages_crawled: 1 });
    expect(site.paths).toContain('/robots.txt');
    expect(secretConnections()).toEqual(none);
  });

  it('a sitemap named on another host, or an index pointing there, is not fetched', async () => {
    const site = await hostileSite({
      '/robots.txt': (res, self) => res.writeHead(200, { 'content-type': 'text/plain' }).end(`User-agent: *\nAllow: /\nSitemap: ${secret3.url}/sitemap.xml\nSitemap: ${self.url}/sitemap.xml\n`),
      '/sitemap.xml': (res) => res.writeHead(200, { 'content-type': 'application/xml' }).end(`<sitemapindex><sitemap><loc>${secret3.url}/sitemap2.xml</loc></sitemap></sitemapindex>`),
    });
    const created = await post(daemon.base, '/api/crawl-jobs', { start_urls: [`${site.url}/`], name: 'sitemap-pointer', use_sitemap: true, max_depth: 1 });
    const job = await waitForJob(daemon.base, created.body.job_id);
    expect(job.status).toBe('completed');
    // The site's own sitemap index was read; what it and robots.txt point to elsewhere was not.
    expect(site.paths).toContain('/sitemap.xml');
    expect(secretConnections()).toEqual(none);
  });

  it('links to another port of the same allow-listed host are out of scope', async () => {
    const links = [`${secretOtherPort.url}/secret.html`, `${secret2.url}/secret.html`, '/moved'];
    const site = await hostileSite({
      '/': (res) => res.writeHead(200, { 'content-type': 'text/html' }).end(docPage('Index', [{ heading: 'a', prose: 'b', code: 'import x' }], links)),
      '/moved': redirect(() => `${secretOtherPort.url}/secret.html`),
    });
    const created = await post(daemon.base, '/api/crawl-jobs', { start_urls: [`${site.url}/`], name: 'port-hopper', max_depth: 2 });
    const job = await waitForJob(daemon.base, created.body.job_id);
    expect(job.status).toBe('completed');
    expect(site.paths).toContain('/moved');
    expect(secretConnections()).toEqual(none);
  });

  it('none of the secret listeners ever saw a connection, and search never returns the secret', async () => {
    expect(secretConnections()).toEqual(none);
    expect(await secretSearchable(daemon.base)).toBe(false);
    const content = await mcp.callTool({ name: 'get_content', arguments: { library_id: 'mcp-redirector', query: SECRET } });
    expect(toolText(content)).not.toContain('wJalrXUtnFEMI');
  });
});
