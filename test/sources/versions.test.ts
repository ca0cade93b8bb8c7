import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { setSourceAliases } from '../../src/core/sources/aliases.js';
import { listSources } from '../../src/core/sources/manage.js';
import { resolveLibrary, resolveSource, VersionNotIndexedError } from '../../src/core/sources/resolve.js';
import { ValidationError } from '../../src/core/errors.js';
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
 * Versions side by side (issue #33): one library, `quarkle`, indexed at 1.2.5, 1.10.0 and 2.0.0 (stored through
 * the real page store), each page saying which version it documents. Every surface resolves name, name@major
 * and name@range to the right one, and a version that is not indexed gets the plain answer, never another.
 */

let db: TestDatabase;
let client: Client;
let daemon: Awaited<ReturnType<typeof startTestDaemon>>;
const v: Record<string, FixtureSource> = {};

async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult & { text: string }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  return { ...result, text: resultText(result) };
}

beforeAll(async () => {
  db = await createTestDatabase();
  // Created oldest last, and 1.10.0 after 1.2.5: string order or creation order would pick the wrong one.
  for (const version of ['2.0.0', '1.10.0', '1.2.5']) {
    v[version] = await createSource(db.pool, 'quarkle', version);
    await addPage(db.pool, v[version]!, `https://quarkle.example/${version}/widgets`, [{ title: `Widget setup ${version}`, code: `quarkle.widget(version="${version}")` }]);
  }
  await db.pool.query(`UPDATE sources SET metadata = '{"origin": "npm:quarkle@2.0.0"}' WHERE id = $1`, [v['2.0.0']!.id]);
  const other = await createSource(db.pool, 'zeppo-js', '0.3.0');
  await addPage(db.pool, other, 'https://zeppo.example/start', [{ title: 'Zeppo widget', code: 'zeppo.widget()' }]);
  await setSourceAliases(db.pool, other.id, ['blimpworks', 'zeppo-js', 'BlimpWorks']);
  client = await connectMcpClient(db);
  daemon = await startTestDaemon(loadConfig(db.env), { routes: docsIndexRoutes });
});

afterAll(async () => {
  await client?.close();
  await daemon?.close();
  await db?.drop();
});

describe('core resolution', () => {
  it('name is the latest; @major the newest of it; ranges by semver; the fuzzy name still works', async () => {
    expect((await resolveLibrary(db.pool, 'quarkle')).version).toBe('2.0.0');
    expect((await resolveLibrary(db.pool, 'quarkle@1')).version).toBe('1.10.0');
    expect((await resolveLibrary(db.pool, 'quarkle@^1.2')).version).toBe('1.10.0');
    expect((await resolveLibrary(db.pool, 'quarkle@~1.2.1')).version).toBe('1.2.5');
    expect((await resolveLibrary(db.pool, 'quarkle@1.2.5')).id).toBe(v['1.2.5']!.id);
    expect((await resolveLibrary(db.pool, 'quarkel@1')).version).toBe('1.10.0');
    expect((await resolveLibrary(db.pool, 'quarkle', '1.2')).version).toBe('1.2.5');
    await expect(resolveLibrary(db.pool, 'quarkle@1', '2')).rejects.toBeInstanceOf(ValidationError);
    await expect(resolveLibrary(db.pool, 'quarkle@3')).rejects.toBeInstanceOf(VersionNotIndexedError);
    // Changing or deleting needs one version named: a bare name is not read as the latest there.
    await expect(resolveSource(db.pool, 'quarkle')).rejects.toThrow(/names 3 versions of quarkle: 2\.0\.0, 1\.10\.0, 1\.2\.5/);
    expect((await resolveSource(db.pool, 'quarkle@~1.2')).id).toBe(v['1.2.5']!.id);
  });

  it('finds a library by its aliases', async () => {
    expect((await resolveLibrary(db.pool, 'blimpworks')).name).toBe('zeppo-js');
    const { rows } = await db.pool.query<{ aliases: string[] }>("SELECT aliases FROM sources WHERE name = 'zeppo-js'");
    // Duplicates and the source's own name are dropped.
    expect(rows[0]!.aliases).toEqual(['blimpworks']);
    await expect(setSourceAliases(db.pool, v['1.2.5']!.id, ['ok', ' '])).rejects.toBeInstanceOf(ValidationError);
    await expect(setSourceAliases(db.pool, 'not-a-uuid', ['x'])).rejects.toBeInstanceOf(ValidationError);
  });
});

describe('CLI', () => {
  it('search --source lib@1 searches 1.10.0 and says so in --json', async () => {
    const result = await runCli(['search', 'widget setup', '--source', 'quarkle@1', '--json'], { env: db.env });
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const items = (JSON.parse(String(result.stdout)) as { items: Array<{ version: string; source_id: string; code: string }> }).items;
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((i) => i.version === '1.10.0' && i.source_id === v['1.10.0']!.id)).toBe(true);
  });

  it('lib@3: exit 1 with the plain answer and a hint', async () => {
    const result = await runCli(['search', 'widget', '--source', 'quarkle@3'], { env: db.env });
    expect(result.exitCode).toBe(1);
    const stderr = String(result.stderr);
    expect(stderr).toMatch(/^Error: quarkle@3 is not indexed; indexed versions: 2\.0\.0, 1\.10\.0, 1\.2\.5\.$/m);
    expect(stderr).toMatch(/^Hint: .*docdex add npm:quarkle@3/m);
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('sources list groups a library, its versions the latest first', async () => {
    const table = await runCli(['sources', 'list'], { env: db.env });
    expect(table.exitCode, String(table.stderr)).toBe(0);
    const lines = String(table.stdout).trimEnd().split('\n');
    expect(lines.slice(1).map((l) => l.split(/\s{2,}/).slice(0, 2))).toEqual([
      ['quarkle', '2.0.0'],
      ['', '1.10.0'],
      ['', '1.2.5'],
      ['zeppo-js', '0.3.0'],
    ]);
    const json = await runCli(['sources', 'list', '--json'], { env: db.env });
    const items = (JSON.parse(String(json.stdout)) as { items: Array<{ name: string; version: string }> }).items;
    expect(items.map((i) => `${i.name}@${i.version}`)).toEqual(['quarkle@2.0.0', 'quarkle@1.10.0', 'quarkle@1.2.5', 'zeppo-js@0.3.0']);
    expect((await listSources(db.pool, { limit: 1, offset: 1 })).items.map((i) => i.version)).toEqual(['1.10.0']);
  });
});

describe('REST', () => {
  it('/api/search?source=lib@^1.2 searches 1.10.0; results carry the version', async () => {
    const res = await fetch(`${daemon.base}/api/search?q=widget&source=${encodeURIComponent('quarkle@^1.2')}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { items: Array<{ version: string; source_name: string }> };
    expect(body.items.length).toBeGreaterThan(0);
    expect(body.items.every((i) => i.version === '1.10.0' && i.source_name === 'quarkle')).toBe(true);
  });

  it('lib@3 is a 404 with the error body', async () => {
    const res = await fetch(`${daemon.base}/api/search?q=widget&source=quarkle@3`);
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: string };
    expect(body).toMatchObject({ code: 'version_not_indexed', details: [{ name: 'quarkle', requested: '3', indexed: ['2.0.0', '1.10.0', '1.2.5'] }] });
    expect(body.error).toMatch(/^quarkle@3 is not indexed; indexed versions: 2\.0\.0, 1\.10\.0, 1\.2\.5\. .*docdex add npm:quarkle@3/);
    const bad = await fetch(`${daemon.base}/api/search?q=widget&source=quarkle@`);
    expect(bad.status).toBe(422);
  });
});

describe('MCP', () => {
  it('get_content library_id=lib@^1.2 gives 1.10.0 and names the version', async () => {
    const result = await call('get_content', { library_id: 'quarkle@^1.2', query: 'widget setup' });
    expect(result.isError).toBeFalsy();
    expect(result.text).toMatch(/^quarkle version 1\.10\.0 \(library_id /);
    expect(result.text).toContain('quarkle.widget(version="1.10.0")');
    expect(result.text).not.toContain('version="2.0.0"');
    expect(result.text).toContain('the newest indexed version matching "^1.2"');
    const latest = await call('get_content', { library_id: 'quarkle' });
    expect(latest.text).toMatch(/^quarkle version 2\.0\.0 /);
  });

  it('lib@3 is an error result with the indexed versions and how to index it', async () => {
    const result = await call('get_content', { library_id: 'quarkle@3', query: 'widget' });
    expect(result.isError).toBe(true);
    expect(result.text).toContain('quarkle@3 is not indexed; indexed versions: 2.0.0, 1.10.0, 1.2.5.');
    expect(result.text).toContain('add_library with spec "npm:quarkle@3"');
  });

  it('search_libraries lists a library once with its versions, and finds it by an alias', async () => {
    const all = await call('search_libraries', {});
    const s = all.structuredContent as { libraries: Array<{ name: string; version: string; versions: Array<{ version: string }> }>; pagination: { total: number } };
    expect(s.pagination.total).toBe(2);
    expect(s.libraries.map((l) => [l.name, l.version, l.versions.map((x) => x.version)])).toEqual([
      ['quarkle', '2.0.0', ['2.0.0', '1.10.0', '1.2.5']],
      ['zeppo-js', '0.3.0', ['0.3.0']],
    ]);
    expect(all.text).toContain('versions (latest first): 2.0.0 (library_id "quarkle@2.0.0"), 1.10.0');
    const alias = await call('search_libraries', { query: 'blimpworks' });
    expect((alias.structuredContent as { selected_id?: string; libraries: Array<{ name: string }> }).libraries[0]!.name).toBe('zeppo-js');
    expect((alias.structuredContent as { selected_id?: string }).selected_id).toBeDefined();
  });
});
