import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { updateSource } from '../../src/core/sources/manage.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { runCli } from '../helpers/cli.js';
import { closedPort } from '../helpers/closed-port.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startGitHttpServer } from '../helpers/git-http.js';
import type { GitHttpServer } from '../helpers/git-http.js';
import { createTestRepo } from '../helpers/git-repo.js';
import type { TestRepo } from '../helpers/git-repo.js';
import { listen } from '../helpers/listener.js';
import type { Listener } from '../helpers/listener.js';
import { docPage, serveSite } from '../helpers/site.js';
import type { TestSite } from '../helpers/site.js';
import { npmPackument } from '../registry/npm-shape.js';
import { serveRegistry } from '../registry/registry-server.js';
import type { RegistryServer } from '../registry/registry-server.js';
import { tarball } from '../registry/tarball-builder.js';

/**
 * Who named a URL decides what it may reach (SECURITY.md, "What the crawler may reach"), through the real CLI and
 * the real daemon, with a loopback npm registry answering npm's own document shape (registry/npm-shape.ts). The
 * registry is trusted at its origin only; nothing else is allow-listed unless a test says so. A "secret" listener
 * on 127.0.0.2 stands for a local service: it counts every TCP connection, so "refused" means no packet arrived.
 *
 * The rules checked, each quoted where it is tested:
 * - R1 "Only a URL, repository or path the local user typed (a `docdex` argument, a dashboard field) gets the
 *   CLI's loopback permission, and only on its own site"; "what a package registry names (a homepage,
 *   documentation or repository URL, a tarball off the registry's origin), even from `docdex add npm:…`", and
 *   "where a page or a redirect leads" are held to the remote rules.
 * - R2 "what a project's lockfiles and `.docdex.yml` name, even from `docdex sync`".
 * - R3 "The provenance is stored with the source: a recrawl or re-checkout gets the loopback permission only when
 *   the local user asks for it and typed the source's URLs or repository; an imported pack's sources never have it."
 * - R4 ("Package registries") "trusted at its origin (scheme, host and port) only", and "a request off the
 *   registries' origins that fails gives one generic reason".
 * - R5 ("Who may call what") "Uploads never … use a `source_url` on a crawled library's site: the origin and base
 *   path it was crawled from"; "A package's README, which docdex reads from its registry's tarball itself, is no
 *   claim and is exempt."
 */

let db: TestDatabase;
let registry: RegistryServer;
let secret: Listener;
let offPort: Listener;
let admitted: Listener;
let site: TestSite;
let git: GitHttpServer;
let gitRoot: string;
let projects: string;
let closed: number;
const repos: TestRepo[] = [];

const SECRET_MARK = 'INTERNAL_ONLY_TOKEN_7f00';

async function readmeTarball(name: string): Promise<Buffer> {
  return tarball([
    { name: 'package/package.json', content: JSON.stringify({ name }) },
    { name: 'package/README.md', content: `# ${name}\n\nUse it like this:\n\n\`\`\`js\nimport { ${name}Run } from '${name}';\n${name}Run();\n\`\`\`\n` },
  ]);
}

beforeAll(async () => {
  secret = await listen('127.0.0.2', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end(docPage('Internal handbook', [{ heading: 'Keys', prose: 'internal only', code: `${SECRET_MARK} = 1` }]));
  });
  offPort = await listen('127.0.0.1', (_req, res) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.alloc(64)));
  admitted = await listen('127.0.0.3', (_req, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error'));
  closed = await closedPort();
  site = await serveSite({ '/': docPage('Site docs', [{ heading: 'Start', prose: 'Start here.', code: 'print("site")' }]) });
  gitRoot = mkdtempSync(path.join(os.tmpdir(), 'docdex-provenance-git-'));
  projects = mkdtempSync(path.join(os.tmpdir(), 'docdex-provenance-projects-'));
  const repo = await createTestRepo('gitpkg');
  repos.push(repo);
  repo.write({ 'README.md': '# gitpkg\n\n```js\ngitpkgCall()\n```\n' });
  await repo.commit('one', { tag: 'v1.0.0' });
  symlinkSync(repo.bare, path.join(gitRoot, 'gitpkg.git'));
  git = await startGitHttpServer(gitRoot);
  const readmes = Object.fromEntries(
    await Promise.all(['homepkg', 'lockpkg', 'readmepkg', 'readmepkg2'].map(async (name) => [name, { body: await readmeTarball(name), type: 'application/octet-stream' }] as const)),
  );
  registry = await serveRegistry((base) => {
    // What the package's author wrote: a docs site and a repository on a local service.
    const hostile = (name: string) => ({
      '1.0.0': { homepage: `${secret.url}/docs/`, repository: { type: 'git', url: `git+${secret.url}/${name}.git` }, tarball: `${base}/${name}/-/${name}-1.0.0.tgz` },
    });
    const plain = (name: string, tarballUrl = `${base}/${name}/-/${name}-1.0.0.tgz`) => ({ '1.0.0': { tarball: tarballUrl } });
    return {
      '/': { body: docPage('Registry front page', [{ heading: 'Welcome', prose: 'A registry.', code: 'npm install x' }]), type: 'text/html' },
      '/homepkg': { body: npmPackument('homepkg', hostile('homepkg')) },
      '/lockpkg': { body: npmPackument('lockpkg', hostile('lockpkg')) },
      '/readmepkg': { body: npmPackument('readmepkg', plain('readmepkg')) },
      '/readmepkg2': { body: npmPackument('readmepkg2', plain('readmepkg2')) },
      '/gitpkg': { body: npmPackument('gitpkg', { '1.0.0': { repository: `git+${git.origin}/gitpkg.git`, tarball: `${base}/gitpkg/-/gitpkg-1.0.0.tgz` } }) },
      '/portpkg': { body: npmPackument('portpkg', plain('portpkg', `${offPort.url}/portpkg-1.0.0.tgz`)) },
      '/openpkg': { body: npmPackument('openpkg', plain('openpkg', `${admitted.url}/openpkg-1.0.0.tgz`)) },
      '/closedpkg': { body: npmPackument('closedpkg', plain('closedpkg', `http://127.0.0.3:${closed}/closedpkg-1.0.0.tgz`)) },
      ...Object.fromEntries(Object.entries(readmes).map(([name, answer]) => [`/${name}/-/${name}-1.0.0.tgz`, answer])),
    };
  });
  // Nothing allow-listed: the registry is reached because the operator named it, and only at its origin.
  db = await createTestDatabase({ NPM_REGISTRY_URL: registry.base, CRAWL_ALLOW_HOSTS: '' });
}, 120_000);

afterAll(async () => {
  await Promise.all([secret?.close(), offPort?.close(), admitted?.close(), site?.close(), git?.close(), registry?.close()]);
  for (const repo of repos) repo.cleanup();
  if (gitRoot) rmSync(gitRoot, { recursive: true, force: true });
  if (projects) rmSync(projects, { recursive: true, force: true });
  await db?.drop();
});

interface AddJson {
  libraries: Array<{ status: string; name: string; jobs: Array<{ type: string; what: string }>; notes: string[] }>;
  finished?: Array<{ status: string }>;
}

async function cli(args: string[], env: NodeJS.ProcessEnv = db.env): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const result = await runCli(args, { env, timeout: 180_000 });
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

async function indexedText(name: string): Promise<string> {
  const { rows } = await db.pool.query<{ t: string }>(`SELECT coalesce(string_agg(d.markdown, ' '), '') AS t FROM documents d JOIN sources s ON s.id = d.source_id WHERE s.name = $1`, [name]);
  return rows[0]!.t;
}

describe('R1: what a registry names is held to the remote rules, even from the CLI', () => {
  it('docdex add npm: neither crawls the homepage nor fetches the repository its document names on loopback; the README stands in', async () => {
    const before = secret.connections;
    const added = await cli(['add', 'npm:homepkg', '--wait', '--json']);
    expect(added.exitCode, added.stderr).toBe(0);
    const result = JSON.parse(added.stdout) as AddJson;
    const library = result.libraries[0]!;
    expect(library.jobs.map((j) => j.what)).toEqual(['the README in npm package homepkg@1.0.0']);
    expect(library.notes.join('\n')).toMatch(/its repository http:\/\/127\.0\.0\.2:\d+\/homepkg cannot be read \(.*refused: 127\.0\.0\.2 is a loopback address/);
    expect(library.notes.join('\n')).toMatch(/its docs site http:\/\/127\.0\.0\.2:\d+\/docs\/ cannot be crawled \(.*refused: 127\.0\.0\.2 is a loopback address/);
    expect(result.finished?.map((f) => f.status)).toEqual(['completed']);
    expect(secret.connections - before).toBe(0);
    expect(await indexedText('homepkg')).not.toContain(SECRET_MARK);
  }, 240_000);

  it("a redirect from the user's typed URL to another local service is the server's word: refused there", async () => {
    const bouncer = await listen('127.0.0.1', (_req, res) => res.writeHead(302, { location: `${secret.url}/docs/` }).end());
    try {
      const before = secret.connections;
      await cli(['crawl', 'start', `${bouncer.url}/`, '--name', 'bounced', '--depth', '0', '--wait']);
      expect(bouncer.connections).toBeGreaterThan(0);
      expect(await indexedText('bounced')).not.toContain(SECRET_MARK);
      // A pack URL the user typed, redirected the same way.
      const imported = await cli(['import', `${bouncer.url}/library.docdex`]);
      expect(imported.exitCode).not.toBe(0);
      expect(imported.stderr).toMatch(/refused: 127\.0\.0\.2 is a loopback address/);
      expect(secret.connections - before).toBe(0);
    } finally {
      await bouncer.close();
    }
  }, 240_000);

  it('the same docs URL typed by the user still reaches loopback: the permission follows the URL, not the command', async () => {
    const before = secret.connections;
    const added = await cli(['add', `${secret.url}/docs/`, '--name', 'typed-docs', '--depth', '0', '--wait', '--json']);
    expect(added.exitCode, added.stderr).toBe(0);
    expect(secret.connections).toBeGreaterThan(before);
    expect(await indexedText('typed-docs')).toContain(SECRET_MARK);
  }, 240_000);
});

describe('R2: what a project names is held to the remote rules, even from docdex sync', () => {
  it('a lockfile and a .docdex.yml naming local services reach none of them', async () => {
    const root = path.join(projects, 'cloned');
    mkdirSync(root, { recursive: true });
    writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'cloned', dependencies: { lockpkg: '1.0.0' } }));
    // The lockfile's resolved URL points at the local service too: sync takes versions from it, never URLs.
    writeFileSync(
      path.join(root, 'package-lock.json'),
      JSON.stringify({
        name: 'cloned',
        lockfileVersion: 3,
        packages: { '': { name: 'cloned', dependencies: { lockpkg: '1.0.0' } }, 'node_modules/lockpkg': { version: '1.0.0', resolved: `${secret.url}/lockpkg/-/lockpkg-1.0.0.tgz` } },
      }),
    );
    writeFileSync(path.join(root, '.docdex.yml'), `sources:\n  handbook: ${secret.url}/handbook/\n`);
    const before = secret.connections;
    const synced = await cli(['sync', root, '--json']);
    const json = JSON.parse(synced.stdout) as { libraries: Array<{ name: string; state: string; reason: string | null }>; jobs: Array<{ library: string; what: string }> };
    const handbook = json.libraries.find((l) => l.name === 'handbook')!;
    expect(handbook.state).toBe('unresolved');
    expect(handbook.reason).toMatch(/refused: 127\.0\.0\.2 is a loopback address/);
    expect(json.jobs.map((j) => j.what)).toEqual(['the README in npm package lockpkg@1.0.0']);
    expect(secret.connections - before).toBe(0);
  }, 240_000);

  it('a .docdex.yml naming a local path, file:// or ssh remote is refused before anything is read', async () => {
    const root = path.join(projects, 'paths');
    mkdirSync(root, { recursive: true });
    writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'paths', dependencies: {} }));
    writeFileSync(path.join(root, '.docdex.yml'), `sources:\n  private: ${repos[0]!.bare}\n`);
    const synced = await cli(['sync', root]);
    expect(synced.exitCode).toBe(2);
    expect(synced.stderr).toMatch(/Error: \.docdex\.yml is not valid: sources\.private: a source is a docs URL or an http\(s\) git repository/);
  }, 120_000);
});

describe('R3: a stored URL keeps the provenance it was stored with', () => {
  it('the user recrawls what they typed; not what an API caller stored, nor what a pack names, even from the CLI', async () => {
    // typed-docs was typed at the CLI (R1's second test): the CLI recrawls it.
    const again = await cli(['sources', 'recrawl', 'typed-docs', '--json']);
    expect(again.exitCode, again.stderr).toBe(0);
    await cli(['crawl', 'cancel', (JSON.parse(again.stdout) as { job_id: string }).job_id]);
    // An API caller crawls the same service, which the operator admitted for the daemon.
    const daemon = await startTestDaemon(loadConfig({ ...db.env, CRAWL_ALLOW_HOSTS: '127.0.0.2' }), { routes: docsIndexRoutes });
    try {
      const started = await fetch(`${daemon.base}/api/crawl-jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ start_urls: [`${secret.url}/api/`], name: 'api-docs', max_depth: 0 }),
      });
      expect(started.status, await started.clone().text()).toBe(202);
      await fetch(`${daemon.base}/api/crawl-jobs/${((await started.json()) as { job_id: string }).job_id}/cancel`, { method: 'POST' });
    } finally {
      await daemon.close();
    }
    const before = secret.connections;
    const refused = await cli(['sources', 'recrawl', 'api-docs']);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/refused: 127\.0\.0\.2 is a loopback address/);
    expect(refused.stderr).toMatch(/Hint: Its start URLs were not typed at this CLI/);
    // A pack of the user's own source names the same URL, but the pack's copy is someone else's word.
    const pack = path.join(projects, 'typed-docs.docdex-pack');
    expect((await cli(['export', 'typed-docs', '-o', pack])).exitCode).toBe(0);
    const imported = await cli(['import', pack, '--as', 'imported-docs@1']);
    expect(imported.exitCode, imported.stderr).toBe(0);
    const fromPack = await cli(['sources', 'recrawl', 'imported-docs']);
    expect(fromPack.exitCode).toBe(2);
    expect(fromPack.stderr).toMatch(/refused: 127\.0\.0\.2 is a loopback address/);
    expect(secret.connections - before).toBe(0);
  }, 240_000);

  it('a base URL set on a source without stored start URLs is the word of whoever set it: the source is no longer typed', async () => {
    await db.pool.query(
      `INSERT INTO sources (name, version, kind, base_url, crawl_config, typed_by_user)
       VALUES ('bare-typed', '', 'crawl', 'http://127.0.0.2:1/', '{}', true),
              ('started-typed', '', 'crawl', 'http://127.0.0.2:1/', '{"start_urls": ["http://127.0.0.2:1/"]}', true)`,
    );
    await updateSource(db.pool, 'bare-typed', { baseUrl: 'http://127.0.0.2:2/' });
    await updateSource(db.pool, 'started-typed', { baseUrl: 'http://127.0.0.2:2/' });
    const { rows } = await db.pool.query<{ name: string; typed_by_user: boolean }>(`SELECT name, typed_by_user FROM sources WHERE name IN ('bare-typed', 'started-typed') ORDER BY name`);
    expect(rows).toEqual([
      { name: 'bare-typed', typed_by_user: false },
      { name: 'started-typed', typed_by_user: true },
    ]);
  });

  it('a repository a registry named is not checked out again on loopback from the CLI; one the user typed is', async () => {
    const allowed = { ...db.env, CRAWL_ALLOW_HOSTS: '127.0.0.1' };
    const added = await cli(['add', 'npm:gitpkg', '--wait', '--json'], allowed);
    expect(added.exitCode, added.stderr).toBe(0);
    expect((JSON.parse(added.stdout) as AddJson).libraries[0]!.jobs[0]!.what).toMatch(/^repository http:\/\/127\.0\.0\.1:\d+\/gitpkg at v1\.0\.0$/);
    const requests = git.requests.length;
    const refused = await cli(['sources', 'recrawl', 'gitpkg']);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/refused: 127\.0\.0\.1 is a loopback address/);
    expect(git.requests.length).toBe(requests);
    expect((await cli(['add', `${git.origin}/gitpkg.git@v1.0.0`, '--name', 'typed-git', '--wait'])).exitCode).toBe(0);
    const typed = await cli(['sources', 'recrawl', 'typed-git']);
    expect(typed.exitCode, typed.stderr).toBe(0);
  }, 240_000);
});

describe('R4: a registry is trusted at its origin only, and off it every failure reads the same', () => {
  it('over REST: a tarball on another port of the registry host is never connected to; an open and a closed port give one answer', async () => {
    const daemon = await startTestDaemon(loadConfig({ ...db.env, CRAWL_ALLOW_HOSTS: '127.0.0.3' }), { routes: docsIndexRoutes });
    const add = async (spec: string) => {
      const res = await fetch(`${daemon.base}/api/libraries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ specs: [spec] }) });
      return { status: res.status, body: (await res.json()) as { code: string; error: string } };
    };
    try {
      const port = await add('npm:portpkg');
      expect(port.body.code).toBe('nothing_to_index');
      expect(port.body.error).toMatch(/refused: 127\.0\.0\.1 is a loopback address/);
      expect(offPort.connections).toBe(0);
      const open = await add('npm:openpkg');
      const shut = await add('npm:closedpkg');
      expect(admitted.connections).toBeGreaterThan(0);
      const generic = (text: string) => text.replace(/openpkg|closedpkg/g, 'PKG').replace(/http:\/\/127\.0\.0\.3:\d+/g, 'URL');
      expect(open.status).toBe(shut.status);
      expect(generic(open.body.error)).toBe(generic(shut.body.error));
      expect(open.body.error).toMatch(/is unavailable: it could not be read\)/);
    } finally {
      await daemon.close();
    }
  }, 120_000);
});

describe("R5: a site belongs to one library by origin and base path, and a registry's tarball is no claim", () => {
  it("another port's crawled site, or a crawl of the registry's own front page, never blocks a package README", async () => {
    const crawled = await cli(['crawl', 'start', `${site.base}/`, '--name', 'site-docs', '--depth', '0', '--wait']);
    expect(crawled.exitCode, crawled.stderr).toBe(0);
    const added = await cli(['add', 'npm:readmepkg', '--wait', '--json']);
    expect(added.exitCode, added.stderr).toBe(0);
    expect((JSON.parse(added.stdout) as AddJson).libraries[0]!.jobs.map((j) => j.what)).toEqual(['the README in npm package readmepkg@1.0.0']);
    const daemon = await startTestDaemon(loadConfig({ ...db.env, CRAWL_ALLOW_HOSTS: '127.0.0.1' }), { routes: docsIndexRoutes });
    const post = async (route: string, body: unknown) => {
      const res = await fetch(`${daemon.base}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    try {
      // A REST client crawls one page of the registry's host: its README fallback still works for every package.
      const page = await post('/api/crawl-jobs', { start_urls: [`${registry.base}/`], name: 'registry-page', max_depth: 0 });
      expect(page.status).toBe(202);
      await post(`/api/crawl-jobs/${String(page.body.job_id)}/cancel`, {});
      const readme = await post('/api/libraries', { specs: ['npm:readmepkg2'] });
      expect(readme.status, JSON.stringify(readme.body)).toBe(202);
      expect(readme.body).toMatchObject({ items: [{ status: 'queued', jobs: [{ what: 'the README in npm package readmepkg2@1.0.0' }] }] });
      // An upload's claim: refused on a crawled site's origin and path, accepted on another port of the host.
      const content = '# Notes\n\n```js\nnotes()\n```\n';
      expect((await post('/upload/markdown', { content, name: 'claims-site', source_url: `${site.base}/guide.md` })).status).toBe(409);
      expect((await post('/upload/markdown', { content, name: 'claims-registry', source_url: `${registry.base}/readmepkg/-/readmepkg-1.0.0.tgz` })).status).toBe(409);
      expect((await post('/upload/markdown', { content, name: 'own-notes', source_url: `http://127.0.0.1:${closed}/guide.md` })).status).toBe(202);
    } finally {
      await daemon.close();
    }
  }, 240_000);
});
