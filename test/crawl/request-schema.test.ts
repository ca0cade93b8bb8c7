import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flagHelp, flagName } from '../../src/cli/request-flags.js';
import CrawlStart from '../../src/commands/crawl/start.js';
import { crawlFieldEntries, fieldFacts, parseCrawlRequest, STORED_FIELDS } from '../../src/core/crawl-request.js';
import { recrawlRequest } from '../../src/core/crawl/recrawl.js';
import { mcpRoutes } from '../../src/daemon/mcp/routes.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { ROOT } from '../helpers/cli.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

/**
 * The crawl request is declared once (CRAWL_FIELDS in core/crawl-request.ts). These tests walk every field and
 * check that each surface derived from it shows the same name, bounds and default: the CLI flags (the command
 * class and the committed surface snapshot), the OpenAPI document the daemon serves, the MCP tool's listed
 * input schema (official SDK client), and the source's stored configuration that a recrawl reads back.
 */

type JsonSchema = Record<string, unknown>;

let db: TestDatabase;
let daemon: Awaited<ReturnType<typeof startTestDaemon>>;

beforeAll(async () => {
  db = await createTestDatabase();
  daemon = await startTestDaemon(db.config, { routes: [...docsIndexRoutes, ...mcpRoutes] });
});

afterAll(async () => {
  await daemon?.close();
  await db?.drop();
});

function postCrawl(body: string): Promise<Response> {
  return fetch(`${daemon.base}/api/crawl-jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
}

/** The bounds and default a JSON Schema property states, in the shape fieldFacts gives. */
function stated(property: JsonSchema) {
  return { minimum: property.minimum, maximum: property.maximum, default: property.default };
}

describe('every crawl request field on every surface', () => {
  it('is a flag of crawl start with the flag name, kind and help text (bounds, default) of its schema', () => {
    const snapshot = JSON.parse(readFileSync(path.join(ROOT, 'test', 'cli', 'command-snapshot.json'), 'utf8')) as {
      commands: Record<string, { flags: Record<string, { type: string }> }>;
    };
    const pinned = snapshot.commands['crawl start']!.flags;
    const flags = CrawlStart.flags as Record<string, { type: string; description?: string; multiple?: boolean }>;
    for (const [name, field] of crawlFieldEntries()) {
      if (field.flag === false) {
        expect(flags[name.replaceAll('_', '-')], name).toBeUndefined();
        continue;
      }
      const flag = flagName(name, field);
      const facts = fieldFacts(field.schema);
      const kind = facts.type === 'boolean' ? 'boolean' : facts.type === 'array' ? 'option (repeatable)' : 'option';
      expect(pinned[flag]?.type, `${name} → --${flag} in command-snapshot.json`).toBe(kind);
      expect(flags[flag]?.description, name).toBe(flagHelp(field));
      if (facts.type === 'integer') expect(flags[flag]!.description).toContain(`${facts.minimum}-${facts.maximum}`);
      if (facts.type === 'integer' && facts.default !== undefined) expect(flags[flag]!.description).toContain(`default ${String(facts.default)}`);
    }
  });

  it('is a property of the CrawlRequest body in the OpenAPI document, with its bounds, default and description', async () => {
    const doc = (await (await fetch(`${daemon.base}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: JsonSchema }> } }>>;
      components: { schemas: Record<string, JsonSchema> };
    };
    // Defaults make the input side differ from the output side, so the body is the schema's input component.
    for (const route of ['/api/crawl-jobs', '/crawl/init']) {
      expect(doc.paths[route]!.post!.requestBody!.content['application/json']!.schema).toEqual({ $ref: '#/components/schemas/CrawlRequestInput' });
    }
    const body = doc.components.schemas.CrawlRequestInput!;
    const properties = body.properties as Record<string, JsonSchema>;
    expect(Object.keys(properties)).toEqual(crawlFieldEntries().map(([name]) => name));
    expect(body.required).toEqual(['start_urls']);
    for (const [name, field] of crawlFieldEntries()) {
      const facts = fieldFacts(field.schema);
      expect(stated(properties[name]!), name).toEqual({ minimum: facts.minimum, maximum: facts.maximum, default: facts.default });
      expect(properties[name]!.description, name).toBe(field.description);
    }
    // The source update route takes two of the fields under their own names; their bounds must agree.
    const update = doc.components.schemas.SourceUpdate!.properties as Record<string, JsonSchema>;
    for (const name of ['max_depth', 'max_concurrent_crawls'] as const) {
      const facts = fieldFacts(crawlFieldEntries().find(([n]) => n === name)![1].schema);
      expect({ minimum: update[name]!.minimum, maximum: update[name]!.maximum }, `SourceUpdate.${name}`).toEqual({ minimum: facts.minimum, maximum: facts.maximum });
    }
  });

  it('is an argument of the MCP init_crawl tool as listTools shows it, with its bounds and default', async () => {
    const client = new Client({ name: 'request-schema-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.base}/mcp`)));
    try {
      const { tools } = await client.listTools();
      const input = tools.find((t) => t.name === 'init_crawl')!.inputSchema;
      const properties = input.properties as Record<string, JsonSchema>;
      expect(Object.keys(properties)).toEqual(crawlFieldEntries().map(([name]) => name));
      expect(input.required).toEqual(['start_urls']);
      for (const [name, field] of crawlFieldEntries()) {
        const facts = fieldFacts(field.portable ?? field.schema);
        // The one default of its own: the MCP spec's concurrency.
        const mcpDefault = name === 'max_concurrent_crawls' ? 20 : facts.default;
        expect(stated(properties[name]!), name).toEqual({ minimum: facts.minimum, maximum: facts.maximum, default: mcpDefault });
        expect(String(properties[name]!.description), name).toContain(field.description);
      }
    } finally {
      await client.close();
    }
  });
});

describe('the stored crawl configuration', () => {
  it('is stored with the source when it is about the crawl, and a recrawl reads every stored field back', async () => {
    const body = { name: 'stored-config', start_urls: ['https://docs.example.invalid/'], max_depth: 2, url_patterns: ['/guide/**'], max_pages: 7, use_sitemap: true };
    const res = await postCrawl(JSON.stringify(body));
    expect(res.status).toBe(202);
    const job = (await res.json()) as { source_id: string };
    const { rows } = await db.pool.query<{ crawl_config: Record<string, unknown> }>('SELECT crawl_config FROM sources WHERE id = $1', [job.source_id]);
    const stored = rows[0]!.crawl_config;
    expect(Object.keys(stored).sort()).toEqual([...STORED_FIELDS].sort());
    const parsed = parseCrawlRequest(body);
    for (const name of STORED_FIELDS) expect(stored[name], name).toEqual(parsed[name]);
    const { request } = await recrawlRequest(db.pool, job.source_id);
    const again = parseCrawlRequest(request);
    for (const name of STORED_FIELDS) expect(again[name], name).toEqual(parsed[name]);
  });
});

describe('POST /api/crawl-jobs with the derived body schema', () => {
  it("reports a bad value with the crawler's own message, as the CLI and MCP do", async () => {
    for (const bad of [{ max_depth: 4 }, { max_depth: 'deep' }, { max_pages: 0 }, { url_patterns: ['[unclosed'] }, { start_urls: 'https://example.com/' }]) {
      const body = { name: 'bad', start_urls: ['https://example.com/'], ...bad };
      const res = await postCrawl(JSON.stringify(body));
      expect(res.status, JSON.stringify(bad)).toBe(422);
      let expected: { message: string; hint?: string; details?: unknown[] } | undefined;
      try {
        parseCrawlRequest(body);
      } catch (error) {
        expected = error as typeof expected;
      }
      expect(await res.json()).toEqual({ error: `${expected!.message} ${expected!.hint}`, code: 'validation_error', details: expected!.details });
    }
  });

  it('answers any JSON body with 202, 409 or 422 and the error body, never a 500', async () => {
    const anyJson = fc.jsonValue({ maxDepth: 3 });
    const either = <T>(valid: fc.Arbitrary<T>) => fc.oneof(valid, anyJson);
    // A valid start URL always comes with a name, so no request fetches a page to detect one.
    const crawlish = fc.record(
      {
        name: fc.constantFrom('prop-a', 'prop-b'),
        start_urls: either(fc.constantFrom(['https://docs.example.invalid/'], ['http://127.0.0.1/'], [], ['ftp://x/'])),
        max_depth: either(fc.integer({ min: -2, max: 5 })),
        version: either(fc.string({ maxLength: 120 })),
        domain_filter: either(fc.constantFrom('example.invalid', 'co.uk', '10.0.0.1', 'localhost')),
        url_patterns: either(fc.array(fc.string({ maxLength: 20 }), { maxLength: 3 })),
        exclude_patterns: either(fc.array(fc.string({ maxLength: 20 }), { maxLength: 3 })),
        max_concurrent_crawls: either(fc.integer({ min: -1, max: 25 })),
        metadata: either(fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 3 })),
        use_sitemap: either(fc.boolean()),
        max_pages: either(fc.oneof(fc.integer({ min: -1, max: 200_000 }), fc.double())),
      },
      { requiredKeys: ['name'] },
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(anyJson, crawlish), async (body) => {
        const text = JSON.stringify(body);
        const res = await postCrawl(text);
        // JSON with a __proto__ key (or constructor.prototype) is refused by the JSON parser before any schema:
        // 400 with the error body, the documented answer to a body that is not acceptable JSON.
        const poisoned = /"(__proto__|constructor)":/.test(text);
        expect(poisoned ? [202, 400, 409, 422] : [202, 409, 422]).toContain(res.status);
        const answer = (await res.json()) as Record<string, unknown>;
        if (res.status !== 202) expect(Object.keys(answer).sort()).toEqual(['code', 'details', 'error']);
      }),
      { numRuns: 120, examples: [[{ name: 'prop-a', version: JSON.parse(`{"__proto__":""}`) }]] },
    );
  });
});
