import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/core/errors.js';
import { startGitSource } from '../../src/core/git/index.js';
import type { GitSourceRequest } from '../../src/core/git/index.js';
import { createUploadFromContent } from '../../src/core/upload/jobs.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { createTestRepo } from '../helpers/git-repo.js';
import type { TestRepo } from '../helpers/git-repo.js';

let db: TestDatabase;
let repo: TestRepo;
let head: string;
let tmp: string;
let savedTmp: string | undefined;
const dbh = () => ({ pool: db.pool, info: db.info });

beforeAll(async () => {
  // This file's own temp folder (each test file is its own process): what a checkout leaves behind shows here.
  savedTmp = process.env.TMPDIR;
  tmp = mkdtempSync(path.join(os.tmpdir(), 'docdex-git-errors-'));
  db = await createTestDatabase();
  repo = await createTestRepo('acme');
  repo.write({ 'docs/index.md': '# Acme\n\n```python\nacme.x()\n```\n', 'docs/big/data.txt': randomBytes(3 * 1024 * 1024).toString('base64') });
  head = await repo.commit('first', { tag: 'v2.0.0' });
  process.env.TMPDIR = tmp;
});

afterAll(async () => {
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
  await db?.drop();
  repo?.cleanup();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

async function refused(request: Partial<GitSourceRequest>, code: keyof typeof ERROR_CODES, message?: RegExp): Promise<void> {
  const error = (await startGitSource(dbh(), db.config, { remote: repo.url, provenance: 'user', maxRepoMb: 50, ...request }).then(
    () => undefined,
    (e: unknown) => e,
  )) as { code?: string; message?: string; hint?: string } | undefined;
  expect(error).toMatchObject({ code });
  expect(error!.hint ?? ERROR_CODES[code]).toBeTruthy();
  if (message) expect(error!.message).toMatch(message);
  const { rows } = await db.pool.query<{ sources: number; jobs: number }>(`SELECT (SELECT count(*)::int FROM sources WHERE kind = 'git') AS sources, (SELECT count(*)::int FROM upload_jobs) AS jobs`);
  expect(rows[0]).toEqual({ sources: 0, jobs: 0 });
  expect(readdirSync(tmp)).toEqual([]);
}

describe('bad input to a git source: a clear error with its code, nothing written, no temp folder left', () => {
  it('an unknown tag or branch', async () => {
    await refused({ ref: 'v9.9.9' }, 'git_ref_not_found', /no tag or branch "v9\.9\.9"/);
  });

  it('a short or unknown commit hash', async () => {
    await refused({ ref: head.slice(0, 8) }, 'git_ref_not_found');
    await refused({ ref: 'f'.repeat(40) }, 'git_ref_not_found', /no commit/);
  });

  it('a ref git could read as an option or a range', async () => {
    await refused({ ref: '--upload-pack=touch /tmp/x' }, 'validation_error');
    await refused({ ref: 'main..v2.0.0' }, 'validation_error');
  });

  it('a missing repository', async () => {
    await refused({ remote: `file://${path.join(path.dirname(repo.bare), 'missing.git')}` }, 'git_repo_not_found');
  });

  it('paths matching nothing', async () => {
    await refused({ paths: ['guide'] }, 'git_nothing_to_index', /"guide" matches no documentation file/);
    await refused({ paths: ['../outside'] }, 'validation_error');
  });

  it('a local, file:// or ssh remote from REST/MCP', async () => {
    await refused({ provenance: 'third_party' }, 'git_remote_refused');
    await refused({ remote: repo.bare, provenance: 'third_party' }, 'git_remote_refused');
    await refused({ remote: 'git@github.com:acme/widgets.git', provenance: 'third_party' }, 'git_remote_refused');
    await refused({ remote: 'ext::sh -c touch% /tmp/x', provenance: 'user' }, 'git_remote_refused');
  });

  it('a repository over the size cap', async () => {
    await refused({ maxRepoMb: 1 }, 'git_repo_too_large', /larger than the 1 MB limit/);
  });

  it('a name held by an upload source', async () => {
    await createUploadFromContent(dbh(), db.config, { content: '# Up\n\ntext\n', name: 'acme', version: '2.0.0' });
    const error = await startGitSource(dbh(), db.config, { remote: repo.url, ref: 'v2.0.0', provenance: 'user' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'conflict' });
    expect(readdirSync(tmp)).toEqual([]);
    await db.pool.query('DELETE FROM sources');
  });

  it('a full commit hash is checked out and named by its short hash; no ref is the default branch', async () => {
    const job = await startGitSource(dbh(), db.config, { remote: repo.url, ref: head, provenance: 'user' });
    expect(job).toMatchObject({ name: 'acme', version: head.slice(0, 7), file_count: 2 });
    expect(readdirSync(tmp)).toEqual([]);
    const defaultBranch = await startGitSource(dbh(), db.config, { remote: repo.url, provenance: 'user', name: 'acme-docs', paths: ['docs/index.md'] });
    expect(defaultBranch).toMatchObject({ name: 'acme-docs', version: 'main', file_count: 1 });
  });
});
