import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchSnippets } from '../../src/core/search/search.js';
import { includeScope, scopeIncludeHost } from '../../src/core/upload/includes.js';
import { createUploadFromPaths } from '../../src/core/upload/jobs.js';
import { waitForUpload } from '../../src/core/upload/job-rows.js';
import { startUploadWorkers } from '../../src/core/upload/worker.js';
import type { UploadWorkers } from '../../src/core/upload/worker.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

/**
 * An uploaded folder's includes: read from the folder and, around it, from the files its git repository
 * tracks; never through a symlink out, never a hidden or untracked file outside the folder, never past the size cap.
 */

let dir: string;
let repo: string;

function write(rel: string, content: string | Buffer): void {
  const file = path.join(dir, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docdex-upload-includes-'));
  repo = path.join(dir, 'repo');
  write('outside-secret.py', 'SECRET = "outside the repository"\n');
  write('repo/docs/en/mkdocs.yml', 'site_name: Kettle\nmarkdown_extensions:\n  mdx_include: null\n');
  write('repo/docs_src/brew.py', 'def brew_oolong_kettle():\n    return "oolong"\n');
  write('repo/docs_src/.env.py', 'TOKEN = "hidden"\n');
  write('repo/docs_src/big.py', `x = "${'y'.repeat(1024 * 1024)}"\n`);
  write('repo/docs/en/docs/local.py', 'def beside_the_page_untracked():\n    pass\n');
  write(
    'repo/docs/en/docs/tutorial.md',
    [
      '# Tutorial',
      '',
      'Brew it:',
      '',
      '{* ../../docs_src/brew.py *}',
      '',
      '{* ./docs/local.py *}',
      '',
      '{* ../../docs_src/untracked.py *}',
      '',
      '{* ../../docs_src/.env.py *}',
      '',
      '{* ../../docs_src/escape.py *}',
      '',
      '{* ../../docs_src/big.py *}',
      '',
      '{* ../../../../outside-secret.py *}',
      '',
    ].join('\n'),
  );
  const env = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
  await execa('git', ['init', '-q'], { cwd: repo, env });
  await execa('git', ['add', 'docs/en/mkdocs.yml', 'docs_src/brew.py', 'docs_src/.env.py', 'docs_src/big.py', 'docs/en/docs/tutorial.md'], { cwd: repo, env });
  // Not tracked, outside the uploaded folder: never read.
  write('repo/docs_src/untracked.py', 'PERSONAL = "untracked"\n');
  // A symlink in the work tree to a file outside it.
  symlinkSync(path.join(dir, 'outside-secret.py'), path.join(repo, 'docs_src', 'escape.py'));
  await execa('git', ['add', 'docs_src/escape.py'], { cwd: repo, env });
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the scope of an uploaded folder', () => {
  it('is the work tree around it, with its tracked files', async () => {
    const scope = await includeScope(path.join(repo, 'docs', 'en', 'docs'));
    expect(scope.root).toBe(repo);
    expect(scope.folder).toBe('docs/en/docs');
    expect(scope.tracked?.has('docs_src/brew.py')).toBe(true);
    const host = scopeIncludeHost(scope);
    expect(host.read('docs_src/brew.py')).toContain('brew_oolong_kettle');
    expect(host.read('docs/en/docs/local.py')).toContain('beside_the_page_untracked');
    expect(host.read('docs_src/untracked.py')).toEqual({ refused: 'not tracked by the repository' });
    expect(host.read('docs_src/.env.py')).toEqual({ refused: 'a hidden file' });
    expect(host.read('docs_src/escape.py')).toEqual({ refused: 'a symlink out of the repository' });
    expect(host.read('docs_src/big.py')).toEqual({ refused: 'larger than 1024 KB' });
    expect(host.read('docs_src/none.py')).toBeNull();
    expect(host.exists('docs/en/mkdocs.yml')).toBe(true);
  });

  it('is the folder itself outside any repository', async () => {
    const scope = await includeScope(dir);
    expect(scope).toEqual({ root: path.resolve(dir), folder: '', tracked: null });
  });
});

describe('uploading a folder whose pages include files', () => {
  let db: TestDatabase;
  let workers: UploadWorkers;
  const dbh = () => ({ pool: db.pool, info: db.info });

  beforeAll(async () => {
    db = await createTestDatabase();
    workers = await startUploadWorkers(dbh(), db.config, { pollingIntervalSeconds: 0.5 });
  });

  afterAll(async () => {
    await workers?.stop();
    await db?.drop();
  });

  it('indexes the included code, keeps refused includes as written and counts both on the job', async () => {
    const job = await createUploadFromPaths(dbh(), db.config, { paths: [path.join(repo, 'docs', 'en', 'docs')], name: 'kettle' });
    expect(job).toMatchObject({ includes_resolved: 2, includes_unresolved: 5 });
    expect(job.unresolved_includes.map((u) => [u.include, u.reason])).toEqual([
      ['{* ../../docs_src/untracked.py *}', 'not tracked by the repository'],
      ['{* ../../docs_src/.env.py *}', 'a hidden file'],
      ['{* ../../docs_src/escape.py *}', 'a symlink out of the repository'],
      ['{* ../../docs_src/big.py *}', 'larger than 1024 KB'],
      ['{* ../../../../outside-secret.py *}', 'outside the repository'],
    ]);
    const done = await waitForUpload(dbh(), job.id);
    expect(done).toMatchObject({ status: 'completed', includes_resolved: 2, includes_unresolved: 5 });
    const found = await searchSnippets(db.pool, { query: 'brew_oolong_kettle', source: 'kettle' });
    expect(found.items[0]).toMatchObject({ language: 'python', title: 'Tutorial' });
    const leaked = await db.pool.query(`SELECT 1 FROM snippets WHERE code ~ 'SECRET|PERSONAL|TOKEN'`);
    expect(leaked.rowCount).toBe(0);
  });
});
