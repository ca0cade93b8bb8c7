import { existsSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { ERROR_META_KEY } from '../../src/core/mcp/tool.js';
import type { RouteModule } from '../../src/daemon/deps.js';
import { mcpRoutes } from '../../src/daemon/mcp/routes.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { BIN, ROOT } from '../helpers/cli.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { crawlQuillstack, resultText, serveSite } from './helpers.js';

/**
 * Each MCP tool with each kind of access (a full token, a `:read` token, a server with MCP_READ_ONLY=true) over
 * every transport: streamable HTTP, SSE and the REST tool endpoint on the real daemon, and stdio through the
 * real binary. Writing tools are absent from tools/list and refused with read_only when called anyway.
 */

const FULL = 'full-scope-token-0123456789abcdefghij';
const READ = 'read-scope-token-0123456789abcdefghij';
const WRITING = ['init_crawl', 'add_library', 'cancel_crawl'];
const READING = ['search_libraries', 'get_content', 'get_page_markdown', 'get_crawl_status'];
// Writing tools other helpers add (sync_project): never listed to a read-only client either.
const ALL_WRITING = new Set([...WRITING, 'sync_project']);

/** The listing a scope allows: every reading tool; the writing ones only when it writes. */
function expectListing(listed: string[], writes: boolean): void {
  expect(listed).toEqual(expect.arrayContaining(writes ? [...READING, ...WRITING] : READING));
  if (!writes) expect(listed.filter((name) => ALL_WRITING.has(name))).toEqual([]);
}

let db: TestDatabase;
let site: Awaited<ReturnType<typeof serveSite>>;
let jobId: string;
let scoped: Awaited<ReturnType<typeof startTestDaemon>>;
let readOnlyMode: Awaited<ReturnType<typeof startTestDaemon>>;

// A route that returns a secret, as GET /api/settings/manager-token does.
const secretRoute: RouteModule = async (app) => {
  app.get('/test/secret', { config: { access: 'secret' }, schema: { hide: true } }, async () => ({ secret: 'x' }));
};

beforeAll(async () => {
  if (!existsSync(path.join(ROOT, 'dist', 'commands', 'serve.js'))) throw new Error('dist/ is missing: run `npm run build` before the stdio MCP tests.');
  db = await createTestDatabase();
  site = await serveSite();
  ({ jobId } = await crawlQuillstack(db, site.url));
  const routes = [...docsIndexRoutes, ...mcpRoutes, secretRoute];
  const auth = { MCP_AUTH_ENABLED: 'true', API_AUTH: 'true' };
  scoped = await startTestDaemon(loadConfig({ ...db.env, ...auth, MCP_AUTH_TOKENS: `${FULL},${READ}:read` }), { routes });
  readOnlyMode = await startTestDaemon(loadConfig({ ...db.env, ...auth, MCP_AUTH_TOKENS: FULL, MCP_READ_ONLY: 'true' }), { routes });
});

afterAll(async () => {
  await scoped?.close();
  await readOnlyMode?.close();
  await site?.close();
  await db?.drop();
});

function readingArguments(name: string): Record<string, unknown> {
  const args: Record<string, Record<string, unknown>> = {
    search_libraries: { query: 'quillstack' },
    get_content: { library_id: 'quillstack', query: 'pip install' },
    get_page_markdown: { url: `${site.url}/guide/install.html` },
    get_crawl_status: { job_id: jobId },
  };
  return args[name]!;
}

let calls = 0;

/** Valid arguments for each writing tool, so a refusal can only come from the scope (a new library each call). */
function writingArguments(name: string, startedJob: string | undefined): Record<string, unknown> {
  calls += 1;
  if (name === 'init_crawl') return { start_urls: [`${site.url}/slow/`], name: `scoped-crawl-${calls}`, max_depth: 0 };
  if (name === 'add_library') return { specs: [`${site.url}/guide/`], name: `scoped-add-${calls}` };
  return { job_id: startedJob ?? '00000000-0000-0000-0000-000000000000' };
}

/** Lists and calls every tool; writing tools are expected to work only when `writes`. */
async function exerciseEveryTool(client: Client, writes: boolean): Promise<void> {
  expectListing(
    (await client.listTools()).tools.map((t) => t.name),
    writes,
  );
  for (const name of READING) {
    const result = await client.callTool({ name, arguments: readingArguments(name) });
    expect(result.isError, `${name}: ${resultText(result)}`).toBeFalsy();
  }
  let startedJob: string | undefined;
  for (const name of WRITING) {
    const result = await client.callTool({ name, arguments: writingArguments(name, startedJob) });
    if (writes) {
      expect(result.isError, `${name}: ${resultText(result)}`).toBeFalsy();
      if (name === 'init_crawl') startedJob = (result.structuredContent as { job_id: string }).job_id;
    } else {
      expect(result.isError, name).toBe(true);
      expect(result._meta?.[ERROR_META_KEY], name).toMatchObject({ code: 'read_only' });
    }
  }
}

const kinds = [
  { label: 'a full token', daemon: () => scoped, token: FULL, writes: true },
  { label: 'a :read token', daemon: () => scoped, token: READ, writes: false },
  { label: 'MCP_READ_ONLY=true', daemon: () => readOnlyMode, token: FULL, writes: false },
];

const httpTransports: Record<string, (base: string, token: string) => Transport> = {
  'streamable HTTP': (base, token) => new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  SSE: (base, token) => new SSEClientTransport(new URL(`${base}/mcp/v1/sse`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
};

describe.each(Object.keys(httpTransports))('%s', (transport) => {
  it.each(kinds)('with $label, lists and runs exactly the tools its scope allows', async (kind) => {
    const client = new Client({ name: 'scope-test', version: '1.0.0' });
    await client.connect(httpTransports[transport]!(kind.daemon().base, kind.token));
    try {
      await exerciseEveryTool(client, kind.writes);
    } finally {
      await client.close();
    }
  });
});

describe('REST tool endpoint', () => {
  it.each(kinds)('with $label, lists and runs exactly the tools its scope allows', async (kind) => {
    const base = kind.daemon().base;
    const headers = { Authorization: `Bearer ${kind.token}`, 'content-type': 'application/json' };
    const listed = (await (await fetch(`${base}/mcp/tools`, { headers })).json()) as { tools: Array<{ name: string }> };
    expectListing(
      listed.tools.map((t) => t.name),
      kind.writes,
    );
    for (const name of READING) {
      const response = await fetch(`${base}/mcp/execute/${name}`, { method: 'POST', headers, body: JSON.stringify(readingArguments(name)) });
      expect(response.status, name).toBe(200);
    }
    let startedJob: string | undefined;
    for (const name of WRITING) {
      const response = await fetch(`${base}/mcp/execute/${name}`, { method: 'POST', headers, body: JSON.stringify(writingArguments(name, startedJob)) });
      const body = (await response.json()) as { code?: string; structuredContent?: { job_id?: string }; details?: unknown[] };
      if (kind.writes) {
        expect(response.status, `${name}: ${JSON.stringify(body)}`).toBe(200);
        if (name === 'init_crawl') startedJob = body.structuredContent?.job_id;
      } else {
        expect(response.status, name).toBe(403);
        expect(body).toMatchObject({ code: 'read_only', details: [{ tool: name }] });
      }
    }
  });
});

describe('a :read token on the daemon', () => {
  const as = (token: string) => ({ Authorization: `Bearer ${token}`, 'content-type': 'application/json' });

  it('reads the REST API, and is refused every write and every secret with read_only', async () => {
    const base = scoped.base;
    expect((await fetch(`${base}/api/sources`, { headers: as(READ) })).status).toBe(200);
    expect((await fetch(`${base}/search`, { method: 'POST', headers: as(READ), body: JSON.stringify({ query: 'pip install' }) })).status).toBe(200);
    const writes: Array<[string, string, unknown]> = [
      ['POST', '/api/crawl-jobs', { start_urls: [`${site.url}/`] }],
      ['POST', '/api/libraries', { specs: [`${site.url}/`] }],
      ['DELETE', '/api/sources/quillstack', undefined],
      ['PUT', '/api/sources/quillstack', { description: 'changed' }],
      ['POST', `/api/crawl-jobs/${jobId}/cancel`, undefined],
      ['GET', '/test/secret', undefined],
    ];
    for (const [method, url, body] of writes) {
      const response = await fetch(`${base}${url}`, { method, headers: as(READ), ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      expect(response.status, `${method} ${url}`).toBe(403);
      expect(await response.json(), `${method} ${url}`).toMatchObject({ code: 'read_only', details: [] });
    }
    // The full token still may: the refusals came from the scope.
    expect((await fetch(`${base}/test/secret`, { headers: as(FULL) })).status).toBe(200);
    const { rows } = await db.pool.query<{ name: string }>(`SELECT name FROM sources WHERE name = 'quillstack'`);
    expect(rows).toHaveLength(1);
  });

  it('may not use a streamable session that a full token opened', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${scoped.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${FULL}` } } });
    const client = new Client({ name: 'full-session', version: '1.0.0' });
    await client.connect(transport);
    try {
      const response = await fetch(`${scoped.base}/mcp`, {
        method: 'POST',
        headers: { ...as(READ), accept: 'application/json, text/event-stream', 'mcp-session-id': transport.sessionId!, 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'init_crawl', arguments: { start_urls: [`${site.url}/`] } } }),
      });
      expect(response.status).toBe(403);
      expect(await response.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    } finally {
      await client.close();
    }
  });
});

describe('stdio (serve --mcp) with MCP_READ_ONLY=true', () => {
  it('lists and runs only the reading tools, and refuses each writing tool', async () => {
    const env = Object.fromEntries(Object.entries({ ...db.env, MCP_READ_ONLY: 'true' }).filter((e): e is [string, string] => typeof e[1] === 'string'));
    const client = new Client({ name: 'stdio-read-only', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'serve', '--mcp'], env, stderr: 'ignore' }));
    try {
      await exerciseEveryTool(client, false);
    } finally {
      await client.close();
    }
  });
});
