import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { runCli } from '../helpers/cli.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startGitHttpServer } from '../helpers/git-http.js';
import type { GitHttpServer } from '../helpers/git-http.js';
import { createTestRepo } from '../helpers/git-repo.js';
import type { TestRepo } from '../helpers/git-repo.js';
import { connectMcpClient } from '../helpers/mcp.js';
import { npmRegistryReachable } from '../helpers/npm.js';

/**
 * `docdex add`, the front door: a git repository through file:// and through git http-backend on loopback,
 * versions side by side, bad specs, and the same over REST and MCP.
 */

let db: TestDatabase;
let repo: TestRepo;
let http: GitHttpServer;
let httpRoot: string;
let v1: string;
let v2: string;

interface SearchJson {
  items: Array<{ title: string; code: string; source_url: string; version: string }>;
}

async function search(query: string, source: string): Promise<SearchJson['items']> {
  const result = await runCli(['search', query, '--source', source, '--json'], { env: db.env });
  expect(result.exitCode, String(result.stderr)).toBe(0);
  return (JSON.parse(String(result.stdout)) as SearchJson).items;
}

async function sourceCount(): Promise<number> {
  return Number((await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM sources')).rows[0]!.n);
}

beforeAll(async () => {
  db = await createTestDatabase();
  repo = await createTestRepo('widgetry');
  repo.write({
    'README.md': '# Widgetry\n\n```bash\nnpm install widgetry\n```\n',
    'docs/start.md': '# Start\n\nMake a widget ([more](./more/shapes.md)):\n\n```js\nwidgetry.makeGadgetOne({ size: 1 })\n```\n',
    'examples/spin.js': "import { spinGizmo } from 'widgetry';\n\nspinGizmo(3);\n",
  });
  v1 = await repo.commit('one', { tag: 'v1.0.0' });
  repo.write({ 'docs/start.md': '# Start\n\nMake a widget:\n\n```js\nwidgetry.makeGadgetTwo({ size: 2 })\n```\n' });
  v2 = await repo.commit('two', { tag: 'v2.0.0' });
  // git http-backend serves the bare repository from a folder of its own.
  httpRoot = mkdtempSync(path.join(os.tmpdir(), 'docdex-add-http-'));
  symlinkSync(repo.bare, path.join(httpRoot, 'widgetry.git'));
  http = await startGitHttpServer(httpRoot);
}, 60_000);

afterAll(async () => {
  await http?.close();
  rmSync(httpRoot, { recursive: true, force: true });
  repo?.cleanup();
  await db?.drop();
});

describe('docdex add', () => {
  it('indexes a repository at a tag from file://, docs and examples, with the commit in each URL', async () => {
    const added = await runCli(['add', `${repo.url}@v1.0.0`, '--path', 'docs', '--wait'], { env: db.env, timeout: 180_000 });
    expect(added.exitCode, String(added.stderr)).toBe(0);
    expect(String(added.stdout)).toMatch(/widgetry@1\.0\.0: repository .* at v1\.0\.0 queued/);
    expect(String(added.stdout)).toMatch(/Indexed: 3 of 3 files/);
    const docs = await search('makeGadgetOne', 'widgetry@1.0.0');
    expect(docs[0]?.code).toContain('makeGadgetOne');
    expect(docs[0]?.source_url).toContain(v1);
    const example = await search('spinGizmo', 'widgetry@1.0.0');
    expect(example[0]?.code).toContain('spinGizmo(3)');
    expect(example[0]?.source_url).toContain(v1);
    expect(example[0]?.title).toContain('examples/spin.js');
    // A relative link between docs points at the linked file at the same commit.
    const page = await db.pool.query<{ markdown: string }>("SELECT markdown FROM documents WHERE url LIKE '%docs/start.md'");
    expect(page.rows[0]?.markdown).toContain(`(${repo.url}@${v1}/docs/more/shapes.md)`);
  }, 240_000);

  it('adds a second version beside the first, and a name@range picks the right one; a version not indexed is said plainly', async () => {
    const added = await runCli(['add', `${http.origin}/widgetry.git@v2.0.0`, '--wait'], { env: db.env, timeout: 180_000 });
    expect(added.exitCode, String(added.stderr)).toBe(0);
    const two = await search('makeGadgetTwo', 'widgetry@2');
    expect(two[0]?.source_url).toContain(v2);
    expect((await search('makeGadget', 'widgetry@^1.0')).every((r) => r.code.includes('makeGadgetOne'))).toBe(true);
    expect((await search('makeGadget', 'widgetry')).every((r) => r.code.includes('makeGadgetTwo'))).toBe(true);
    const missing = await runCli(['search', 'makeGadget', '--source', 'widgetry@3'], { env: db.env });
    expect(missing.exitCode).toBe(1);
    expect(String(missing.stderr)).toMatch(/widgetry@3 is not indexed; indexed versions: 2\.0\.0, 1\.0\.0/);
  }, 240_000);

  it('refuses bad specs before anything is written, and reports each spec of several on its own', async () => {
    const before = await sourceCount();
    const bad = await runCli(['add', 'react@18'], { env: db.env });
    expect(bad.exitCode).toBe(2);
    expect(String(bad.stderr)).toMatch(/^Error: Cannot add "react@18": .*\nHint: .*npm:react@18\.3\.1/m);
    const unknownRef = await runCli(['add', `${repo.url}@v9.9.9`], { env: db.env });
    expect(unknownRef.exitCode).not.toBe(0);
    expect(String(unknownRef.stderr)).toMatch(/v9\.9\.9/);
    expect(String(unknownRef.stderr)).not.toMatch(/\n\s+at /);
    const mixed = await runCli(['add', `${repo.url}@v8.8.8`, `${repo.url}@main`, '--json'], { env: db.env, timeout: 120_000 });
    expect(mixed.exitCode).toBe(1);
    const outcome = JSON.parse(String(mixed.stdout)) as { libraries: Array<{ status: string; version?: string }> };
    expect(outcome.libraries.map((l) => l.status)).toEqual(['failed', 'queued']);
    expect(outcome.libraries[1]?.version).toBe('main');
    expect(await sourceCount()).toBe(before + 1);
  }, 240_000);

  it('over REST: repositories on the server are refused, an https remote is queued, and a bad body is 422', async () => {
    const daemon = await startTestDaemon(loadConfig(db.env), { routes: docsIndexRoutes });
    try {
      const post = (body: unknown) => fetch(`${daemon.base}/api/libraries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const local = await post({ specs: [`${repo.url}@v1.0.0`] });
      expect(local.status).toBe(403);
      expect(((await local.json()) as { error: string }).error).toMatch(/only be indexed from the CLI/);
      const invalid = await post({ specs: ['nonsense'] });
      expect(invalid.status).toBe(422);
      expect(await invalid.json()).toMatchObject({ code: 'invalid_library_spec' });
      const extra = await post({ specs: ['npm:a'], bogus: true });
      expect(extra.status).toBe(422);
      const queued = await post({ specs: [`${http.origin}/widgetry.git@v1.0.0`], name: 'widgetry-rest' });
      expect(queued.status, await queued.clone().text()).toBe(202);
      const body = (await queued.json()) as { items: Array<{ status: string; name: string; version: string; jobs: Array<{ type: string; id: string; origin?: unknown }> }> };
      expect(body.items[0]).toMatchObject({ status: 'queued', name: 'widgetry-rest', version: '1.0.0' });
      expect(body.items[0]!.jobs[0]).toMatchObject({ type: 'upload', origin: { kind: 'repository', url: `${http.origin}/widgetry.git` } });
      // A git source reached over http(s) is checked out again by a REST recrawl: an upload job, as add's.
      const sourceId = (await db.pool.query<{ id: string }>("SELECT id FROM sources WHERE name = 'widgetry-rest'")).rows[0]!.id;
      const recrawl = await fetch(`${daemon.base}/api/sources/${sourceId}/recrawl`, { method: 'POST' });
      expect(recrawl.status, await recrawl.clone().text()).toBe(202);
      expect(await recrawl.json()).toMatchObject({ source_type: 'git', source_id: sourceId });
    } finally {
      await daemon.close();
    }
  }, 120_000);

  it('over MCP: add_library queues a repository and its job is followed with get_crawl_status; a bad spec is an isError result', async () => {
    const client = await connectMcpClient(db);
    try {
      const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
      const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
      const bad = await call('add_library', { specs: ['pip:requests'] });
      expect(bad.isError).toBe(true);
      expect(text(bad)).toMatch(/scheme "pip"/);
      const local = await call('add_library', { specs: [repo.url] });
      expect(local.isError).toBe(true);
      expect(text(local)).toMatch(/only be indexed from the CLI/);
      const ok = await call('add_library', { specs: [`${http.origin}/widgetry.git@v2.0.0`], name: 'widgetry-mcp' });
      expect(ok.isError, text(ok)).toBeFalsy();
      const jobId = (ok.structuredContent as { libraries: Array<{ job_ids: string[]; library_id: string }> }).libraries[0]!.job_ids[0]!;
      expect(text(ok)).toMatch(/library_id="widgetry-mcp@2\.0\.0"/);
      const status = await call('get_crawl_status', { job_id: jobId });
      expect(status.isError, text(status)).toBeFalsy();
      expect(text(status)).toMatch(/^Indexing job .* \(widgetry-mcp 2\.0\.0\)/);
    } finally {
      await client.close();
    }
  }, 120_000);
});

const npmUnreachable = await npmRegistryReachable();
if (npmUnreachable) console.warn(`Skipping docdex add npm:…: registry.npmjs.org is unreachable (${npmUnreachable})`);

describe.skipIf(npmUnreachable !== null)('docdex add npm: through the real registry', () => {
  it('resolves is-number@7.0.0, labels the version, and indexes its repository or, when its git host is unreachable, its published README', async () => {
    const added = await runCli(['add', 'npm:is-number@7.0.0', '--wait', '--json'], { env: db.env, timeout: 180_000 });
    expect(added.exitCode, String(added.stderr)).toBe(0);
    const result = JSON.parse(String(added.stdout)) as { libraries: Array<{ name: string; version: string; jobs: Array<{ what: string }>; notes: string[] }>; finished: Array<{ status: string }> };
    expect(result.libraries[0]).toMatchObject({ name: 'is-number', version: '7.0.0' });
    expect(result.finished.every((f) => f.status === 'completed')).toBe(true);
    const what = result.libraries[0]!.jobs.map((j) => j.what).join('; ');
    // This machine reaches the registry but not GitHub: then the README in the tarball stands in, and a note says why.
    if (!what.includes('repository')) {
      expect(what).toMatch(/README in npm package is-number@7\.0\.0/);
      expect(result.libraries[0]!.notes.join(' ')).toMatch(/github\.com\/jonschlinkert\/is-number/);
    }
    const hits = await search('isNumber', 'is-number@7');
    expect(hits.length).toBeGreaterThan(0);
    expect(hits[0]!.version).toBe('7.0.0');
    const origin = await db.pool.query<{ origin: string }>("SELECT metadata->>'origin' AS origin FROM sources WHERE name = 'is-number'");
    expect(origin.rows[0]?.origin).toBe('npm:is-number@7.0.0');
  }, 240_000);
});
