import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_QUERY_CHARS, checkQueryLength, parseQuery } from '../../src/core/search/query.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { runCli } from '../helpers/cli.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { connectMcpClient } from '../helpers/mcp.js';

/** One rule for the length of search text, the same answer everywhere: refused, never cut. */

const LONG = 'x'.repeat(MAX_QUERY_CHARS + 1);
const LONGEST = 'y'.repeat(MAX_QUERY_CHARS);

describe(`a query over ${MAX_QUERY_CHARS} characters`, () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it('is refused by the CLI with exit 2 and one Error:/Hint: pair, and the longest allowed one runs', async () => {
    const refused = await runCli(['search', LONG], { env: db.env });
    expect(refused.exitCode).toBe(2);
    expect(String(refused.stderr)).toMatch(/^Error: The query is 1,001 characters long; the limit is 1,000\.\nHint: [^\n]+$/);
    const allowed = await runCli(['search', LONGEST, '--json'], { env: db.env });
    expect(allowed.exitCode, String(allowed.stderr)).toBe(0);
  });

  it('gets 422 from REST (POST body and query string)', async () => {
    const daemon = await startTestDaemon(db.config, { routes: docsIndexRoutes });
    try {
      const post = await fetch(`${daemon.base}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: LONG }) });
      expect(post.status).toBe(422);
      const get = await fetch(`${daemon.base}/api/search?q=${LONG}`);
      expect(get.status).toBe(422);
      expect(((await get.json()) as { code: string }).code).toBeTruthy();
      const ok = await fetch(`${daemon.base}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: LONGEST }) });
      expect(ok.status).toBe(200);
    } finally {
      await daemon.close();
    }
  });

  it('is invalid params for the MCP get_content tool', async () => {
    await db.pool.query("INSERT INTO sources (name) VALUES ('lengthy')");
    const client = await connectMcpClient(db);
    try {
      const refused = (await client.callTool({ name: 'get_content', arguments: { library_id: 'lengthy', query: LONG } })) as CallToolResult;
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toMatch(/Invalid arguments for get_content.*query: Too big/);
      const allowed = (await client.callTool({ name: 'get_content', arguments: { library_id: 'lengthy', query: LONGEST } })) as CallToolResult;
      expect(allowed.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  it('is never cut by the parser: any text is parsed whole or refused', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: MAX_QUERY_CHARS + 50 }), (text) => {
        if (text.length > MAX_QUERY_CHARS) expect(() => checkQueryLength(text)).toThrow(/limit is 1,000/);
        else expect(parseQuery(text).raw).toBe(text);
      }),
    );
  });
});
