import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addGitCredential, removeGitCredential } from '../../src/core/agent-server/git-credentials.js';
import { prepareAccess } from '../../src/core/git/access.js';
import { contextFor, listRemoteRefs } from '../../src/core/git/checkout.js';
import { listRemoteTags, startGitSource } from '../../src/core/git/index.js';
import { parseRemote } from '../../src/core/git/remote.js';
import { parseAllowHosts } from '../../src/core/net/policy.js';
import { searchSnippets } from '../../src/core/search/search.js';
import { startUploadWorkers } from '../../src/core/upload/worker.js';
import { waitForUpload } from '../../src/core/upload/job-rows.js';
import type { UploadWorkers } from '../../src/core/upload/worker.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startGitHttpServer } from '../helpers/git-http.js';
import type { GitHttpServer } from '../helpers/git-http.js';
import { createTestRepo } from '../helpers/git-repo.js';
import type { TestRepo } from '../helpers/git-repo.js';

const TOKEN = 'tok_Zq8r2Lh7Xw4nPa9sVb3d';
let db: TestDatabase;
let workers: UploadWorkers;
let repo: TestRepo;
let server: GitHttpServer;
let remote: string;
const dbh = () => ({ pool: db.pool, info: db.info });

async function nothingWritten(): Promise<void> {
  const { rows } = await db.pool.query<{ sources: number; jobs: number }>('SELECT (SELECT count(*)::int FROM sources) AS sources, (SELECT count(*)::int FROM upload_jobs) AS jobs');
  expect(rows[0]).toEqual({ sources: 0, jobs: 0 });
}

async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string; hint?: string }> {
  const error = (await promise.then(
    () => undefined,
    (e: unknown) => e,
  )) as { code: string; message: string; hint?: string } | undefined;
  expect(error).toBeDefined();
  expect(`${error!.message} ${error!.hint ?? ''}`).not.toContain(TOKEN);
  return error!;
}

beforeAll(async () => {
  db = await createTestDatabase();
  workers = await startUploadWorkers(dbh(), db.config, { pollingIntervalSeconds: 0.5 });
  repo = await createTestRepo('acme');
  repo.write({ 'docs/index.md': '# Acme over HTTP\n\n```python\nacme.http_platypus_call()\n```\n' });
  await repo.commit('first', { tag: 'v1.0.0' });
  server = await startGitHttpServer(path.dirname(repo.bare), { auth: { username: 'docdex', password: TOKEN } });
  remote = `${server.origin}/acme.git`;
});

afterAll(async () => {
  await server?.close();
  await workers?.stop();
  await db?.drop();
  repo?.cleanup();
});

describe('git over smart HTTP (git http-backend on loopback)', () => {
  it('needs a credential: without one, a clear error and nothing written', async () => {
    const error = await failure(startGitSource(dbh(), db.config, { remote, provenance: 'user' }));
    expect(error).toMatchObject({ code: 'git_auth_required' });
    expect(error.message).toMatch(/no credential is stored/);
    await nothingWritten();
  });

  it('refuses a stored credential the server rejects, without showing it', async () => {
    const wrong = await addGitCredential(db.pool, { host: `127.0.0.1:${server.port}`, username: 'docdex', token: `${TOKEN}x` });
    const error = await failure(startGitSource(dbh(), db.config, { remote, provenance: 'user' }));
    expect(error).toMatchObject({ code: 'git_auth_required' });
    expect(error.message).toMatch(/was refused/);
    await removeGitCredential(db.pool, wrong.id);
    await nothingWritten();
  });

  it('refuses loopback for a REST/MCP caller, unless CRAWL_ALLOW_HOSTS lists it', async () => {
    // The test database's config allow-lists 127.0.0.1 (for crawl tests): this caller's has no allow-list.
    const strict = { ...db.config, outbound: { allowHosts: [] } };
    const error = await failure(startGitSource(dbh(), strict, { remote, provenance: 'third_party' }));
    expect(error).toMatchObject({ code: 'git_remote_refused' });
    expect(error.message).toMatch(/loopback/);
    const viaLocalhost = await failure(listRemoteTags(strict, remote.replace('127.0.0.1', 'localhost')));
    expect(viaLocalhost).toMatchObject({ code: 'git_remote_refused' });
    await nothingWritten();
    const allowed = { ...db.config, outbound: { allowHosts: parseAllowHosts('127.0.0.1') } };
    await expect(listRemoteTags(allowed, remote)).rejects.toMatchObject({ code: 'git_auth_required' });
  });

  it('checks out with the stored token, which never appears in a process listing, and indexes the docs', async () => {
    await addGitCredential(db.pool, { host: `127.0.0.1:${server.port}`, username: 'docdex', token: TOKEN });
    server.listings.length = 0;
    expect(await listRemoteTags(db.config, remote, db.pool)).toEqual(['v1.0.0']);
    const job = await startGitSource(dbh(), db.config, { remote, ref: 'v1.0.0', provenance: 'user' });
    expect(job).toMatchObject({ name: 'acme', version: '1.0.0', source_type: 'git', file_count: 1 });
    expect(server.requests.some((r) => r.authorized)).toBe(true);
    expect(server.listings.length).toBeGreaterThan(0);
    expect(server.listings.some((listing) => listing.includes(remote))).toBe(true);
    for (const listing of server.listings) expect(listing).not.toContain(TOKEN);
    expect(await waitForUpload(dbh(), job.id)).toMatchObject({ status: 'completed', processed_files: 1 });
    const found = await searchSnippets(db.pool, { query: 'http_platypus_call', source: 'acme' });
    expect(found.items[0]?.source_url).toMatch(new RegExp(`^${server.origin}/acme\\.git@[0-9a-f]{40}/docs/index\\.md`));
    const stored = await db.pool.query<{ text: string }>(`SELECT crawl_config::text AS text FROM sources WHERE name = 'acme'`);
    expect(stored.rows[0]?.text).not.toContain(TOKEN);
  });
  it('connects to the address the policy admitted, pinned for git, whatever DNS says later; refuses private answers', async () => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'docdex-git-pin-'));
    try {
      const strict = { ...db.config, outbound: { allowHosts: [] } };
      await addGitCredential(db.pool, { host: `docs.pinned.invalid:${server.port}`, username: 'docdex', token: TOKEN });
      // A name no real resolver knows: git can only reach the server through the pinned address.
      const remoteByName = parseRemote(`http://docs.pinned.invalid:${server.port}/acme.git`);
      const access = await prepareAccess(strict, remoteByName, tmp, { local: true, pool: db.pool, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
      expect(access.settings).toContain(`http.curloptResolve=docs.pinned.invalid:${server.port}:127.0.0.1`);
      expect(access.settings).toContain('http.followRedirects=false');
      const context = contextFor(tmp, remoteByName, access, 64 * 1024 * 1024);
      const { refs } = await listRemoteRefs(context, { remote: remoteByName, access, maxBytes: 64 * 1024 * 1024 }, [], ['--tags']);
      expect([...refs.keys()]).toContain('refs/tags/v1.0.0');
      const privateAnswer = prepareAccess(strict, remoteByName, tmp, { local: true, resolve: async () => [{ address: '10.1.2.3', family: 4 }] });
      await expect(privateAnswer).rejects.toMatchObject({ code: 'git_remote_refused', message: expect.stringMatching(/private address/) });
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
