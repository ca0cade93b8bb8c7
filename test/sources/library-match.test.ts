import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { setSourceAliases } from '../../src/core/sources/aliases.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { createDashboardData } from '../../src/ui/data/postgres.js';
import { runCli } from '../helpers/cli.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { connectMcpClient } from '../helpers/mcp.js';
import { resultText } from '../mcp/helpers.js';
import { addPage, createSource } from '../search/fixtures.js';

/**
 * Issue #49, item 1: which library a name stands for. An exact name beats a prefix, a prefix beats an alias,
 * and an alias that is only part of a repository name ("node" in semver's "node-semver") never beats a
 * library's own name. A match that is not exact is said on every surface; two equal matches are an error.
 */

let db: TestDatabase;
let client: Client;
let daemon: Awaited<ReturnType<typeof startTestDaemon>>;

async function library(name: string, code: string, title: string, aliases: string[] = []): Promise<void> {
  const source = await createSource(db.pool, name);
  await addPage(db.pool, source, `https://${name.replace(/[^a-z0-9]+/gi, '')}.example/api`, [{ title, code, language: 'javascript' }]);
  if (aliases.length > 0) await setSourceAliases(db.pool, source.id, aliases);
}

interface SearchJson {
  items: Array<{ source_name: string; code: string }>;
  library?: { name: string; version: string; requested: string; exact: boolean };
}

async function cliSearch(query: string, source: string): Promise<{ exitCode: number; json: SearchJson | null; stderr: string }> {
  const result = await runCli(['search', query, '--source', source, '--json'], { env: db.env });
  return { exitCode: result.exitCode ?? -1, json: result.exitCode === 0 ? (JSON.parse(String(result.stdout)) as SearchJson) : null, stderr: String(result.stderr) };
}

beforeAll(async () => {
  db = await createTestDatabase();
  // npm's semver: its repository is node-semver, recorded as an alias by `docdex add npm:semver`.
  await library('semver', "semver.satisfies('1.2.3', '^1.0.0')", 'Check a range', ['node-semver']);
  await library('semver-utils', "semverUtils.parse('1.2.3')", 'Parse a version');
  await library('Node.js v18.20.4 Documentation', "fs.readFileSync('/etc/passwd', 'utf8')", 'Read a file with readFileSync');
  await library('nodemon', 'nodemon({ script: "app.js", readFileSync: true })', 'Watch readFileSync');
  await library('react-dom', 'createRoot(container).render(<App />)', 'Render a root');
  await library('react-router', 'createBrowserRouter([{ path: "/", element: <Root /> }])', 'Render a router root');
  await library('PostgreSQL', 'CREATE INDEX ON t (a);', 'Create an index');
  await library('pgvector', 'CREATE INDEX ON items USING hnsw (embedding vector_l2_ops);', 'Create an HNSW index');
  client = await connectMcpClient(db);
  daemon = await startTestDaemon(loadConfig(db.env), { routes: docsIndexRoutes });
}, 60_000);

afterAll(async () => {
  await client?.close();
  await daemon?.close();
  await db?.drop();
});

describe('a library by name', () => {
  it('CLI: "node" is the Node.js docs, not semver (node-semver) nor nodemon, and the answer says so', async () => {
    const result = await runCli(['search', 'readFileSync', '--source', 'node'], { env: db.env });
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const stdout = String(result.stdout);
    expect(stdout).toContain('No library is named "node"; searched the closest match, Node.js v18.20.4 Documentation.');
    expect(stdout).toContain("fs.readFileSync('/etc/passwd', 'utf8')");
    expect(stdout).not.toContain('nodemon({');

    const json = await cliSearch('readFileSync', 'node');
    expect(json.json?.library).toMatchObject({ name: 'Node.js v18.20.4 Documentation', requested: 'node', exact: false });
    expect(json.json?.items.every((i) => i.source_name === 'Node.js v18.20.4 Documentation')).toBe(true);
  });

  it('an exact name beats a prefix, a whole alias still finds its library, and an exact name says nothing more', async () => {
    const exact = await cliSearch('range', 'semver');
    expect(exact.exitCode, exact.stderr).toBe(0);
    expect(exact.json?.library).toMatchObject({ name: 'semver', exact: true });
    const plain = await runCli(['search', 'range', '--source', 'semver'], { env: db.env });
    expect(String(plain.stdout)).not.toContain('closest match');

    const alias = await cliSearch('range', 'node-semver');
    expect(alias.exitCode, alias.stderr).toBe(0);
    expect(alias.json?.library).toMatchObject({ name: 'semver', exact: false });

    // A well-known short name (pg) is the library it stands for, over another library that starts with it.
    const pg = await cliSearch('index', 'pg');
    expect(pg.exitCode, pg.stderr).toBe(0);
    expect(pg.json?.library?.name).toBe('PostgreSQL');
  });

  it('two libraries that match equally are an error listing both (exit 2)', async () => {
    const result = await runCli(['search', 'root', '--source', 'react'], { env: db.env });
    expect(result.exitCode).toBe(2);
    const stderr = String(result.stderr);
    expect(stderr).toMatch(/^Error: "react" matches 2 sources and none clearly: .*react-dom.*react-router/m);
    expect(stderr).toMatch(/^Hint: /m);
  });

  it('REST says which library it searched', async () => {
    const res = await fetch(`${daemon.base}/api/search?q=readFileSync&source=node`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as SearchJson;
    expect(body.library).toMatchObject({ name: 'Node.js v18.20.4 Documentation', requested: 'node', exact: false });
    const post = await fetch(`${daemon.base}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'range', source: 'semver' }) });
    expect(((await post.json()) as SearchJson).library).toMatchObject({ name: 'semver', exact: true });
  });

  it('MCP get_content and search_libraries take the Node.js docs for "node"', async () => {
    const content = (await client.callTool({ name: 'get_content', arguments: { library_id: 'node', query: 'readFileSync' } })) as CallToolResult;
    expect(content.isError).toBeFalsy();
    const text = resultText(content);
    expect(text).toContain('using the closest match, Node.js v18.20.4 Documentation');
    expect(text).toContain('readFileSync');
    const listed = (await client.callTool({ name: 'search_libraries', arguments: { query: 'node' } })) as CallToolResult;
    const structured = listed.structuredContent as { selected_id?: string; libraries: Array<{ id: string; name: string }> };
    expect(structured.libraries[0]!.name).toBe('Node.js v18.20.4 Documentation');
    expect(structured.selected_id).toBe(structured.libraries[0]!.id);
  });

  it("the dashboard's source filter searches the same library and names it", async () => {
    const data = createDashboardData(db, db.config);
    const found = await data.search({ query: 'readFileSync', source: 'node', limit: 10 });
    expect(found.hits.every((h) => h.sourceName === 'Node.js v18.20.4 Documentation')).toBe(true);
    expect(found.closest).toEqual({ requested: 'node', name: 'Node.js v18.20.4 Documentation', version: '' });
    const exact = await data.search({ query: 'range', source: 'semver', limit: 10 });
    expect(exact.closest).toBeUndefined();
  });
});
