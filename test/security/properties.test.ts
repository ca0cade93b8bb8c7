import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readManagerToken } from '../../src/core/agent/token.js';
import { loadConfig } from '../../src/core/config.js';
import { mcpRoutes } from '../../src/daemon/mcp/routes.js';
import { agentServerRoutes } from '../../src/daemon/routes/agent-server.js';
import { agentRoutes } from '../../src/daemon/routes/agent.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { addPage, createSource } from '../search/fixtures.js';

/**
 * Hostile input to every writing route and every MCP tool of the real daemon (every route module `docdex
 * serve` registers, no workers, nothing allowed to be crawled): nothing may answer 500, report an internal
 * error or end the process. Each property's counterexample names the route or tool and the input.
 */

let db: TestDatabase;
let workspace: string;
let daemon: Awaited<ReturnType<typeof startTestDaemon>>;

beforeAll(async () => {
  db = await createTestDatabase({ CRAWL_ALLOW_HOSTS: '' });
  const source = await createSource(db.pool, 'quillstack', '1.0');
  await addPage(db.pool, source, KNOWN[1]!, [{ title: 'Install quillstack', code: 'pip install quillstack', language: 'bash' }]);
  workspace = mkdtempSync(path.join(os.tmpdir(), 'docdex-props-ws-'));
  const config = loadConfig({ ...db.env, CRAWL_ALLOW_HOSTS: '', WORKSPACE_PATH: workspace });
  daemon = await startTestDaemon(config, { routes: [...docsIndexRoutes, ...mcpRoutes, ...agentRoutes, ...agentServerRoutes] });
  // The manager token is created by the first internal request; with it the /api/internal routes are reached too.
  await fetch(`${daemon.base}/api/internal/settings`);
});

afterAll(async () => {
  await daemon?.close();
  await db?.drop();
  rmSync(workspace, { recursive: true, force: true });
});

/** The agent manager's routes (agent-manager.md, Errors: invalid input is 400); every other route answers 422. */
const AGENT_ROUTE = /^\/api\/(settings|internal)(\/|$)/;

/** Half of a UTF-16 pair on its own (fast-check's 'binary' unit never draws one): valid JSON, but no character. */
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));

/** Strings that have broken parsers and databases before: NUL, bidi controls, quotes, lone `$`, lone surrogates, huge. */
const nasty = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.string({ unit: fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), loneSurrogate), maxLength: 20 }),
  fc.constantFrom('', '\0', 'a\0b', '\u202e', "'", '"', '\\', '$', '_', '../../etc/passwd', '%00', 'https://127.0.0.1:1/', 'x'.repeat(5000), '0', '-1', '1e400', '\ud800x', 'x\udfff'),
  fc.webUrl(),
);

/** Names and URLs that exist in the database, so lookups by them get past "not found". */
const KNOWN = ['quillstack', 'https://quillstack.example/guide/install.html', 'quillstack@1.0'];
const known = fc.constantFrom(...KNOWN);

const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 3, arbitrary: nasty },
  { weight: 1, arbitrary: fc.array(nasty, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.constantFrom(Number.MAX_SAFE_INTEGER, 2 ** 31, -(2 ** 31) - 1, 1.5, 0) },
);

interface JsonSchema {
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  items?: JsonSchema;
  minItems?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
}

/** Strings: URLs for URL fields and domains for domain fields (so requests get past validation), else hostile. */
function stringFor(schema: JsonSchema, key: string): fc.Arbitrary<string> {
  if (schema.format === 'uri' || /url/i.test(key)) return fc.oneof(fc.webUrl({ withQueryParameters: true, withFragments: true }), nasty);
  if (/domain|host/i.test(key)) return fc.oneof(fc.domain(), nasty);
  return fc.oneof(nasty, known, fc.string({ minLength: 1, maxLength: 12 }));
}

function integerFor(schema: JsonSchema): fc.Arbitrary<number> {
  const min = Math.max(Math.ceil(schema.minimum ?? -5), -1_000_000);
  const max = Math.min(Math.floor(schema.maximum ?? 1000), 1_000_000);
  return fc.integer({ min: Math.min(min, max), max });
}

/**
 * Values of the schema's shape with hostile contents (so validation passes often enough for the input to
 * reach the code behind it), and now and then any value at all.
 */
function fromSchema(schema: JsonSchema | undefined, depth = 0, key = ''): fc.Arbitrary<unknown> {
  if (!schema || depth > 3) return anyValue;
  const alternatives = schema.anyOf ?? schema.oneOf;
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  let shaped: fc.Arbitrary<unknown>;
  if (alternatives) shaped = fc.oneof(...alternatives.map((a) => fromSchema(a, depth + 1, key)));
  else if (schema.enum) shaped = fc.constantFrom(...schema.enum);
  else if (type === 'string') shaped = stringFor(schema, key);
  else if (type === 'integer' || type === 'number') shaped = integerFor(schema);
  else if (type === 'boolean') shaped = fc.boolean();
  else if (type === 'array') shaped = fc.array(fromSchema(schema.items, depth + 1, key), { minLength: Math.min(schema.minItems ?? 0, 3), maxLength: 3 });
  else if (type === 'object' || schema.properties) shaped = objectFor(schema, depth);
  else shaped = anyValue;
  return fc.oneof({ weight: 12, arbitrary: shaped }, { weight: 1, arbitrary: anyValue });
}

function objectFor(schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const properties = schema?.properties ?? {};
  if (Object.keys(properties).length === 0) return fc.dictionary(fc.oneof(fc.string({ maxLength: 10 }), loneSurrogate), anyValue, { maxKeys: 4 });
  const arbitraries = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, fromSchema(v, depth + 1, k)]));
  return fc.record(arbitraries, { requiredKeys: (schema?.required ?? []).filter((k) => k in properties) });
}

/** JSON text: mostly of the schema's shape, also any JSON, deep nesting and not JSON at all. */
function bodyFor(schema: JsonSchema | undefined): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 5, arbitrary: objectFor(schema).map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.nat({ max: 5000 }).map((n) => `{"a":${'['.repeat(n)}${']'.repeat(n)}}`) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  );
}

const pathParam = fc.oneof(fc.uuid(), fc.constantFrom('1', '0', '-1', 'x', '%00', '..', '%2e%2e', 'a'.repeat(300)), fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }).map(encodeURIComponent));

interface Operation {
  method: string;
  route: string;
  schema: JsonSchema | undefined;
}

async function writingOperations(): Promise<Operation[]> {
  const spec = (await (await fetch(`${daemon.base}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: JsonSchema & { $ref?: string } }> } }>>;
    components?: { schemas?: Record<string, JsonSchema> };
  };
  const resolve = (schema: (JsonSchema & { $ref?: string }) | undefined): JsonSchema | undefined => (schema?.$ref ? spec.components?.schemas?.[schema.$ref.split('/').pop()!] : schema);
  const ops: Operation[] = [];
  for (const [route, methods] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (!['post', 'put', 'patch'].includes(method)) continue;
      ops.push({ method: method.toUpperCase(), route, schema: resolve(op.requestBody?.content?.['application/json']?.schema) });
    }
  }
  return ops;
}

describe('hostile input to the real daemon', () => {
  // First: the property below spends the rate-limited routes' allowance.
  // SECURITY.md, Hostile input: "Every text field of a request, in a REST body, query or path, or in an MCP
  // tool's arguments, must be well-formed Unicode: a lone UTF-16 surrogate answers 422 naming the field."
  it('answers 422 (400 on agent-manager routes) naming the field for a lone surrogate in any string field of each JSON body route', async () => {
    const ops = (await writingOperations()).filter((op) => op.schema?.properties);
    expect(ops.length).toBeGreaterThan(10);
    let checked = 0;
    for (const op of ops) {
      const url = op.route.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
      for (const [field, schema] of Object.entries(op.schema!.properties!)) {
        const type = Array.isArray(schema.type) ? schema.type : [schema.type];
        const value = type.includes('string') ? 'a\ud800b' : type.includes('array') ? ['\udfff'] : undefined;
        if (value === undefined) continue;
        const token = (await readManagerToken(db.pool)) ?? 'none';
        const res = await fetch(`${daemon.base}${url}`, {
          method: op.method,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ [field]: value }),
        });
        const body = (await res.json()) as { code: string; error: string; details: Array<{ path?: string }> };
        const what = `${op.method} ${op.route} ${field} → ${res.status} ${JSON.stringify(body).slice(0, 300)}`;
        // The agent manager's routes answer invalid input with 400, as its specification's error table wants.
        const statuses = AGENT_ROUTE.test(op.route) ? [400] : [422];
        expect(statuses, what).toContain(res.status);
        expect(body.code, what).toBe(res.status === 400 ? 'bad_request' : 'validation_error');
        expect(body.error, what).toContain(`${field}${Array.isArray(value) ? '[0]' : ''} is not well-formed text`);
        expect(body.details[0]?.path, what).toBe(`/${field}${Array.isArray(value) ? '/0' : ''}`);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(20);
  });

  it('answers any JSON body to each POST/PUT/PATCH route of the OpenAPI document with 2xx/4xx', async () => {
    const ops = await writingOperations();
    expect(ops.length).toBeGreaterThan(10);
    for (const op of ops) {
      const params = op.route.match(/\{[^}]+\}/g) ?? [];
      await fc.assert(
        fc.asyncProperty(bodyFor(op.schema), fc.array(pathParam, { minLength: params.length, maxLength: params.length }), async (body, values) => {
          let url = op.route;
          params.forEach((p, i) => (url = url.replace(p, values[i]!)));
          // POST /api/settings/manager-token/rotate is one of the routes: read the token current now.
          const token = (await readManagerToken(db.pool)) ?? 'none';
          const res = await fetch(`${daemon.base}${url}`, {
            method: op.method,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
            body,
          });
          const text = await res.text();
          // 502/503 are answers too (an agent server or database that is not there), but never 500.
          const what = `${op.method} ${url} ${body.slice(0, 200)} → ${res.status} ${text.slice(0, 300)}`;
          expect(res.status < 500 || ([502, 503].includes(res.status) && !text.includes('internal_error')), what).toBe(true);
        }),
        { numRuns: 25 },
      );
    }
    expect((await fetch(`${daemon.base}/health`)).status).toBe(200);
  });

  it('answers 422 naming the field for the upload title and name of the report (was a 500 from encodeURIComponent)', async () => {
    for (const field of ['title', 'name']) {
      const res = await fetch(`${daemon.base}/upload/markdown`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"content":"# hi","${field}":"\\ud800x"}` });
      const body = (await res.json()) as { code: string; error: string };
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(body.error).toContain(`${field} is not well-formed text`);
    }
  });

  it('names the argument of an MCP tool call that holds a lone surrogate, over the MCP transport and the REST tool endpoint', async () => {
    const client = new Client({ name: 'surrogates', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.base}/mcp`)));
    try {
      const result = await client.callTool({ name: 'get_content', arguments: { library_id: 'quillstack', query: 'install\ud800' } });
      expect(result.isError).toBe(true);
      expect((result._meta?.['docdex/error'] as { code?: string } | undefined)?.code).toBe('validation_error');
      expect(JSON.stringify(result.content)).toContain('query is not well-formed text');
    } finally {
      await client.close();
    }
    const res = await fetch(`${daemon.base}/mcp/execute/get_content`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"library_id":"quillstack","query":"x\\udc00"}' });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { error: string }).error).toContain('query is not well-formed text');
  });

  it('answers any arguments to each MCP tool without a protocol crash or an internal error', async () => {
    const client = new Client({ name: 'properties', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.base}/mcp`)));
    try {
      const { tools } = await client.listTools();
      expect(tools.length).toBeGreaterThan(3);
      for (const tool of tools) {
        const args = fc.oneof({ weight: 4, arbitrary: objectFor(tool.inputSchema as JsonSchema) }, { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 10 }), anyValue, { maxKeys: 4 }) });
        await fc.assert(
          fc.asyncProperty(args, async (a) => {
            const what = `${tool.name} ${JSON.stringify(a).slice(0, 200)}`;
            try {
              const result = await client.callTool({ name: tool.name, arguments: a as Record<string, unknown> });
              const meta = result._meta?.['docdex/error'] as { code?: string } | undefined;
              expect(meta?.code, `${what} → ${JSON.stringify(result.content).slice(0, 300)}`).not.toBe('internal_error');
            } catch (error) {
              // The one acceptable protocol answer: invalid params, said cleanly.
              expect(error instanceof McpError && error.code === ErrorCode.InvalidParams, `${what} → ${String(error)}`).toBe(true);
            }
          }),
          { numRuns: 30 },
        );
      }
    } finally {
      await client.close();
    }
    expect((await fetch(`${daemon.base}/health`)).status).toBe(200);
  });
});
