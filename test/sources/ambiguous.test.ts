import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { listSources } from '../../src/core/sources/manage.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { runCli } from '../helpers/cli.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { resultText } from '../mcp/helpers.js';
import { addPage, createSource } from '../search/fixtures.js';
import type { FixtureSource } from '../search/fixtures.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectMcpClient } from '../helpers/mcp.js';

/**
 * A library name that is no exact name is taken only when it is the one clear match; otherwise every surface
 * (CLI --source, REST, MCP) lists the candidates. Sources with content always win over empty ones.
 */

let db: TestDatabase;
let client: Client;
let daemon: Awaited<ReturnType<typeof startTestDaemon>>;
let postgres: FixtureSource;
let pythonFull: FixtureSource;

async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult & { text: string }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  return { ...result, text: resultText(result) };
}

async function full(name: string, code: string): Promise<FixtureSource> {
  const source = await createSource(db.pool, name);
  await addPage(db.pool, source, `https://${name.replace(/[^a-z0-9]+/gi, '')}.example/guide`, [{ title: `${name} build`, code }]);
  return source;
}

beforeAll(async () => {
  db = await createTestDatabase();
  await full('mkdocs', 'mkdocs build --strict');
  await full('mkdocs-material', 'theme:\n  name: material  # build');
  await full('mkdocstrings', 'plugins:\n  - mkdocstrings  # build');
  await createSource(db.pool, 'mk-empty');
  postgres = await full('PostgreSQL', 'CREATE INDEX build_idx ON t (a);');
  pythonFull = await full('Python 3.13 documentation', 'import json\njson.dumps(build)');
  // What a failed crawl used to leave behind: a source named after the host, with nothing in it.
  await createSource(db.pool, 'docs.python.org');
  client = await connectMcpClient(db);
  daemon = await startTestDaemon(loadConfig(db.env), { routes: docsIndexRoutes });
});

afterAll(async () => {
  await client?.close();
  await daemon?.close();
  await db?.drop();
});

describe('ambiguous --source', () => {
  it('CLI: exits 2 listing the candidates, and takes an exact name or a clear alias', async () => {
    const ambiguous = await runCli(['search', 'build', '--source', 'mk'], { env: db.env });
    expect(ambiguous.exitCode).toBe(2);
    const stderr = String(ambiguous.stderr);
    for (const name of ['mkdocs', 'mkdocs-material', 'mkdocstrings', 'mk-empty']) expect(stderr).toContain(name);
    expect(stderr).toMatch(/^Hint: /m);

    const exact = await runCli(['search', 'build', '--source', 'mkdocs', '--json'], { env: db.env });
    expect(exact.exitCode, String(exact.stderr)).toBe(0);
    const urls = (JSON.parse(String(exact.stdout)) as { items: Array<{ source_url: string }> }).items.map((r) => r.source_url);
    expect(urls.length).toBeGreaterThan(0);
    expect(urls.every((u) => u.startsWith('https://mkdocs.example/'))).toBe(true);

    const alias = await runCli(['search', 'index', '--source', 'pg', '--json'], { env: db.env });
    expect(alias.exitCode, String(alias.stderr)).toBe(0);
    expect(String(alias.stdout)).toContain('https://PostgreSQL.example/guide');
  });

  it('REST: 422 with the candidates in details', async () => {
    const res = await fetch(`${daemon.base}/api/search?q=build&source=mk`);
    expect(res.status).toBe(422);
    const body = (await res.json()) as { code: string; error: string; details: Array<{ name: string }> };
    expect(body.code).toBe('validation_error');
    expect(body.details.map((d) => d.name).sort()).toEqual(['mk-empty', 'mkdocs', 'mkdocs-material', 'mkdocstrings']);
  });

  it('MCP: get_content names the candidates in an error result', async () => {
    const result = await call('get_content', { library_id: 'mk', query: 'build' });
    expect(result.isError).toBe(true);
    for (const name of ['mkdocs-material', 'mkdocstrings']) expect(result.text).toContain(name);
  });
});

describe('library ranking', () => {
  it('search_libraries finds postgresql for "pg" and selects it', async () => {
    const result = await call('search_libraries', { query: 'pg' });
    const structured = result.structuredContent as { selected_id?: string; libraries: Array<{ name: string }> };
    expect(structured.libraries[0]!.name).toBe('PostgreSQL');
    expect(structured.selected_id).toBe(postgres.id);
  });

  it('prefers a source with content and never selects an empty one', async () => {
    const result = await call('search_libraries', { query: 'python' });
    const structured = result.structuredContent as { selected_id?: string; libraries: Array<{ name: string; selected: boolean; snippet_count: number }> };
    expect(structured.libraries[0]!.name).toBe('Python 3.13 documentation');
    expect(structured.selected_id).toBe(pythonFull.id);
    expect(structured.libraries.filter((l) => l.snippet_count === 0).every((l) => !l.selected)).toBe(true);
    expect(result.text).not.toMatch(/docs\.python\.org {2}\[selected\]/);

    const onlyEmpty = await call('search_libraries', { query: 'mk-empty' });
    expect((onlyEmpty.structuredContent as { selected_id?: string }).selected_id).toBeUndefined();

    const listed = await listSources(db.pool, { query: 'python' });
    expect(listed.items[0]!.name).toBe('Python 3.13 documentation');
  });
});
