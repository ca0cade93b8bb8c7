import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BURST_NAMES, healthDuringBurst, percentile, sendBurst } from '../../bench/harness/body-burst.ts';
import { OPEN_SHAPE, readBodySchema } from '../../src/daemon/body-shape.js';
import { MAX_JSON_DEPTH, MAX_JSON_KEYS, scanJson } from '../../src/daemon/json-body.js';
import { mcpRoutes } from '../../src/daemon/mcp/routes.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

/**
 * SECURITY.md, Hostile input: "A route refuses a body larger than its schema allows, an object with more than
 * 1,000 keys, or a key its schema does not have, as the body arrives, before anything parses or validates it;
 * refusing such bodies keeps /health within 100 ms." The report: a 1.1 MB object of 100,000 unknown keys
 * answered 422 after 0.4 s of blocked event loop, and 20 at once held /health for 4.8 s.
 */

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

const post = (route: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${daemon.base}${route}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

describe('bodies refused before they are parsed', () => {
  // This machine's own /health latency moves by hundreds of milliseconds under other load (2 cores shared, and
  // the client building and sending 22 MB is part of it), so each burst is run against a control: the same burst
  // at a stand-in in the client's process that refuses every body at once (the same load on the machine, none on
  // the daemon). What refusing the bodies adds to /health's 95th percentile must stay under 100 ms; on a quiet
  // machine that is /health under 100 ms (npm run bench). A pair spoiled by a burst of other load is run again, up
  // to three times: before the fix every pair failed by seconds (one burst took the p95 to tens of seconds here).
  it('keeps /health within 100 ms (95th percentile) of a control run while it refuses bursts of 20 wide bodies at once, on every kind of route', async () => {
    const rows: string[] = [];
    for (const burst of BURST_NAMES) {
      let added = Number.POSITIVE_INFINITY;
      for (let attempt = 0; attempt < 3 && added >= 100; attempt++) {
        const control = percentile((await healthDuringBurst(daemon.base, burst, { concurrency: 20, rounds: 1, control: true })).latencies, 95);
        const result = await healthDuringBurst(daemon.base, burst, { concurrency: 20, rounds: 1 });
        const p95 = percentile(result.latencies, 95);
        added = p95 - control;
        rows.push(
          `${burst}: ${result.bytes} bytes ×20 → ${JSON.stringify(result.statuses)} in ${result.burstMs.toFixed(0)} ms; /health p95 ${p95.toFixed(1)} ms (control ${control.toFixed(1)} ms), max ${Math.max(...result.latencies).toFixed(1)} ms`,
        );
        // Every body refused with a 4xx (or the connection closed on a body refused before it was read).
        for (const status of Object.keys(result.statuses)) expect(status === 'closed' || (Number(status) >= 400 && Number(status) < 500), `${burst} ${status}`).toBe(true);
      }
      expect(added, rows.join('\n')).toBeLessThan(100);
    }
    console.log(rows.join('\n'));
    expect((await fetch(`${daemon.base}/health`)).status).toBe(200);
  }, 600_000);

  // Robust to the machine's other load: before the fix a refused body cost the daemon about 330 ms of CPU here.
  it('spends under 25 ms of the daemon’s CPU on each refused body', async () => {
    const rows: string[] = [];
    for (const burst of BURST_NAMES) {
      const cpu = process.cpuUsage();
      const result = await sendBurst(daemon.base, burst, { concurrency: 20, rounds: 1 });
      const used = process.cpuUsage(cpu);
      const perBody = (used.user + used.system) / 1000 / 20;
      rows.push(`${burst}: ${perBody.toFixed(2)} ms of CPU per refused body (${JSON.stringify(result.statuses)})`);
      expect(perBody, rows.at(-1)).toBeLessThan(25);
    }
    console.log(rows.join('\n'));
  }, 180_000);

  it('refuses a body over the route’s limit from its Content-Length, and names the limit', async () => {
    const res = await post('/search', JSON.stringify({ query: 'x'.repeat(200_000) }));
    expect(res.status).toBe(413);
    const body = (await res.json()) as { code: string; error: string };
    expect(body.code).toBe('payload_too_large');
    expect(body.error).toMatch(/at most \d+ bytes/);
    const tool = await post('/mcp/execute/get_content', JSON.stringify({ query: 'x'.repeat(200_000) }));
    expect(tool.status).toBe(413);
  });

  it('names the first unknown field with 422, on REST routes and the REST tool endpoint', async () => {
    const search = await post('/search', '{"query":"hello","limt":5,"other":1}');
    expect(search.status).toBe(422);
    expect(await search.json()).toMatchObject({ code: 'validation_error', details: [{ path: '/limt' }] });
    const crawl = await post('/api/crawl-jobs', '{"start_urls":["https://x.org/"],"depth":2}');
    expect(crawl.status).toBe(422);
    expect(((await crawl.json()) as { error: string }).error).toContain('unknown field "depth"');
    const tool = await post('/mcp/execute/get_content', '{"library_id":"x","query":"q","qurey":"q"}');
    expect(tool.status).toBe(422);
    expect(((await tool.json()) as { error: string }).error).toContain('unknown field "qurey"');
  });

  it('refuses an object of more than 1,000 keys where any key is allowed (metadata, a JSON-RPC message)', async () => {
    const keys = (n: number) => Array.from({ length: n }, (_, i) => `"k${i}":1`).join(',');
    const crawl = await post('/api/crawl-jobs', `{"start_urls":["https://x.org/"],"metadata":{${keys(MAX_JSON_KEYS + 1)}}}`);
    expect(crawl.status).toBe(400);
    expect(((await crawl.json()) as { error: string }).error).toContain('at /metadata');
    const rpc = await post('/mcp', `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{${keys(MAX_JSON_KEYS + 1)}}}`, { accept: 'application/json, text/event-stream' });
    expect(rpc.status).toBe(400);
    expect(await rpc.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
    // Within the cap: metadata of 50 keys is an ordinary crawl request.
    expect((await post('/api/crawl-jobs', `{"start_urls":["https://x.org/"],"metadata":{${keys(50)}}}`)).status).toBe(202);
  });

  it('documents every JSON request body as closed, so no route takes fields its schema does not name', async () => {
    const spec = (await (await fetch(`${daemon.base}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: { $ref?: string; additionalProperties?: unknown } }> } }>>;
      components: { schemas: Record<string, { additionalProperties?: unknown }> };
    };
    const open: string[] = [];
    for (const [route, methods] of Object.entries(spec.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        let schema = op.requestBody?.content?.['application/json']?.schema;
        if (schema?.$ref) schema = spec.components.schemas[schema.$ref.split('/').pop()!];
        if (schema && schema.additionalProperties !== false) open.push(`${method} ${route}`);
      }
    }
    expect(open).toEqual([]);
  });
});

describe('scanJson', () => {
  it('property: never refuses JSON within the limits, and never throws on any text', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        expect(scanJson(JSON.stringify(value))).toBeNull();
        expect(scanJson(JSON.stringify(value, null, 2))).toBeNull();
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('{', '}', '[', ']', '"', '\\', ',', ':', 'a', '1', ' '), maxLength: 200 }), (text) => {
        const problem = scanJson(text);
        expect(problem === null || problem.kind === 'too_deep' || problem.kind === 'too_wide').toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('property: stops at the first key a closed object does not take, whatever its spelling in the text', () => {
    const allowed = ['query', 'limit', 'source'];
    const shape = readBodySchema(z.toJSONSchema(z.object({ query: z.string().max(10), limit: z.number(), source: z.string().max(10) }).strict(), { io: 'input' })).shape;
    const key = fc.oneof(fc.constantFrom(...allowed), fc.string({ maxLength: 6 }));
    fc.assert(
      fc.property(fc.uniqueArray(key, { maxLength: 6 }), fc.boolean(), (keys, escape) => {
        // JSON may spell a key with escapes: "qu\u0065ry" is "query".
        const spell = (k: string) => (escape ? JSON.stringify(k).replace(/e/g, '\\u0065') : JSON.stringify(k));
        const text = `{${keys.map((k) => `${spell(k)}:1`).join(',')}}`;
        const firstUnknown = keys.find((k) => !allowed.includes(k));
        const problem = scanJson(text, shape);
        if (firstUnknown === undefined) expect(problem).toBeNull();
        else expect(problem).toEqual({ kind: 'unknown_key', path: [firstUnknown], allowed });
      }),
      { numRuns: 500 },
    );
  });

  it('refuses nesting past the limit and objects past the key cap, naming where', () => {
    expect(scanJson('['.repeat(MAX_JSON_DEPTH + 1))).toEqual({ kind: 'too_deep' });
    expect(scanJson(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`)).toBeNull();
    const wide = `{"a":[1,{${Array.from({ length: MAX_JSON_KEYS + 1 }, (_, i) => `"k${i}":1`).join(',')}}]}`;
    expect(scanJson(wide, OPEN_SHAPE)).toEqual({ kind: 'too_wide', path: ['a', '1'] });
    // Strings that look like structure are skipped whole, escaped quotes included.
    expect(scanJson(`{"a":"${'{\\"k\\":1,'.repeat(2000)}"}`)).toBeNull();
  });

  it('reads each route schema’s bound: a few short fields take kilobytes, an unbounded text takes no bound', () => {
    const few = readBodySchema(z.toJSONSchema(z.object({ q: z.string().max(100), n: z.number() }).strict(), { io: 'input' }));
    expect(few.bytes).toBeLessThan(2000);
    expect(readBodySchema(z.toJSONSchema(z.object({ text: z.string() }).strict(), { io: 'input' })).bytes).toBe(Number.POSITIVE_INFINITY);
    expect(readBodySchema(z.toJSONSchema(z.object({ q: z.string().max(100) }), { io: 'input' })).bytes).toBe(Number.POSITIVE_INFINITY);
  });
});
