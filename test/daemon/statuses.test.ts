import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { mcpRoutes } from '../../src/daemon/mcp/routes.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

/**
 * Status codes the daemon owes its clients: a body it cannot parse is the client's fault (400), a database it
 * cannot reach is a temporary outage (503), and neither is an internal error nor shows a filesystem path.
 */

/**
 * A PostgreSQL server socket the test can take away: a unix socket in a private directory forwarding to the
 * test cluster. Closing it removes the socket file, as a stopped embedded server does.
 */
async function socketProxy(target: URL): Promise<{ dir: string; open(): Promise<void>; close(): Promise<void> }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'docdex-outage-'));
  const host = decodeURIComponent(target.hostname);
  const port = Number(target.port || 5432);
  const connectTarget = (): net.Socket => (host.startsWith('/') ? net.connect({ path: path.join(host, `.s.PGSQL.${port}`) }) : net.connect({ host, port }));
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  return {
    dir,
    async open() {
      server = net.createServer((client) => {
        const upstream = connectTarget();
        sockets.add(client).add(upstream);
        client.pipe(upstream).pipe(client);
        const end = () => {
          client.destroy();
          upstream.destroy();
        };
        client.on('error', end).on('close', end);
        upstream.on('error', end).on('close', end);
      });
      await new Promise<void>((resolve) => server!.listen(path.join(dir, '.s.PGSQL.5432'), resolve));
    },
    async close() {
      const closed = new Promise<void>((resolve) => server?.close(() => resolve()));
      for (const s of sockets) s.destroy();
      sockets.clear();
      await closed;
    },
  };
}

let db: TestDatabase;
let proxy: Awaited<ReturnType<typeof socketProxy>>;
let daemon: Awaited<ReturnType<typeof startTestDaemon>>;

beforeAll(async () => {
  db = await createTestDatabase();
  proxy = await socketProxy(new URL(db.url));
  await proxy.open();
  const url = new URL(db.url);
  url.hostname = encodeURIComponent(proxy.dir);
  url.port = '5432';
  daemon = await startTestDaemon(loadConfig({ ...db.env, DATABASE_URL: url.toString() }), { routes: [...docsIndexRoutes, ...mcpRoutes] });
});

afterAll(async () => {
  await daemon?.close();
  await proxy?.close();
  rmSync(proxy.dir, { recursive: true, force: true });
  await db?.drop();
});

const post = (route: string, body: string) => fetch(`${daemon.base}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

describe('bodies the daemon cannot parse', () => {
  it('answers deeply nested JSON with 400 and the error body', async () => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    // Nested under a field each route takes (an unknown field is refused first, with 422: json-body.ts).
    const field: Record<string, string> = { '/api/crawl-jobs': 'metadata', '/search': 'query', '/upload/markdown': 'content' };
    for (const route of ['/api/crawl-jobs', '/search', '/upload/markdown']) {
      const key = field[route]!;
      const bodies = [`{"start_urls":["https://x.org/"],"${key}":{"x":${deep}}}`, `{"${key}":${deep}}`, deep, `{"${key}":`.repeat(10_000) + '1' + '}'.repeat(10_000), '['.repeat(100_000)];
      for (const body of bodies) {
        const res = await post(route, body.replace('"start_urls":["https://x.org/"],', route === '/api/crawl-jobs' ? '"start_urls":["https://x.org/"],' : ''));
        // Refused for its nesting, or before that for its size: over the most a /search body can take.
        const tooLarge = res.status === 413;
        expect(res.status, `${route} ${body.slice(0, 10)}`).toBe(tooLarge && body.length > 25_000 ? 413 : 400);
        expect(await res.json()).toMatchObject({ code: tooLarge ? 'payload_too_large' : 'bad_request', details: [] });
      }
    }
    expect((await fetch(`${daemon.base}/health`)).status).toBe(200);
  });

  it('still accepts ordinary nesting, and refuses prototype keys as before', async () => {
    expect((await post('/search', JSON.stringify({ query: 'hello', limit: 5 }))).status).toBe(200);
    const nested = `{"start_urls":["https://x.org/"],"name":"nested-meta","metadata":{"a":${'['.repeat(20)}1${']'.repeat(20)}}}`;
    expect((await post('/api/crawl-jobs', nested)).status).toBe(202);
    // A route's own fields: an unknown key, named (json-body.ts). Inside a free-form record: refused by Fastify's parser.
    const poisoned = await post('/search', '{"query":"hello","__proto__":{"limit":1}}');
    expect(poisoned.status).toBe(422);
    expect(((await poisoned.json()) as { error: string }).error).toContain('unknown field "__proto__"');
    const inRecord = await post('/api/crawl-jobs', '{"start_urls":["https://x.org/"],"metadata":{"__proto__":{"x":1}}}');
    expect(inRecord.status).toBe(400);
  });
});

describe('input the database refuses', () => {
  it('answers NUL in a name with 422 on REST and validation_error on MCP', async () => {
    for (const [method, route] of [
      ['POST', '/api/sources/%00/recrawl'],
      ['GET', '/api/sources/a%00b'],
      ['GET', '/api/search?q=hello&source=a%00b'],
    ] as const) {
      const res = await fetch(`${daemon.base}${route}`, { method });
      expect(res.status, route).toBe(422);
      // Refused before any SQL when the reference parser sees it, else by the database's own check: 422 either way.
      expect(await res.json()).toMatchObject({ code: 'validation_error', error: expect.stringMatching(/cannot store|control characters/) });
    }
    const mcp = new Client({ name: 'nul-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${daemon.base}/mcp`)));
    const result = await mcp.callTool({ name: 'get_content', arguments: { library_id: 'a\u0000b', query: 'x' } });
    expect(result._meta?.['docdex/error']).toMatchObject({ code: 'validation_error' });
    await mcp.close();
  });
});

describe('a database outage', () => {
  it('answers 503 database_unavailable on REST and MCP, /health names no path, and recovers', async () => {
    expect((await fetch(`${daemon.base}/api/search?q=hello`)).status).toBe(200);
    const mcp = new Client({ name: 'outage-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${daemon.base}/mcp`)));
    await proxy.close();
    try {
      for (const route of ['/api/search?q=hello', '/api/search?q=other', '/api/sources']) {
        const res = await fetch(`${daemon.base}${route}`);
        const body = (await res.json()) as { error: string };
        expect(res.status, `${route} ${JSON.stringify(body)}`).toBe(503);
        expect(body).toMatchObject({ code: 'database_unavailable', error: expect.stringMatching(/^Database unavailable/), details: [] });
        expect(body.error).not.toContain(proxy.dir);
      }
      const health = await fetch(`${daemon.base}/health`);
      expect(health.status).toBe(503);
      const text = await health.text();
      expect(JSON.parse(text)).toMatchObject({ status: 'unavailable', database: { reachable: false, error: expect.any(String) } });
      expect(text).not.toContain(proxy.dir);
      expect(text).not.toMatch(/\/(tmp|root|home|var)\b|\.s\.PGSQL/);
      const result = await mcp.callTool({ name: 'search_libraries', arguments: { query: 'x' } });
      expect(result.isError).toBe(true);
      expect(result._meta?.['docdex/error']).toMatchObject({ code: 'database_unavailable' });
    } finally {
      await proxy.open();
    }
    expect((await fetch(`${daemon.base}/health`)).status).toBe(200);
    expect((await fetch(`${daemon.base}/api/search?q=hello`)).status).toBe(200);
    await mcp.close();
  });
});
