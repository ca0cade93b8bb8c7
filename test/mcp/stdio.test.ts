import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ErrorCode, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { embeddedServerState } from '../../src/core/db/embedded.js';
import { crawlQuillstack, resultText, serveSite } from './helpers.js';

/**
 * `docdex serve --mcp` through the real built binary (bin/run.js over dist/; run `npm run build` first), with
 * the official SDK stdio client and with raw lines on stdin.
 */

let db: TestDatabase;
let site: Awaited<ReturnType<typeof serveSite>>;
let sourceId: string;

beforeAll(async () => {
  if (!existsSync(path.join(ROOT, 'dist', 'commands', 'serve.js'))) throw new Error('dist/ is missing: run `npm run build` before the stdio MCP tests.');
  db = await createTestDatabase();
  site = await serveSite();
  ({ sourceId } = await crawlQuillstack(db, site.url));
});

afterAll(async () => {
  await site?.close();
  await db?.drop();
});

function childEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(db.env).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

describe('serve --mcp (stdio)', () => {
  it('serves every tool to the SDK stdio client, logging only to stderr', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'serve', '--mcp'], env: childEnv(), stderr: 'pipe' });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const client = new Client({ name: 'docdex-stdio-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect(client.getServerVersion()?.name).toBe('docdex');
      expect(client.getInstructions()).toContain('search_libraries');
      const { tools } = await client.listTools();
      expect(tools).toHaveLength(10);

      const libs = await client.callTool({ name: 'search_libraries', arguments: { query: 'quillstack' } });
      expect((libs.structuredContent as { selected_id: string }).selected_id).toBe(sourceId);
      const content = await client.callTool({ name: 'get_content', arguments: { library_id: sourceId, query: 'route decorator' } });
      expect(resultText(content)).toContain('def show_item(request, item_id):');
      const page = await client.callTool({ name: 'get_page_markdown', arguments: { url: `${site.url}/guide/routing.html#middleware`, max_tokens: 100 } });
      expect((page.structuredContent as { tokens: number; has_more: boolean }).tokens).toBeLessThanOrEqual(100);
      // The stdio server runs the crawl workers itself: a crawl started here finishes with no daemon around.
      const started = await client.callTool({ name: 'init_crawl', arguments: { start_urls: [`${site.url}/guide/install.html`], name: 'stdio-crawl', max_depth: 0 } });
      expect(started.isError).toBeFalsy();
      const jobId = (started.structuredContent as { job_id: string }).job_id;
      let status = '';
      for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
        const s = await client.callTool({ name: 'get_crawl_status', arguments: { job_id: jobId } });
        status = (s.structuredContent as { status: string }).status;
        if (status !== 'queued' && status !== 'running') break;
      }
      expect(status).toBe('completed');
      const crawled = await client.callTool({ name: 'get_content', arguments: { library_id: 'stdio-crawl' } });
      expect(resultText(crawled)).toContain('pip install quillstack');

      const slow = await client.callTool({ name: 'init_crawl', arguments: { start_urls: [`${site.url}/slow/`], name: 'stdio-slow', max_depth: 0 } });
      const slowId = (slow.structuredContent as { job_id: string }).job_id;
      const cancelled = await client.callTool({ name: 'cancel_crawl', arguments: { job_id: slowId } });
      expect((cancelled.structuredContent as { status: string }).status).toBe('cancelled');

      const bad = await client.callTool({ name: 'get_page_markdown', arguments: { url: '' } });
      expect(bad.isError).toBe(true);
      const unknown = await client.callTool({ name: 'drop_everything', arguments: {} }).catch((e: unknown) => e);
      expect((unknown as McpError).code).toBe(ErrorCode.InvalidParams);
    } finally {
      await client.close();
    }
    expect(stderr).toContain('docdex MCP server ready on stdio');
  });

  it('answers unreadable lines with JSON-RPC errors, keeps serving, puts only protocol on stdout, and exits when stdin closes', async () => {
    const child = spawn(process.execPath, [BIN, 'serve', '--mcp'], { env: childEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    const lines: string[] = [];
    const waiters: Array<() => void> = [];
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      waiters.splice(0).forEach((w) => w());
    });
    const nextLine = async (index: number): Promise<Record<string, unknown>> => {
      const deadline = Date.now() + 30_000;
      while (lines.length <= index) {
        if (Date.now() > deadline) throw new Error(`no stdout line ${index}; got ${JSON.stringify(lines)}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 500);
        });
      }
      return JSON.parse(lines[index]!) as Record<string, unknown>;
    };
    const send = (text: string) => child.stdin.write(`${text}\n`);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

    send('{"jsonrpc": "2.0", "id": 1, "method": "initialize", ');
    expect(await nextLine(0)).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
    send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }));
    expect(await nextLine(1)).toMatchObject({ id: 1, result: { serverInfo: { name: 'docdex' } } });
    send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    send(JSON.stringify({ hello: 'not json-rpc' }));
    expect(await nextLine(2)).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
    send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'unknown_tool', arguments: {} } }));
    expect(await nextLine(3)).toMatchObject({ id: 2, error: { code: -32602 } });
    send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'no/such/method' }));
    expect(await nextLine(4)).toMatchObject({ id: 3, error: { code: -32601 } });
    send(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'get_content', arguments: { library_id: 'quillstack', query: 'pip install' } } }));
    const answer = await nextLine(5);
    expect(JSON.stringify(answer)).toContain('pip install quillstack');

    child.stdin.end();
    expect(await exited).toBe(0);
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    expect(lines).toHaveLength(6);
  });

  it('starts the embedded database itself when none is configured, as from a bare MCP client config', async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'docdex-mcp-embedded-'));
    // Only what an MCP client passes: no DATABASE_URL, no DB_HOST.
    const env = { PATH: process.env.PATH ?? '', HOME: home, DOCDEX_HOME: home, NO_COLOR: '1' };
    try {
      const client = new Client({ name: 'docdex-embedded-test', version: '1.0.0' });
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'serve', '--mcp'], env, stderr: 'ignore' }), { timeout: 120_000 });
      const result = await client.callTool({ name: 'search_libraries', arguments: {} });
      expect(resultText(result)).toContain('No libraries are indexed yet');
      await client.close();
      // The server it had to start is stopped again when the client goes (issue 49): nothing keeps running.
      await expect.poll(() => embeddedServerState(home), { timeout: 60_000, interval: 500 }).not.toBe('running');
      const status = await runCli(['db', 'status', '--json'], { env });
      expect(JSON.parse(String(status.stdout))).toMatchObject({ mode: 'embedded', running: false });
    } finally {
      await runCli(['db', 'stop'], { env });
      rmSync(home, { recursive: true, force: true });
    }
  }, 180_000);
});
