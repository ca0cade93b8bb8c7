import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpError } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerToken, createTokenChecker } from '../../src/daemon/auth.js';
import { mcpHttpPlugin } from '../../src/daemon/mcp/http.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { crawlQuillstack, resultText, serveSite, ALL_TOOLS } from './helpers.js';

/**
 * MCP over HTTP with the official SDK clients against a Fastify app that registers only the MCP plugin, on an
 * ephemeral port, with bearer auth on.
 */

const TOKEN = 'test-token-4f1c2b';
let db: TestDatabase;
let site: Awaited<ReturnType<typeof serveSite>>;
let app: FastifyInstance;
let base: string;
const auth = { Authorization: `Bearer ${TOKEN}` };

beforeAll(async () => {
  db = await createTestDatabase();
  site = await serveSite();
  await crawlQuillstack(db, site.url);
  const check = createTokenChecker([TOKEN]);
  app = Fastify();
  await app.register(mcpHttpPlugin, { deps: { pool: db.pool, info: db.info, config: db.config }, auth: (request) => check(bearerToken(request)) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await app?.close();
  await site?.close();
  await db?.drop();
});

/** The session id the SSE client was given (the SDK keeps the announced endpoint private). */
function sseSessionId(transport: SSEClientTransport): string {
  const endpoint = (transport as unknown as { _endpoint?: URL })._endpoint;
  const id = endpoint?.searchParams.get('sessionId');
  if (!id) throw new Error('the SSE transport has no endpoint yet');
  return id;
}

async function exercise(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual(ALL_TOOLS);
  const libraries = await client.callTool({ name: 'search_libraries', arguments: { query: 'quillstack' } });
  expect((libraries.structuredContent as { selected_id: string | null }).selected_id).toBeTruthy();
  const content = await client.callTool({ name: 'get_content', arguments: { library_id: 'quillstack', query: 'pip install' } });
  expect(resultText(content)).toContain('pip install quillstack');
  const page = await client.callTool({ name: 'get_page_markdown', arguments: { url: `${site.url}/guide/install.html` } });
  expect(resultText(page)).toContain('Checking the installation');
  // A #fragment reads only the section it names (get_page_markdown), and names the whole page's call.
  const section = await client.callTool({ name: 'get_page_markdown', arguments: { url: `${site.url}/guide/install.html#with-pip` } });
  expect(resultText(section)).toContain('pip install quillstack');
  expect(resultText(section)).not.toContain('Checking the installation');
  expect(resultText(section)).toContain(`call get_page_markdown with url="${site.url}/guide/install.html"`);
  const bad = await client.callTool({ name: 'get_content', arguments: { library_id: 'quillstack', limit: 101 } });
  expect(bad.isError).toBe(true);
  expect(resultText(bad)).toContain('- limit:');
  const unknown = await client.callTool({ name: 'nope', arguments: {} }).catch((e: unknown) => e);
  expect((unknown as McpError).code).toBe(ErrorCode.InvalidParams);
  // Still serving after the errors.
  const again = await client.callTool({ name: 'search_libraries', arguments: {} });
  expect(again.isError).toBeFalsy();
}

describe('streamable HTTP (/mcp)', () => {
  it('serves a session to the SDK client and ends it on DELETE', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: auth } });
    const client = new Client({ name: 'docdex-http-test', version: '1.0.0' });
    await client.connect(transport);
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    await exercise(client);
    const sessionId = transport.sessionId!;
    await transport.terminateSession();
    await client.close();
    const after = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(after.status).toBe(404);
  });

  it('answers a stateless request (no session id) with plain JSON', async () => {
    const response = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'get_content', arguments: { library_id: 'quillstack', query: 'middleware' } } }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('mcp-session-id')).toBeNull();
    const body = (await response.json()) as { id: number; result: { content: Array<{ text: string }> } };
    expect(body.id).toBe(7);
    expect(body.result.content[0]!.text).toContain('add_timing_header');
  });

  it('refuses a missing or wrong token with 401, WWW-Authenticate and the error body', async () => {
    for (const headers of [{}, { Authorization: 'Bearer wrong-token' }]) {
      const response = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(await response.json()).toMatchObject({ code: 'unauthorized', details: [] });
    }
    const client = new Client({ name: 'intruder', version: '1.0.0' });
    const error = await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: 'Bearer wrong-token' } } })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    for (const [method, path] of [
      ['GET', '/mcp/v1/sse'],
      ['POST', '/mcp/v1/messages?sessionId=x'],
      ['GET', '/mcp/tools'],
      ['POST', '/mcp/execute/search_libraries'],
    ] as const) {
      const response = await fetch(`${base}${path}`, { method, headers: { Authorization: 'Bearer wrong-token', 'content-type': 'application/json' }, ...(method === 'POST' ? { body: '{}' } : {}) });
      expect(response.status, `${method} ${path}`).toBe(401);
    }
  });

  it('answers malformed JSON with a JSON-RPC parse error and keeps serving', async () => {
    const headers = { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const broken = await fetch(`${base}/mcp`, { method: 'POST', headers, body: '{"jsonrpc": "2.0", "id": 1, "method": ' });
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    const notRpc = await fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify({ hello: 'world' }) });
    expect(notRpc.status).toBe(400);
    expect(((await notRpc.json()) as { error: { code: number } }).error.code).toBeLessThan(-32000);
    const ok = await fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { result: { tools: unknown[] } }).result.tools).toHaveLength(10);
  });

  it('answers GET and DELETE without a session with 405', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(`${base}/mcp`, { method, headers: { ...auth, accept: 'text/event-stream' } });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    }
  });

  it('rejects an unknown session id with 404', async () => {
    const response = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': 'no-such-session' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32001);
  });
});

describe('legacy SSE (/mcp/v1/sse)', () => {
  it('serves the SDK SSE client through the announced message endpoint', async () => {
    const transport = new SSEClientTransport(new URL(`${base}/mcp/v1/sse`), { requestInit: { headers: auth } });
    const client = new Client({ name: 'docdex-sse-test', version: '1.0.0' });
    await client.connect(transport);
    await exercise(client);
    await client.close();
  });

  it('refuses a message for an unknown session, and malformed JSON, without breaking open sessions', async () => {
    const transport = new SSEClientTransport(new URL(`${base}/mcp/v1/sse`), { requestInit: { headers: auth } });
    const client = new Client({ name: 'docdex-sse-test', version: '1.0.0' });
    await client.connect(transport);
    const unknown = await fetch(`${base}/mcp/v1/messages?sessionId=nope`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(unknown.status).toBe(404);
    const broken = await fetch(`${base}/mcp/v1/messages?sessionId=${sseSessionId(transport)}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{oops' });
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(10);
    await client.close();
  });
});

describe('REST tool access', () => {
  it('lists the tools with the same JSON Schemas as tools/list', async () => {
    const response = await fetch(`${base}/mcp/tools`, { headers: auth });
    expect(response.status).toBe(200);
    const rest = (await response.json()) as { tools: Array<Record<string, unknown>> };
    const client = new Client({ name: 'docdex-http-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: auth } }));
    const { tools } = await client.listTools();
    await client.close();
    const strip = (t: Record<string, unknown>) => JSON.parse(JSON.stringify({ ...t, execution: undefined, _meta: undefined })) as unknown;
    expect(rest.tools.map(strip)).toEqual(tools.map((t) => strip(t as Record<string, unknown>)));
  });

  it('runs a tool with the JSON body as arguments', async () => {
    const response = await fetch(`${base}/mcp/execute/get_content`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ library_id: 'quillstack', query: 'version', limit: 5 }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { content: Array<{ type: string; text: string }>; isError?: boolean };
    expect(body.isError).toBeFalsy();
    expect(body.content[0]!.text).toContain('print(quillstack.__version__)');
    const noBody = await fetch(`${base}/mcp/execute/search_libraries`, { method: 'POST', headers: auth });
    expect(noBody.status).toBe(200);
  });

  it('answers 404 for an unknown tool, 422 for bad arguments, 404 for an unknown library, 400 for broken JSON', async () => {
    const post = (path: string, body: string) => fetch(`${base}${path}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body });
    const unknown = await post('/mcp/execute/get_everything', '{}');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'unknown_tool', details: [{ available: expect.arrayContaining(['get_content']) }] });
    const bad = await post('/mcp/execute/get_content', JSON.stringify({ library_id: 'quillstack', limit: 'many' }));
    expect(bad.status).toBe(422);
    const badBody = (await bad.json()) as { error: string; code: string; details: Array<{ path: string }> };
    expect(badBody.code).toBe('validation_error');
    expect(badBody.details.map((d) => d.path)).toEqual(['limit']);
    expect(badBody.error).toContain('- limit:');
    const missing = await post('/mcp/execute/get_content', JSON.stringify({ library_id: 'zebrafish' }));
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'not_found', details: [{ name: 'quillstack' }] });
    const broken = await post('/mcp/execute/get_content', '{"library_id":');
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ code: 'bad_request' });
    const array = await post('/mcp/execute/get_content', '[1,2]');
    expect(array.status).toBe(422);
  });
});
