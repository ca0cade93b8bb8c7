import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { execa } from 'execa';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerToken, createTokenChecker } from '../../src/daemon/auth.js';
import { mcpHttpPlugin } from '../../src/daemon/mcp/http.js';
import { BIN, ROOT } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { crawlQuillstack, serveSite, ALL_TOOLS } from './helpers.js';

/**
 * The official MCP Inspector in CLI mode (`mcp-inspector --cli`) against `docdex serve --mcp` (the real built
 * binary) and against the HTTP plugin (streamable HTTP and legacy SSE, with a bearer token). Its postinstall
 * script is not needed: as an installed dependency the CLI ships prebuilt.
 */

const INSPECTOR = path.join(ROOT, 'node_modules', '.bin', 'mcp-inspector');
const TOKEN = 'inspector-token-91ab';
let db: TestDatabase;
let site: Awaited<ReturnType<typeof serveSite>>;
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  if (!existsSync(path.join(ROOT, 'dist', 'commands', 'serve.js'))) throw new Error('dist/ is missing: run `npm run build` before the MCP inspector tests.');
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

async function inspector(args: string[]) {
  // HOME is private so the inspector's catalog (~/.mcp-inspector) is not written to the real home.
  return execa(INSPECTOR, ['--cli', ...args], { reject: false, timeout: 90_000, env: { ...process.env, HOME: db.home }, extendEnv: false });
}

const stdioTarget = () => ['-e', `DATABASE_URL=${db.url}`, '-e', `DOCDEX_HOME=${db.home}`, '-e', 'CRAWL_DELAY=0', process.execPath, BIN, 'serve', '--mcp'];

describe('MCP inspector CLI', () => {
  it('lists the tools over stdio with portable schemas (--strict)', async () => {
    const r = await inspector([...stdioTarget(), '--method', 'tools/list', '--strict']);
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const { tools } = JSON.parse(String(r.stdout)) as { tools: Array<{ name: string; annotations: Record<string, boolean> }> };
    expect(tools.map((t) => t.name).sort()).toEqual(ALL_TOOLS);
    expect(tools.find((t) => t.name === 'get_content')!.annotations.readOnlyHint).toBe(true);
    // --strict reports every portability problem on stderr; there must be none.
    expect(String(r.stderr)).not.toMatch(/^(Warning|Error): tool/m);
  });

  it('calls a tool over stdio with --tool-arg values typed from the schema', async () => {
    const r = await inspector([...stdioTarget(), '--method', 'tools/call', '--tool-name', 'get_content', '--tool-arg', 'library_id=quillstack', 'query=route decorator', 'limit=1']);
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const result = JSON.parse(String(r.stdout)) as { content: Array<{ text: string }>; isError?: boolean };
    expect(result.isError).toBeFalsy();
    expect(result.content[0]!.text).toMatch(/showing 1–1\./);
    expect(result.content[0]!.text).toContain('@app.route("/items/<item_id>"');
  });

  it('reports a tool error result over stdio', async () => {
    const r = await inspector([...stdioTarget(), '--method', 'tools/call', '--tool-name', 'get_content', '--tool-arg', 'library_id=zebrafish']);
    const out = `${String(r.stdout)}${String(r.stderr)}`;
    expect(out).toContain('No library matches \\"zebrafish\\"');
  });

  it('lists and calls tools over streamable HTTP with a bearer token', async () => {
    const list = await inspector([`${base}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${TOKEN}`, '--method', 'tools/list']);
    expect(list.exitCode, String(list.stderr)).toBe(0);
    expect((JSON.parse(String(list.stdout)) as { tools: unknown[] }).tools).toHaveLength(10);
    const call = await inspector([
      `${base}/mcp`,
      '--transport',
      'http',
      '--header',
      `Authorization: Bearer ${TOKEN}`,
      '--method',
      'tools/call',
      '--tool-name',
      'get_page_markdown',
      '--tool-arg',
      `url=${site.url}/guide/install.html`,
    ]);
    expect(call.exitCode, String(call.stderr)).toBe(0);
    expect(String(call.stdout)).toContain('Checking the installation');
  });

  it('is refused over HTTP with a wrong token', async () => {
    const r = await inspector([`${base}/mcp`, '--transport', 'http', '--header', 'Authorization: Bearer wrong', '--method', 'tools/list']);
    expect(r.exitCode).not.toBe(0);
    // On a 401 with WWW-Authenticate the inspector would start OAuth, which it refuses to do without a TTY.
    expect(`${String(r.stdout)}${String(r.stderr)}`).toMatch(/auth_required|401|nauthorized/);
    expect(String(r.stdout)).not.toContain('"tools"');
  });

  it('lists and calls tools over the legacy SSE transport', async () => {
    const list = await inspector([`${base}/mcp/v1/sse`, '--transport', 'sse', '--header', `Authorization: Bearer ${TOKEN}`, '--method', 'tools/list']);
    expect(list.exitCode, String(list.stderr)).toBe(0);
    expect((JSON.parse(String(list.stdout)) as { tools: unknown[] }).tools).toHaveLength(10);
    const call = await inspector([
      `${base}/mcp/v1/sse`,
      '--transport',
      'sse',
      '--header',
      `Authorization: Bearer ${TOKEN}`,
      '--method',
      'tools/call',
      '--tool-name',
      'search_libraries',
      '--tool-arg',
      'query=quilstack',
    ]);
    expect(call.exitCode, String(call.stderr)).toBe(0);
    expect(String(call.stdout)).toContain('[selected]');
  });
});
