import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startGitHttpServer } from '../helpers/git-http.js';
import type { GitHttpServer } from '../helpers/git-http.js';
import type { TestRepo } from '../helpers/git-repo.js';
import { serveRegistry } from '../registry/registry-server.js';
import { repoWithTags as addTaggedRepo, runSync } from './sync-harness.js';
import type { SyncJson } from './sync-harness.js';
import type { Answer, RegistryServer } from '../registry/registry-server.js';

/**
 * `docdex sync` end to end through the real CLI for the other ecosystems: a uv project, a Go module and a Cargo
 * workspace, each resolved through a loopback registry (PyPI's JSON API, a GOPROXY, crates.io's API) whose
 * packages name repositories served by git http-backend on loopback. Each checks that the sources indexed are
 * exactly the lockfile's versions.
 */

let db: TestDatabase;
let registry: RegistryServer;
let git: GitHttpServer;
let gitRoot: string;
let projects: string;
const repos: TestRepo[] = [];

function repoWithTags(name: string, tags: string[]): Promise<void> {
  return addTaggedRepo(gitRoot, repos, name, tags, { lang: 'python', line: (tag) => `${name}_call_${tag.replace(/\W/g, '_')}()` });
}

function project(dir: string, files: Record<string, string>): string {
  const root = path.join(projects, dir);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  }
  return root;
}

function sync(args: string[]): ReturnType<typeof runSync> {
  return runSync(args, db.env);
}

/** The sources holding documents among `names`, as name@version. */
async function indexed(names: string[]): Promise<string[]> {
  const { rows } = await db.pool.query<{ v: string }>(`SELECT name || '@' || version AS v FROM sources WHERE document_count > 0 AND lower(name) = ANY($1) ORDER BY 1`, [
    names.map((n) => n.toLowerCase()),
  ]);
  return rows.map((r) => r.v);
}

function libraries(json: SyncJson): string[] {
  return json.libraries.map((l) => `${l.name}@${l.version}:${l.state}`).sort();
}

// --- PyPI: /pypi/<name>/<version>/json, shaped as test/fixtures/registry/pypi-requests-2.31.0.json ---

function pypiRelease(name: string, version: string, projectUrls: Record<string, string> | null): string {
  const info = {
    author: 'Example Maintainer',
    docs_url: null,
    home_page: null,
    name,
    package_url: `https://pypi.org/project/${name}/`,
    project_urls: projectUrls,
    requires_python: '>=3.9',
    summary: `${name}, a fixture package.`,
    version,
    yanked: false,
  };
  const file = { filename: `${name}-${version}-py3-none-any.whl`, packagetype: 'bdist_wheel', yanked: false, url: `https://files.example/${name}-${version}.whl` };
  return JSON.stringify({ info, last_serial: 1, urls: [file], vulnerabilities: [] });
}

function pypiRoutes(): Record<string, Answer> {
  const source = (repo: string) => ({ Homepage: `${git.origin}/${repo}.git`, 'Source Code': `${git.origin}/${repo}.git` });
  return {
    '/pypi/tinyparse/1.4.0/json': { body: pypiRelease('tinyparse', '1.4.0', source('tinyparse')) },
    '/pypi/tinyparse/1.5.0/json': { body: pypiRelease('tinyparse', '1.5.0', source('tinyparse')) },
    // PyPI names a project as it was published (`typing_extensions`); uv.lock writes the normalised name.
    '/pypi/quick-cache/0.9.2/json': { body: pypiRelease('quick_cache', '0.9.2', { Repository: `${git.origin}/quick-cache.git` }) },
    '/pypi/nodocs/0.1.0/json': { body: pypiRelease('nodocs', '0.1.0', null) },
  };
}

function uvPackage(name: string, version: string, dependencies: string[] = []): string {
  const deps = dependencies.length === 0 ? '' : `dependencies = [\n${dependencies.map((d) => `    { name = "${d}" },\n`).join('')}]\n`;
  return [
    '[[package]]',
    `name = "${name}"`,
    `version = "${version}"`,
    'source = { registry = "https://pypi.org/simple" }',
    deps.trimEnd(),
    `sdist = { url = "https://files.pythonhosted.org/packages/aa/bb/${name}-${version}.tar.gz", hash = "sha256:${'a'.repeat(64)}", size = 48213, upload-time = "2024-11-02T10:11:12.345Z" }`,
    'wheels = [',
    `    { url = "https://files.pythonhosted.org/packages/cc/dd/${name.replace(/-/g, '_')}-${version}-py3-none-any.whl", hash = "sha256:${'b'.repeat(64)}", size = 20140, upload-time = "2024-11-02T10:11:13.456Z" },`,
    ']',
    '',
  ]
    .filter((line) => line !== '')
    .join('\n');
}

function uvProject(tinyparse: string): string {
  const lock = [
    'version = 1',
    'revision = 2',
    'requires-python = ">=3.11"',
    '',
    '[[package]]',
    'name = "helperlib"',
    'version = "2.0.1"',
    'source = { registry = "https://pypi.org/simple" }',
    `sdist = { url = "https://files.pythonhosted.org/packages/ee/ff/helperlib-2.0.1.tar.gz", hash = "sha256:${'c'.repeat(64)}", size = 9021, upload-time = "2024-10-01T08:00:00.000Z" }`,
    '',
    '[[package]]',
    'name = "inventory"',
    'version = "0.1.0"',
    'source = { editable = "." }',
    'dependencies = [',
    '    { name = "nodocs" },',
    '    { name = "quick-cache" },',
    '    { name = "tinyparse" },',
    ']',
    '',
    '[package.metadata]',
    'requires-dist = [',
    '    { name = "nodocs", specifier = ">=0.1" },',
    '    { name = "quick-cache", specifier = "~=0.9" },',
    '    { name = "tinyparse", specifier = ">=1.4,<2" },',
    ']',
    '',
    uvPackage('nodocs', '0.1.0'),
    '',
    uvPackage('quick-cache', '0.9.2'),
    '',
    uvPackage('tinyparse', tinyparse, ['helperlib']),
    '',
  ].join('\n');
  const pyproject = [
    '[project]',
    'name = "inventory"',
    'version = "0.1.0"',
    'requires-python = ">=3.11"',
    'dependencies = [',
    '    "tinyparse>=1.4,<2",',
    '    "Quick_Cache~=0.9",',
    '    "nodocs>=0.1",',
    ']',
    '',
    '[build-system]',
    'requires = ["hatchling"]',
    'build-backend = "hatchling.build"',
    '',
  ].join('\n');
  return project('inventory', { 'pyproject.toml': pyproject, 'uv.lock': lock });
}

// --- GOPROXY: <module>/@v/<version>.info with an Origin, shaped as test/fixtures/registry/go-cobra-v1.8.1.info ---

function goInfo(version: string, repo: string): string {
  return JSON.stringify({
    Version: version,
    Time: '2024-06-01T18:41:49Z',
    Origin: { VCS: 'git', URL: `${git.origin}/${repo}.git`, Hash: 'e94f6d0dd9a5e5738dca6bce03c4b1207ffbc0ec', Ref: `refs/tags/${version}` },
  });
}

function goRoutes(): Record<string, Answer> {
  return {
    '/example.com/tools/gizmo/@v/v1.2.3.info': { body: goInfo('v1.2.3', 'gizmo') },
    '/example.com/tools/widget/@v/v0.4.0.info': { body: goInfo('v0.4.0', 'widget') },
  };
}

function goModule(): string {
  const gomod = ['module example.com/acme/app', '', 'go 1.22.0', '', 'require (', '\texample.com/tools/gizmo v1.2.3', '\texample.com/tools/widget v0.4.0 // indirect', ')', ''].join('\n');
  const gosum = ['example.com/tools/gizmo v1.2.3 h1:AAAA=', 'example.com/tools/gizmo v1.2.3/go.mod h1:BBBB=', 'example.com/tools/widget v0.4.0/go.mod h1:CCCC=', ''].join('\n');
  return project('go-app', { 'go.mod': gomod, 'go.sum': gosum });
}

// --- crates.io: /api/v1/crates/<name>, shaped as test/fixtures/registry/crates-serde.json ---

function crate(name: string, versions: string[], repo: string): string {
  const newest = versions.at(-1)!;
  return JSON.stringify({
    crate: {
      id: name,
      name,
      max_version: newest,
      newest_version: newest,
      max_stable_version: newest,
      description: `${name} (fixture)`,
      homepage: null,
      documentation: null,
      repository: `${git.origin}/${repo}.git`,
    },
    versions: versions.map((num, i) => ({ id: i + 1, crate: name, num, yanked: false, license: 'MIT', dl_path: `/api/v1/crates/${name}/${num}/download` })).reverse(),
  });
}

function cratesRoutes(): Record<string, Answer> {
  return {
    '/api/v1/crates/serdelite': { body: crate('serdelite', ['1.0.4', '1.0.5'], 'serdelite') },
    '/api/v1/crates/bytesize': { body: crate('bytesize', ['0.3.1'], 'bytesize') },
    '/api/v1/crates/clapish': { body: crate('clapish', ['2.1.0'], 'clapish') },
    '/api/v1/crates/unicodeish': { body: crate('unicodeish', ['0.1.0'], 'unicodeish') },
  };
}

const CRATES_IO = 'source = "registry+https://github.com/rust-lang/crates.io-index"';

function lockedCrate(name: string, version: string, dependencies: string[] = [], own = false): string {
  const lines = ['[[package]]', `name = "${name}"`, `version = "${version}"`];
  if (!own) lines.push(CRATES_IO, `checksum = "${'d'.repeat(64)}"`);
  if (dependencies.length > 0) lines.push('dependencies = [', ...dependencies.map((d) => ` "${d}",`), ']');
  return `${lines.join('\n')}\n`;
}

function cargoWorkspace(): string {
  const lock = [
    '# This file is automatically @generated by Cargo.\n# It is not intended for manual editing.\nversion = 4\n',
    lockedCrate('bytesize', '0.3.1'),
    lockedCrate('clapish', '2.1.0', ['unicodeish']),
    lockedCrate('serdelite', '1.0.5'),
    lockedCrate('unicodeish', '0.1.0'),
    lockedCrate('ws-cli', '0.1.0', ['clapish', 'ws-core'], true),
    lockedCrate('ws-core', '0.1.0', ['bytesize', 'serdelite'], true),
  ].join('\n');
  return project('cargo-ws', {
    'Cargo.toml': '[workspace]\nresolver = "2"\nmembers = ["crates/*"]\n\n[workspace.package]\nedition = "2021"\n\n[workspace.dependencies]\nserdelite = { version = "1.0", features = ["derive"] }\n',
    'crates/core/Cargo.toml': '[package]\nname = "ws-core"\nversion = "0.1.0"\nedition.workspace = true\n\n[dependencies]\nserdelite = { workspace = true }\nbytesize = "0.3"\n',
    'crates/cli/Cargo.toml': '[package]\nname = "ws-cli"\nversion = "0.1.0"\nedition.workspace = true\n\n[dependencies]\nws-core = { path = "../core" }\nclapish = "2.1"\n',
    'Cargo.lock': lock,
  });
}

beforeAll(async () => {
  gitRoot = mkdtempSync(path.join(os.tmpdir(), 'docdex-sync-eco-git-'));
  projects = mkdtempSync(path.join(os.tmpdir(), 'docdex-sync-eco-projects-'));
  await repoWithTags('tinyparse', ['v1.4.0', 'v1.5.0']);
  await repoWithTags('quick-cache', ['0.9.2']);
  await repoWithTags('gizmo', ['v1.2.3']);
  await repoWithTags('widget', ['v0.4.0']);
  await repoWithTags('serdelite', ['serdelite-v1.0.4', 'serdelite-v1.0.5']);
  await repoWithTags('bytesize', ['v0.3.1']);
  await repoWithTags('clapish', ['v2.1.0']);
  await repoWithTags('unicodeish', ['v0.1.0']);
  git = await startGitHttpServer(gitRoot);
  registry = await serveRegistry(() => ({ ...pypiRoutes(), ...goRoutes(), ...cratesRoutes() }));
  db = await createTestDatabase({ PYPI_URL: registry.base, GO_PROXY_URL: registry.base, CRATES_URL: registry.base });
}, 120_000);

afterAll(async () => {
  await git?.close();
  await registry?.close();
  for (const repo of repos) repo.cleanup();
  if (gitRoot) rmSync(gitRoot, { recursive: true, force: true });
  if (projects) rmSync(projects, { recursive: true, force: true });
  await db?.drop();
});

describe('docdex sync: Python, Go and Cargo projects', () => {
  it('uv.lock: the locked versions are indexed; a package with no repository, docs or README is unresolved', async () => {
    const root = uvProject('1.4.0');
    const { exitCode, json, stderr } = await sync([root]);
    expect(json.jobs.map((j) => j.library).sort()).toEqual(['quick_cache@0.9.2', 'tinyparse@1.4.0']);
    expect(json.jobs.every((j) => j.type === 'upload' && /^repository http:\/\/127\.0\.0\.1:\d+\/[\w-]+ at v?\d/.test(j.what))).toBe(true);
    const nodocs = json.libraries.find((l) => l.name === 'nodocs');
    expect(nodocs).toMatchObject({ version: '0.1.0', state: 'unresolved', reason: expect.stringMatching(/^Nothing to index for pypi:nodocs@0\.1\.0 .*names no repository/) });
    // helperlib is only tinyparse's dependency.
    expect(json.libraries.map((l) => l.name).sort()).toEqual(['nodocs', 'quick-cache', 'tinyparse']);
    expect(exitCode, stderr).toBe(1);
    expect(json.not_indexed).toEqual([expect.stringMatching(/^nodocs@0\.1\.0 \(Nothing to index/)]);
    expect(await indexed(['tinyparse', 'quick-cache', 'quick_cache', 'nodocs', 'helperlib'])).toEqual(['quick_cache@0.9.2', 'tinyparse@1.4.0']);
  });

  it('uv.lock bumped for one package: only that version is queued, the others are recognised as indexed', async () => {
    const root = uvProject('1.5.0');
    const { json } = await sync([root]);
    expect(json.jobs).toHaveLength(1);
    expect(json.jobs[0]!.library).toBe('tinyparse@1.5.0');
    expect(libraries(json)).toEqual(['nodocs@0.1.0:unresolved', 'quick-cache@0.9.2:indexed', 'tinyparse@1.5.0:queued']);
    expect(await indexed(['tinyparse', 'quick_cache'])).toEqual(['quick_cache@0.9.2', 'tinyparse@1.4.0', 'tinyparse@1.5.0']);
  });

  it('go.mod: the required version is indexed with its v; a second sync queues nothing; --all adds the indirect one', async () => {
    const root = goModule();
    const first = await sync([root]);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.json.jobs.map((j) => `${j.library} ${j.what.replace(git.origin, 'GIT')}`)).toEqual(['example.com/tools/gizmo@v1.2.3 repository GIT/gizmo at v1.2.3']);
    expect(first.json.libraries).toEqual([expect.objectContaining({ ecosystem: 'go', name: 'example.com/tools/gizmo', version: 'v1.2.3', direct: true })]);
    expect(await indexed(['example.com/tools/gizmo', 'example.com/tools/widget'])).toEqual(['example.com/tools/gizmo@v1.2.3']);

    const again = await sync([root]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.json.jobs).toEqual([]);
    expect(again.json.to_add).toEqual([]);
    expect(libraries(again.json)).toEqual(['example.com/tools/gizmo@v1.2.3:indexed']);

    const all = await sync([root, '--all']);
    expect(all.exitCode, all.stderr).toBe(0);
    expect(all.json.jobs.map((j) => j.library)).toEqual(['example.com/tools/widget@v0.4.0']);
    expect(await indexed(['example.com/tools/gizmo', 'example.com/tools/widget'])).toEqual(['example.com/tools/gizmo@v1.2.3', 'example.com/tools/widget@v0.4.0']);
  });

  it('a Cargo workspace: each member’s crates at the Cargo.lock versions, workspace = true included', async () => {
    const root = cargoWorkspace();
    const { exitCode, json, stderr } = await sync([root]);
    expect(exitCode, stderr).toBe(0);
    expect(libraries(json)).toEqual(['bytesize@0.3.1:queued', 'clapish@2.1.0:queued', 'serdelite@1.0.5:queued']);
    expect(json.jobs.map((j) => `${j.library} ${j.what.replace(git.origin, 'GIT')}`).sort()).toEqual([
      'bytesize@0.3.1 repository GIT/bytesize at v0.3.1',
      'clapish@2.1.0 repository GIT/clapish at v2.1.0',
      'serdelite@1.0.5 repository GIT/serdelite at serdelite-v1.0.5',
    ]);
    expect(await indexed(['bytesize', 'clapish', 'serdelite', 'unicodeish', 'ws-core', 'ws-cli'])).toEqual(['bytesize@0.3.1', 'clapish@2.1.0', 'serdelite@1.0.5']);
  });
});
