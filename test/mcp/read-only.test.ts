import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { createDocdexMcpServer } from '../../src/core/mcp/server.js';
import type { McpServerOptions } from '../../src/core/mcp/server.js';
import { ERROR_META_KEY } from '../../src/core/mcp/tool.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { resultText } from './helpers.js';

/**
 * Which MCP tools write, and the read-only server (MCP_READ_ONLY, or a session with a `:read` token): the
 * writing tools are neither listed nor run. The transports are covered by scopes.test.ts.
 */

/** Every tool that changes anything. A new tool must be added here or to READING_TOOLS. */
const WRITING_TOOLS = new Set(['init_crawl', 'cancel_crawl', 'add_library', 'sync_project']);
const READING_TOOLS = new Set(['search_libraries', 'get_content', 'get_page_markdown', 'get_crawl_status', 'get_project_libraries', 'search_project']);

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

async function connect(config = db.config, options: McpServerOptions = {}): Promise<Client> {
  const { server } = createDocdexMcpServer({ pool: db.pool, info: db.info, config }, options);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'read-only-test', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

/** Arguments each writing tool would accept: the refusal must come from the scope, not from validation. */
const VALID_ARGUMENTS: Record<string, Record<string, unknown>> = {
  init_crawl: { start_urls: ['https://docs.example.com/'] },
  cancel_crawl: { job_id: '00000000-0000-0000-0000-000000000000' },
  add_library: { specs: ['npm:react@18.3.1'] },
  sync_project: {},
};

describe('tool classification', () => {
  it('derives writes from each tool readOnlyHint, and every tool is classified', () => {
    const { tools } = createDocdexMcpServer({ pool: db.pool, info: db.info, config: db.config });
    expect(tools.size).toBeGreaterThanOrEqual(7);
    for (const tool of tools.values()) {
      expect(WRITING_TOOLS.has(tool.name) || READING_TOOLS.has(tool.name), `${tool.name} is neither a reading nor a writing tool`).toBe(true);
      expect(tool.writes, tool.name).toBe(WRITING_TOOLS.has(tool.name));
      expect(tool.listing.annotations?.readOnlyHint === true, tool.name).toBe(!WRITING_TOOLS.has(tool.name));
    }
  });
});

describe('read-only MCP server', () => {
  const readOnlyConfig = () => loadConfig({ ...db.env, MCP_READ_ONLY: 'true' });

  for (const [label, make] of [
    ['MCP_READ_ONLY=true', () => connect(readOnlyConfig())],
    ['a read-only session', () => connect(db.config, { readOnly: true })],
  ] as const) {
    it(`${label}: lists only reading tools and refuses each writing tool with read_only`, async () => {
      const client = await make();
      try {
        const { tools } = await client.listTools();
        const names = tools.map((t) => t.name);
        expect(names.length).toBeGreaterThanOrEqual(4);
        for (const name of names) expect(WRITING_TOOLS.has(name), name).toBe(false);
        expect(client.getInstructions()).toContain('read-only');
        expect(client.getInstructions()).not.toContain('init_crawl');
        for (const name of ['init_crawl', 'cancel_crawl', 'add_library']) {
          const result = await client.callTool({ name, arguments: VALID_ARGUMENTS[name] });
          expect(result.isError, name).toBe(true);
          expect(resultText(result)).toMatch(new RegExp(`^${name} changes the index, and this MCP connection is read-only`));
          expect(result._meta?.[ERROR_META_KEY]).toEqual({ code: 'read_only', details: [{ tool: name }] });
        }
        const libraries = await client.callTool({ name: 'search_libraries', arguments: {} });
        expect(libraries.isError).toBeFalsy();
        expect(resultText(libraries)).toContain('No libraries are indexed yet');
      } finally {
        await client.close();
      }
    });
  }

  it('a full server lists every tool, and nothing was written by the refusals', async () => {
    const client = await connect();
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['init_crawl', 'cancel_crawl', 'add_library']));
      const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM crawl_jobs');
      expect(rows[0]!.n).toBe(0);
    } finally {
      await client.close();
    }
  });
});
