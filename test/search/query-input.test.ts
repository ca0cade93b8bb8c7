import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTsQueries, compoundPattern, parseQuery } from '../../src/core/search/query.js';
import { planRetrieval } from '../../src/core/search/search.js';
import { mcpRoutes } from '../../src/daemon/mcp/routes.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { runCli } from '../helpers/cli.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { addPage, createSource } from './fixtures.js';

/**
 * Query text is outside input on every surface. A token with no letters or digits (`_`, `$`, `=>`) once
 * became an empty tsquery operand: a syntax error, so CLI exit 1, REST 500 and MCP internal_error.
 */

const WITH_WORDS = ['for _ in range', '$ ajax', '_ debounce', 'echo $?', 'a :: b', 'x => y', 'say "', "it's", 'back\\slash', 'a &|!():*<> b', '"_ gather"'];
const WITHOUT_WORDS = ['::', '=>', '"', "'", '\\', '&|!():*<>', '_', '$', '$?', '"_"'];

let db: TestDatabase;
let daemon: Awaited<ReturnType<typeof startTestDaemon>>;

beforeAll(async () => {
  db = await createTestDatabase();
  const shell = await createSource(db.pool, 'shellguide');
  await addPage(db.pool, shell, 'https://shellguide.example/status.html', [
    { title: 'The exit status', code: 'ls /tmp/build/output/directory\ncat /etc/hostname\nfalse\necho $?', language: 'bash' },
    { title: 'A greeting', code: 'echo "hello"\necho "world"\necho "again"', language: 'bash' },
    { title: 'Loop over a range', code: 'for _ in range(3):\n    print("hi")', language: 'python' },
  ]);
  daemon = await startTestDaemon(db.config, { routes: [...docsIndexRoutes, ...mcpRoutes] });
});

afterAll(async () => {
  await daemon?.close();
  await db?.drop();
});

describe('query tokens without word characters', () => {
  it('never become tsquery operands, and operators are kept as symbols', () => {
    expect(parseQuery('for _ in range').terms.map((t) => t.text)).toEqual(['for', 'in', 'range']);
    expect(parseQuery('echo $?')).toMatchObject({ terms: [{ text: 'echo' }], symbols: ['$?'] });
    expect(parseQuery('"_ gather"').terms.map((t) => t.text)).toEqual(['gather']);
    for (const q of WITHOUT_WORDS) expect(parseQuery(q).terms, q).toEqual([]);
  });

  it('builds tsquery text and a compound-name pattern PostgreSQL accepts for any string', async () => {
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 300 }),
      fc.string({ unit: fc.constantFrom('_', '$', '?', ':', '=', '>', '"', "'", '\\', '&', '|', '!', '(', ')', '*', '<', ' ', 'a', 'B', '.', '-', '#', '/', '\0', '\u202e', 'é'), maxLength: 60 }),
    );
    await fc.assert(
      fc.asyncProperty(text, async (q) => {
        const parsed = parseQuery(q);
        const t = buildTsQueries(parsed);
        // Every term selective, so the relaxed page tier's combinations are all built.
        const { relaxedCombos } = planRetrieval(
          t,
          t.perTerm.map(() => 0.01),
        );
        const sources = [t.all, t.any, t.phrase, ...t.perTerm, ...t.perTermTitle, ...t.perTermCode, ...relaxedCombos];
        await db.pool.query(`SELECT to_tsquery('english', x) FROM unnest($1::text[]) AS x`, [sources]);
        // The compound-name pattern is a regular expression made from the query's words: it must compile.
        const pattern = compoundPattern(parsed, () => true);
        expect(pattern).toMatch(/^$|^\(\w+\[\._\]\?\w+(\|\w+\[\._\]\?\w+)*\)\(\?!\[a-z0-9\]\)$/);
        await db.pool.query(`SELECT 'json.load(x)' ~* $1`, [pattern === '' ? 'x' : pattern]);
      }),
      { numRuns: 300 },
    );
  });

  it('answers REST searches with 200, or 422 when nothing is searchable, and ranks a typed operator up', async () => {
    for (const q of WITH_WORDS) {
      const res = await fetch(`${daemon.base}/api/search?${new URLSearchParams({ q })}`);
      expect(res.status, q).toBe(200);
    }
    for (const q of WITHOUT_WORDS) {
      const res = await fetch(`${daemon.base}/api/search?${new URLSearchParams({ q })}`);
      expect(res.status, q).toBe(422);
      expect(await res.json()).toMatchObject({ code: 'validation_error', error: expect.stringContaining('no words'), details: [] });
    }
    const body = (await (await fetch(`${daemon.base}/api/search?${new URLSearchParams({ q: 'echo $?' })}`)).json()) as { items: Array<{ code: string }> };
    expect(body.items[0]?.code).toContain('$?');
  });

  it('answers MCP get_content without an internal error', async () => {
    const client = new Client({ name: 'query-input-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.base}/mcp`)));
    try {
      for (const query of WITH_WORDS) {
        const result = await client.callTool({ name: 'get_content', arguments: { library_id: 'shellguide', query } });
        expect(result.isError ?? false, `${query}: ${JSON.stringify(result.content)}`).toBe(false);
      }
      for (const query of WITHOUT_WORDS) {
        const result = await client.callTool({ name: 'get_content', arguments: { library_id: 'shellguide', query } });
        expect(result._meta?.['docdex/error'], query).toMatchObject({ code: 'validation_error' });
      }
    } finally {
      await client.close();
    }
  });

  it('runs `docdex search` on them with exit 0, or one Error and Hint line with exit 2', async () => {
    const ok = await runCli(['search', 'for _ in range'], { env: db.env });
    expect(ok.exitCode, String(ok.stderr)).toBe(0);
    expect(String(ok.stdout)).toContain('for _ in range(3)');
    const none = await runCli(['search', '=>'], { env: db.env });
    expect(none.exitCode).toBe(2);
    expect(String(none.stderr)).toMatch(/^Error: .*no words/m);
    expect(String(none.stderr)).toMatch(/^Hint: /m);
    expect(String(none.stderr)).not.toMatch(/\n\s+at /);
  });

  it('never answers 500 for any query string, and the daemon stays healthy', async () => {
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 1200 }),
      fc.string({ unit: fc.constantFrom('_', '$', '?', ':', '=', '>', '"', "'", '\\', '&', '|', '!', '(', ')', '*', '\0', '\n', '\t', ' ', 'x'), maxLength: 40 }),
    );
    await fc.assert(
      fc.asyncProperty(text, async (q) => {
        const res = await fetch(`${daemon.base}/api/search?${new URLSearchParams({ q })}`);
        const body = (await res.json()) as { code?: string };
        expect([200, 422], `${JSON.stringify(q)} → ${res.status} ${JSON.stringify(body)}`).toContain(res.status);
      }),
      { numRuns: 200 },
    );
    expect((await fetch(`${daemon.base}/health`)).status).toBe(200);
  });
});
