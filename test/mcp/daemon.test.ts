import SwaggerParser from '@apidevtools/swagger-parser';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { mcpRoutes } from '../../src/daemon/mcp/routes.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { resultText } from './helpers.js';

/**
 * The MCP plugin inside the real daemon (buildApp with every route, MCP auth on, CORS on): the daemon's auth
 * hook, CORS and OpenAPI document work together with the plugin's own parser and hijacked responses.
 */

const TOKEN = 'daemon-mcp-token-77-at-least-32-chars';
let db: TestDatabase;
let daemon: Awaited<ReturnType<typeof startTestDaemon>>;

beforeAll(async () => {
  db = await createTestDatabase();
  daemon = await startTestDaemon(loadConfig({ ...db.env, MCP_AUTH_ENABLED: 'true', MCP_AUTH_TOKEN: TOKEN, API_CORS_ORIGINS: 'http://app.example' }), {
    routes: [...docsIndexRoutes, ...mcpRoutes],
  });
});

afterAll(async () => {
  await daemon?.close();
  await db?.drop();
});

describe('MCP on the daemon', () => {
  it('serves the SDK client with the token and refuses it without', async () => {
    const client = new Client({ name: 'daemon-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }));
    const result = await client.callTool({ name: 'search_libraries', arguments: {} });
    expect(resultText(result)).toContain('No libraries are indexed yet');
    await client.close();

    const refused = await fetch(`${daemon.base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await refused.json()).toMatchObject({ code: 'unauthorized', details: [] });
  });

  it('keeps CORS and the request id on hijacked MCP responses, and answers REST tool errors in the daemon format', async () => {
    const response = await fetch(`${daemon.base}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}`, Origin: 'http://app.example', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('http://app.example');
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const broken = await fetch(`${daemon.base}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{',
    });
    expect(await broken.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
    const bad = await fetch(`${daemon.base}/mcp/execute/get_page_markdown`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://nowhere.example/x', chunk_size: 10 }),
    });
    expect(bad.status).toBe(422);
    expect(await bad.json()).toMatchObject({ code: 'validation_error', details: [{ path: 'chunk_size' }] });
  });

  it('documents the REST tool endpoints in a valid OpenAPI document and hides the protocol endpoints', async () => {
    const spec = (await (await fetch(`${daemon.base}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    await SwaggerParser.validate(structuredClone(spec) as never);
    expect(Object.keys(spec.paths)).toEqual(expect.arrayContaining(['/mcp/tools', '/mcp/execute/{tool_name}']));
    expect(Object.keys(spec.paths)).not.toContain('/mcp/v1/sse');
  });
});
