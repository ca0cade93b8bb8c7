// Indexing a git repository of docs as users do (issue 50): the real-world corpus (react.dev, vite, fastapi at
// fixed commits, ../shared/corpus/realworld), each made a tagged git repository in a temp folder and indexed
// through the same code as `docdex add file://…@tag --path <docs>`: the checkout with its includes resolved from
// the same commit (startGitSource), then the upload workers' extraction and storage, into a scratch database.
// Prints per repository the files, snippets and includes, and the seconds of each part.
// Run alone: npm run build && node --experimental-strip-types bench/git-index.ts
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../dist/core/config.js';
import { resolveConnection } from '../dist/core/db/connect.js';
import { startGitSource } from '../dist/core/git/source.js';
import { startUploadWorkers } from '../dist/core/upload/worker.js';
import { waitForUpload } from '../dist/core/upload/job-rows.js';
import { documentStages } from '../dist/core/pipeline/stages.js';
import { scratchDatabase } from './crawl.ts';

type Row = Record<string, string | number>;
const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.resolve(ROOT, 'bin', 'run.js');
const CORPUS =
  process.env.DOCDEX_REALWORLD_DIR ??
  [path.resolve(ROOT, '..', 'shared', 'corpus', 'realworld'), path.resolve(ROOT, '..', '..', 'shared', 'corpus', 'realworld')].find((d) => existsSync(d)) ??
  path.resolve(ROOT, '..', 'shared', 'corpus', 'realworld');
// The docs path of each repository, as the corpus README gives it.
const REPOSITORIES: Array<[string, string]> = [
  ['react.dev', 'src/content'],
  ['vite', 'docs'],
  ['fastapi', 'docs/en/docs'],
];

/** The corpus folder copied into a git repository with one commit tagged v1. */
function tagged(name: string, into: string): string {
  const dir = path.join(into, name);
  cpSync(path.join(CORPUS, name), dir, { recursive: true });
  const git = (...args: string[]): void => {
    execFileSync('git', ['-c', 'user.email=bench@docdex.test', '-c', 'user.name=bench', ...args], { cwd: dir, stdio: 'ignore' });
  };
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'corpus');
  git('tag', 'v1');
  return dir;
}

export async function benchGitIndex(): Promise<Row[]> {
  if (!existsSync(CORPUS)) return [{ result: `skipped: no real-world corpus at ${CORPUS} (set DOCDEX_REALWORLD_DIR)` }];
  const base = loadConfig(process.env);
  if (base.database.mode === 'embedded') {
    await new Promise<void>((resolve, reject) => execFile(process.execPath, [BIN, 'db', 'start'], (error) => (error ? reject(error) : resolve())));
  }
  const db = await scratchDatabase(await resolveConnection(base));
  const config = loadConfig({ ...process.env, DATABASE_URL: db.url });
  const temp = mkdtempSync(path.join(os.tmpdir(), 'docdex-bench-git-'));
  const rows: Row[] = [];
  let workers: Awaited<ReturnType<typeof startUploadWorkers>> | undefined;
  try {
    workers = await startUploadWorkers(db, config, { pollingIntervalSeconds: 0.5, stages: documentStages(config) });
    for (const [name, docs] of REPOSITORIES) {
      if (!existsSync(path.join(CORPUS, name))) continue;
      const repo = tagged(name, temp);
      const started = performance.now();
      const job = await startGitSource(db, config, { remote: `file://${repo}`, ref: 'v1', paths: [docs], name, provenance: 'user' });
      const checkedOut = performance.now();
      const done = await waitForUpload(db, job.id, undefined, { pollMs: 200 });
      const finished = performance.now();
      rows.push({
        repository: name,
        files: done.file_count,
        snippets: done.snippets_extracted,
        'includes resolved': done.includes_resolved,
        'includes unresolved': done.includes_unresolved,
        'checkout + includes s': ((checkedOut - started) / 1000).toFixed(1),
        'extract + store s': ((finished - checkedOut) / 1000).toFixed(1),
        'total s': ((finished - started) / 1000).toFixed(1),
      });
    }
  } finally {
    await workers?.stop();
    await db.drop();
    rmSync(temp, { recursive: true, force: true });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.table(await benchGitIndex());
}
