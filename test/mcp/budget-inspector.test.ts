import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { execa } from 'execa';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTokens } from '../../src/core/mcp/tokens.js';
import { mcpHttpPlugin } from '../../src/daemon/mcp/http.js';
import { ROOT } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { serveBudgetSite } from './budget-site.js';
import { crawlSite } from './helpers.js';

/**
 * #36's budgets through the official MCP Inspector CLI over streamable HTTP. Each inspector run is its own
 * MCP session, so two runs also show that nothing is de-duplicated across sessions.
 */

const INSPECTOR = path.join(ROOT, 'node_modules', '.bin', 'mcp-inspector');
let db: TestDatabase;
let site: Awaited<ReturnType<typeof serveBudgetSite>>;
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  db = await createTestDatabase();
  site = await serveBudgetSite();
  await crawlSite(db, { name: 'widgetkit', start_urls: [`${site.url}/`], max_depth: 1 });
  app = Fastify();
  await app.register(mcpHttpPlugin, { deps: { pool: db.pool, info: db.info, config: db.config } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await app?.close();
  await site?.close();
  await db?.drop();
});

async function getContent(args: string[]): Promise<{ text: string; structured: { tokens: number; left_out: number[]; snippets: Array<{ state: string }> } }> {
  const r = await execa(INSPECTOR, ['--cli', `${base}/mcp`, '--transport', 'http', '--method', 'tools/call', '--tool-name', 'get_content', '--tool-arg', 'library_id=widgetkit', ...args], {
    reject: false,
    timeout: 90_000,
    env: { ...process.env, HOME: db.home },
    extendEnv: false,
  });
  expect(r.exitCode, String(r.stderr)).toBe(0);
  const result = JSON.parse(String(r.stdout)) as { content: Array<{ text: string }>; structuredContent: never; isError?: boolean };
  expect(result.isError).toBeFalsy();
  return { text: result.content[0]!.text, structured: result.structuredContent };
}

describe('get_content budgets through the MCP inspector CLI', () => {
  it.each([500, 2000, 10_000])('stays within max_tokens=%i with 20 results and says what was left out', async (maxTokens) => {
    const { text, structured } = await getContent(['query=configure widget retries', 'limit=20', `max_tokens=${maxTokens}`]);
    const tokens = countTokens(text);
    console.log(`inspector get_content max_tokens=${maxTokens}: ${tokens} tokens, ${structured.snippets.length} shown, ${structured.left_out.length} left out`);
    expect(tokens).toBeLessThanOrEqual(maxTokens);
    expect(structured.tokens).toBe(tokens);
    expect(structured.snippets.length + structured.left_out.length).toBe(20);
    expect(text).toContain(`Left out ${structured.left_out.length} of this page's results to stay within max_tokens=${maxTokens}`);
  });

  it('does not de-duplicate across two sessions', async () => {
    const args = ['query=configure widget 3', 'limit=3', 'max_tokens=10000'];
    const first = await getContent(args);
    const second = await getContent(args);
    expect(second.structured.snippets.map((s) => s.state)).toEqual(['full', 'full', 'full']);
    expect(second.text).toBe(first.text);
    expect(second.text).not.toContain('already shown');
  });

  it('the REST tool endpoint, which has no sessions, never refers to what another call was shown', async () => {
    const body = JSON.stringify({ library_id: 'widgetkit', query: 'configure widget 5', limit: 2, max_tokens: 10_000 });
    const texts: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${base}/mcp/execute/get_content`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(res.status).toBe(200);
      texts.push(((await res.json()) as { content: Array<{ text: string }> }).content[0]!.text);
    }
    expect(texts[1]).toBe(texts[0]);
    expect(texts[1]).not.toContain('already shown');
  });
});
