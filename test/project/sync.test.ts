import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { loadConfig } from '../../src/core/config.js';
import { createMcpServer } from '../../src/core/mcp/server.js';
import { listProjectLibraries } from '../../src/core/project/store.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startGitHttpServer } from '../helpers/git-http.js';
import type { GitHttpServer } from '../helpers/git-http.js';
import type { TestRepo } from '../helpers/git-repo.js';
import { serveRegistry } from '../registry/registry-server.js';
import { repoWithTags as addTaggedRepo, runSync } from './sync-harness.js';
import type { RegistryServer } from '../registry/registry-server.js';

/**
 * `docdex sync` end to end through the real CLI: npm projects whose packages a loopback registry names, with
 * their repositories served by git http-backend on loopback, a bumped lockfile, and bad input.
 */

let db: TestDatabase;
let registry: RegistryServer;
let git: GitHttpServer;
let gitRoot: string;
let projects: string;
const repos: TestRepo[] = [];

function repoWithTags(name: string, tags: string[]): Promise<void> {
  return addTaggedRepo(gitRoot, repos, name, tags, { lang: 'js', line: (tag) => `${name}Call_${tag.replace(/\W/g, '_')}()` });
}

function packument(name: string, versions: string[], repository: string | null): string {
  const entries = versions.map((v) => [v, { name, version: v, ...(repository ? { repository: { type: 'git', url: repository } } : {}) }]);
  return JSON.stringify({ name, 'dist-tags': { latest: versions.at(-1) }, versions: Object.fromEntries(entries) });
}

function npmProject(dir: string, deps: Record<string, string>, locked: Record<string, string>): string {
  const root = path.join(projects, dir);
  mkdirSync(root, { recursive: true });
  writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: dir, dependencies: deps }));
  const packages = Object.fromEntries(Object.entries(locked).map(([n, v]) => [`node_modules/${n}`, { version: v, resolved: `${registry.base}/${n}/-/${n}-${v}.tgz` }]));
  writeFileSync(path.join(root, 'package-lock.json'), JSON.stringify({ name: dir, lockfileVersion: 3, packages: { '': { name: dir, dependencies: deps }, ...packages } }));
  return root;
}

function sync(args: string[], env: NodeJS.ProcessEnv = db.env): ReturnType<typeof runSync> {
  return runSync(args, env);
}

async function indexed(): Promise<string[]> {
  const { rows } = await db.pool.query<{ v: string }>(`SELECT name || '@' || version AS v FROM sources WHERE document_count > 0 ORDER BY 1`);
  return rows.map((r) => r.v);
}

beforeAll(async () => {
  gitRoot = mkdtempSync(path.join(os.tmpdir(), 'docdex-sync-git-'));
  projects = mkdtempSync(path.join(os.tmpdir(), 'docdex-sync-projects-'));
  await repoWithTags('alpha', ['v1.0.0', 'v1.1.0']);
  await repoWithTags('beta', ['v2.0.0']);
  await repoWithTags('gamma', ['v3.0.0']);
  await repoWithTags('delta', ['v4.0.0']);
  git = await startGitHttpServer(gitRoot);
  registry = await serveRegistry(() => ({
    '/alpha': { body: packument('alpha', ['1.0.0', '1.1.0'], `git+${git.origin}/alpha.git`) },
    '/beta': { body: packument('beta', ['2.0.0'], `git+${git.origin}/beta.git`) },
    '/gamma': { body: packument('gamma', ['3.0.0'], `git+${git.origin}/gamma.git`) },
    '/delta': { body: packument('delta', ['4.0.0'], `git+${git.origin}/delta.git`) },
    '/ghost': { body: packument('ghost', ['0.1.0'], null) },
    '/secret': { status: 401, body: '{"error":"authentication required"}' },
  }));
  db = await createTestDatabase({ NPM_REGISTRY_URL: registry.base });
}, 120_000);

afterAll(async () => {
  await git?.close();
  await registry?.close();
  for (const repo of repos) repo.cleanup();
  rmSync(gitRoot, { recursive: true, force: true });
  rmSync(projects, { recursive: true, force: true });
  await db?.drop();
});

describe('docdex sync', () => {
  it('a malformed lockfile is one clear error, and nothing is recorded', async () => {
    const root = npmProject('broken', { alpha: '^1.0.0' }, {});
    writeFileSync(path.join(root, 'package-lock.json'), '{"lockfileVersion": 3, "packages": {"node_modules/alpha": 7}}');
    const result = await runCli(['sync', root], { env: db.env, timeout: 60_000 });
    expect(result.exitCode).toBe(2);
    expect(String(result.stderr)).toMatch(/^Error: package-lock\.json is not a valid lockfile: "packages" entry "node_modules\/alpha" is not an object\.\nHint: /m);
    expect((await db.pool.query('SELECT 1 FROM projects')).rowCount).toBe(0);
  });

  it('package-lock.json: the locked versions are indexed; unresolvable and private packages are listed unresolved', async () => {
    const root = npmProject('shop', { alpha: '^1.0.0', beta: '^2.0.0', ghost: '^0.1.0', secret: '^1.0.0', local: 'file:../local' }, { alpha: '1.0.0', beta: '2.0.0', ghost: '0.1.0', secret: '1.0.0' });
    const plain = await runCli(['sync', root, '--dry-run', '--exclude', 'secret'], { env: db.env, timeout: 60_000 });
    expect(plain.exitCode, String(plain.stderr)).toBe(0);
    expect(String(plain.stdout)).toContain(
      '  alpha@1.0.0: missing\n  beta@2.0.0: missing\n  ghost@0.1.0: missing\n  local: skipped, a local path (file:../local), not a registry package\nWould add: npm:alpha@1.0.0 npm:beta@2.0.0 npm:ghost@0.1.0',
    );
    const dry = await sync([root, '--dry-run']);
    expect(dry.exitCode).toBe(0);
    expect(dry.json.to_add).toEqual(['npm:alpha@1.0.0', 'npm:beta@2.0.0', 'npm:ghost@0.1.0', 'npm:secret@1.0.0']);
    expect((await db.pool.query('SELECT 1 FROM projects')).rowCount).toBe(0);

    const { exitCode, json } = await sync([root]);
    expect(json.jobs.map((j) => j.library).sort()).toEqual(['alpha@1.0.0', 'beta@2.0.0']);
    const byName = Object.fromEntries(json.libraries.map((l) => [l.name, l]));
    expect(byName.ghost).toMatchObject({ state: 'unresolved', reason: expect.stringMatching(/Nothing to index .*names no repository/) });
    expect(byName.secret).toMatchObject({ state: 'unresolved', reason: expect.stringMatching(/HTTP 401/) });
    expect(json.skipped).toEqual([expect.objectContaining({ name: 'local', reason: expect.stringMatching(/local path/) })]);
    expect(exitCode).toBe(1);
    expect(json.not_indexed).toEqual([expect.stringMatching(/^ghost@0\.1\.0 \(Nothing to index/), expect.stringMatching(/^secret@1\.0\.0 \(.*HTTP 401/)]);
    expect(await indexed()).toEqual(['alpha@1.0.0', 'beta@2.0.0']);
  });

  it('a bumped lockfile queues only the new version; the old one is kept unused until prune', async () => {
    const root = npmProject('shop', { alpha: '^1.0.0', beta: '^2.0.0' }, { alpha: '1.1.0', beta: '2.0.0' });
    const { exitCode, json } = await sync([root]);
    expect(exitCode).toBe(0);
    expect(json.jobs.map((j) => j.library)).toEqual(['alpha@1.1.0']);
    expect(json.libraries.find((l) => l.name === 'beta')?.state).toBe('indexed');
    expect(await indexed()).toEqual(['alpha@1.0.0', 'alpha@1.1.0', 'beta@2.0.0']);
    const rows = await listProjectLibraries(db.pool, json.project_id!, { includeUnused: true });
    expect(
      rows
        .filter((r) => !r.in_use)
        .map((r) => `${r.name}@${r.version}`)
        .sort(),
    ).toEqual(['alpha@1.0.0', 'ghost@0.1.0', 'secret@1.0.0']);

    const pruned = await runCli(['prune', root, '--json'], { env: db.env });
    expect(JSON.parse(String(pruned.stdout))).toMatchObject({ pruned: 3 });
    expect(await listProjectLibraries(db.pool, json.project_id!, { includeUnused: true })).toHaveLength(2);
  });

  it('pnpm-lock.yaml: exact versions from the lockfile, the indexed one not fetched again', async () => {
    const root = path.join(projects, 'pnpm-app');
    mkdirSync(root);
    writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'pnpm-app', dependencies: { beta: '^2.0.0', gamma: '^3.0.0' } }));
    writeFileSync(
      path.join(root, 'pnpm-lock.yaml'),
      [
        "lockfileVersion: '9.0'",
        'importers:',
        '  .:',
        '    dependencies:',
        '      beta: {specifier: ^2.0.0, version: 2.0.0}',
        '      gamma: {specifier: ^3.0.0, version: 3.0.0}',
        'packages:',
        '  beta@2.0.0: {resolution: {integrity: sha512-AAAA}}',
        '  gamma@3.0.0: {resolution: {integrity: sha512-BBBB}}',
        '',
      ].join('\n'),
    );
    const { exitCode, json } = await sync([root]);
    expect(exitCode).toBe(0);
    expect(json.jobs.map((j) => j.library)).toEqual(['gamma@3.0.0']);
    expect(await indexed()).toEqual(['alpha@1.0.0', 'alpha@1.1.0', 'beta@2.0.0', 'gamma@3.0.0']);
  });

  it('MCP sync_project: the stdio working directory by default; without one (HTTP) only a recorded project', async () => {
    const connect = async (localProjectDir?: string) => {
      const server = createMcpServer({ pool: db.pool, info: db.info, config: db.config, ...(localProjectDir ? { localProjectDir } : {}) });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await server.connect(serverSide);
      const client = new Client({ name: 'docdex-test', version: '1.0.0' });
      await client.connect(clientSide);
      return client;
    };
    const stdio = await connect(path.join(projects, 'pnpm-app'));
    const local = (await stdio.callTool({ name: 'sync_project', arguments: {} })) as CallToolResult;
    expect(local.isError).toBeFalsy();
    expect(local.structuredContent).toMatchObject({
      project: 'pnpm-app',
      job_ids: [],
      libraries: [
        { library: 'beta@2.0.0', state: 'indexed' },
        { library: 'gamma@3.0.0', state: 'indexed' },
      ],
    });

    const remote = await connect();
    const unnamed = (await remote.callTool({ name: 'sync_project', arguments: {} })) as CallToolResult;
    expect(unnamed.isError).toBe(true);
    expect(JSON.stringify(unnamed.content)).toMatch(/only a project recorded/);
    const unknownDir = (await remote.callTool({ name: 'sync_project', arguments: { project: os.tmpdir() } })) as CallToolResult;
    expect(unknownDir.isError).toBe(true);
    expect(JSON.stringify(unknownDir.content)).toMatch(/No project .* is recorded/);
    const recorded = (await remote.callTool({ name: 'sync_project', arguments: { project: 'shop' } })) as CallToolResult;
    expect(recorded.structuredContent).toMatchObject({ project: 'shop', job_ids: [] });
  });

  it('a library whose indexing job failed reads failed with the reason, and the next sync queues it again', async () => {
    const root = npmProject('flaky', { delta: '^4.0.0' }, { delta: '4.0.0' });
    expect((await sync([root])).json.jobs.map((j) => j.library)).toEqual(['delta@4.0.0']);
    expect(await indexed()).toContain('delta@4.0.0');
    // As a job that failed leaves it: the source without documents, its newest job failed.
    const { rows } = await db.pool.query<{ id: string }>(`SELECT id FROM sources WHERE name = 'delta' AND version = '4.0.0'`);
    await db.pool.query('DELETE FROM documents WHERE source_id = $1', [rows[0]!.id]);
    await db.pool.query('UPDATE sources SET document_count = 0, snippet_count = 0 WHERE id = $1', [rows[0]!.id]);
    await db.pool.query(`UPDATE upload_jobs SET status = 'failed', error = 'the checkout was interrupted' WHERE source_id = $1`, [rows[0]!.id]);

    const plan = await sync([root, '--dry-run']);
    expect(plan.json.libraries.find((l) => l.name === 'delta')).toMatchObject({ state: 'failed', reason: 'the checkout was interrupted' });
    expect(plan.json.to_add).toEqual(['npm:delta@4.0.0']);
    const again = await sync([root]);
    expect(again.exitCode, JSON.stringify(again.json) + again.stderr).toBe(0);
    expect(again.json.libraries.find((l) => l.name === 'delta')).toMatchObject({ state: 'queued', reason: null });
    expect(again.json.jobs.map((j) => j.library)).toEqual(['delta@4.0.0']);
    expect(await indexed()).toContain('delta@4.0.0');
    const listed = await listProjectLibraries(db.pool, again.json.project_id!);
    expect(listed.map((l) => [l.name, l.failure])).toEqual([['delta', null]]);
  });

  it('REST POST /api/projects/sync syncs a recorded project and refuses a directory it never recorded', async () => {
    const daemon = await startTestDaemon(loadConfig(db.env), { routes: docsIndexRoutes });
    try {
      const post = (body: unknown) => fetch(`${daemon.base}/api/projects/sync`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const unknown = await post({ project: projects });
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toMatchObject({ code: 'project_not_found' });
      const plan = await post({ project: 'pnpm-app', dry_run: true });
      expect(plan.status, await plan.clone().text()).toBe(202);
      expect(await plan.json()).toMatchObject({
        dry_run: true,
        to_add: [],
        libraries: [
          { name: 'beta', version: '2.0.0', state: 'indexed' },
          { name: 'gamma', version: '3.0.0', state: 'indexed' },
        ],
      });
      expect((await post({ project: 'shop', bogus: 1 })).status).toBe(422);
    } finally {
      await daemon.close();
    }
  });
});

const npmUnreachable = await fetch('https://registry.npmjs.org/semver', { signal: AbortSignal.timeout(15_000) }).then(
  async (response) => {
    await response.body?.cancel();
    return response.ok ? null : `it answered HTTP ${response.status}`;
  },
  (error: unknown) => (error as Error).message,
);
if (npmUnreachable) console.warn(`Skipping docdex sync through the real registry: registry.npmjs.org is unreachable (${npmUnreachable})`);

describe.skipIf(npmUnreachable !== null)('docdex sync through the real npm registry', () => {
  it('indexes semver at the version package-lock.json pins', async () => {
    const root = path.join(projects, 'real-npm');
    mkdirSync(root);
    writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'real-npm', dependencies: { semver: '^7.5.0' } }));
    const lock = {
      name: 'real-npm',
      lockfileVersion: 3,
      packages: { '': { dependencies: { semver: '^7.5.0' } }, 'node_modules/semver': { version: '7.6.3', resolved: 'https://registry.npmjs.org/semver/-/semver-7.6.3.tgz' } },
    };
    writeFileSync(path.join(root, 'package-lock.json'), JSON.stringify(lock));
    const { exitCode, json } = await sync([root], { ...db.env, NPM_REGISTRY_URL: 'https://registry.npmjs.org' });
    expect(json.jobs.map((j) => j.library)).toEqual(['semver@7.6.3']);
    expect(exitCode).toBe(0);
    expect(await indexed()).toContain('semver@7.6.3');
  }, 300_000);
});
