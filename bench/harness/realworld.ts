import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type pg from 'pg';
import type { Config } from '../../src/core/config.js';
import type { ConnectionInfo } from '../../src/core/db/connect.js';
import type { addLibraries } from '../../src/core/library/add.js';
import type { documentStages } from '../../src/core/pipeline/stages.js';
import type { startUploadWorkers } from '../../src/core/upload/worker.js';
import type { waitForUpload } from '../../src/core/upload/job-rows.js';

/**
 * The real-world markdown corpus (../shared/corpus/realworld: react.dev, vite and fastapi as their repositories
 * hold their docs, at fixed commits) indexed the way a user indexes a repository: each folder committed and
 * tagged in a fresh git repository, then `docdex add file://…@tag --path <docs>` through addLibraries with the
 * CLI's permission, its upload job run by upload workers of this process (what `add --wait` does).
 */

/** The product functions this needs, from the caller: `dist/` in `npm run eval`, `src/` in tests. */
export interface RepoIndexingParts {
  addLibraries: typeof addLibraries;
  startUploadWorkers: typeof startUploadWorkers;
  waitForUpload: typeof waitForUpload;
  documentStages: typeof documentStages;
}

export interface RealworldLibrary {
  /** The library name the peer benchmark uses, and the source name it is indexed under. */
  library: string;
  /** Its folder under the corpus directory. */
  folder: string;
  /** The docs path given to `docdex add --path`. */
  docsPath: string;
  /** The live URL of a file of the repository (shared README's mapping), or null for a file off the site. */
  liveUrl(file: string): string | null;
}

/** A markdown path under `prefix` as the site's path: extension off, `index` standing for its folder. */
function sitePath(file: string, prefix: string): string | null {
  if (!file.startsWith(prefix)) return null;
  const m = /^(.*?)\.(md|mdx)$/.exec(file.slice(prefix.length));
  if (!m) return null;
  return m[1] === 'index' ? '' : m[1]!.replace(/(^|\/)index$/, '$1');
}

export const REALWORLD_LIBRARIES: readonly RealworldLibrary[] = [
  {
    library: 'react',
    folder: 'react.dev',
    docsPath: 'src/content',
    liveUrl: (file) => {
      const p = sitePath(file, 'src/content/');
      return p === null ? null : `https://react.dev/${p}`;
    },
  },
  {
    library: 'vite',
    folder: 'vite',
    docsPath: 'docs',
    liveUrl: (file) => {
      const p = sitePath(file, 'docs/');
      return p === null ? null : `https://vite.dev/${p}`;
    },
  },
  {
    library: 'fastapi',
    folder: 'fastapi',
    docsPath: 'docs/en/docs',
    liveUrl: (file) => {
      const p = sitePath(file, 'docs/en/docs/');
      return p === null ? null : `https://fastapi.tiangolo.com/${p}${p === '' || p.endsWith('/') ? '' : '/'}`;
    },
  },
];

/** The repository file a git source's result URL names (`<remote>@<commit>/<path>#anchor`), or null. */
export function repositoryFile(url: string): string | null {
  const m = /@[0-9a-f]{40}\/([^#?]*)/.exec(url);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return null;
  }
}

function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const abs = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(abs);
      else out.push(path.relative(root, abs).split(path.sep).join('/'));
    }
  };
  walk(root);
  return out.sort();
}

/** Names and sizes of a library folder's files: whether a cached index is still of this corpus. */
export function folderFingerprint(root: string): string {
  const h = createHash('sha256');
  for (const f of listFiles(root)) h.update(`${f}:${statSync(path.join(root, f)).size}\n`);
  return h.digest('hex').slice(0, 16);
}

// A fixed identity and date: the same folder always gives the same commit.
const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'docdex eval',
  GIT_AUTHOR_EMAIL: 'eval@example.invalid',
  GIT_COMMITTER_NAME: 'docdex eval',
  GIT_COMMITTER_EMAIL: 'eval@example.invalid',
  GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
};

export const REALWORLD_TAG = 'docs-eval';

/** The folder committed into a new repository under `parent` and tagged; returns its file:// URL. */
async function tagFolder(root: string, parent: string, name: string): Promise<string> {
  const work = path.join(parent, name);
  mkdirSync(work, { recursive: true });
  cpSync(root, work, { recursive: true });
  const git = (args: string[]) => execa('git', ['-c', 'commit.gpgsign=false', '-c', 'tag.gpgsign=false', ...args], { cwd: work, env: GIT_ENV });
  await git(['init', '-q', '-b', 'main']);
  await git(['add', '-A']);
  await git(['commit', '-q', '-m', `${name} docs`]);
  await git(['tag', '-a', REALWORLD_TAG, '-m', REALWORLD_TAG]);
  return `file://${work}`;
}

export interface IndexedRepository {
  library: string;
  sourceId: string;
  pages: number;
  snippets: number;
  seconds: number;
}

/**
 * Indexes each library's folder through `docdex add file://…@tag --path <docs>` (addLibraries with the CLI's
 * local permission) and runs the upload jobs here. Throws when a job does not complete.
 */
export async function indexRealworld(
  parts: RepoIndexingParts,
  db: { pool: pg.Pool; info: ConnectionInfo },
  config: Config,
  options: { corpusDir: string; libraries?: readonly RealworldLibrary[]; onLibrary?: (indexed: IndexedRepository) => void },
): Promise<IndexedRepository[]> {
  const parent = mkdtempSync(path.join(os.tmpdir(), 'docdex-eval-repos-'));
  const workers = await parts.startUploadWorkers(db, config, { pollingIntervalSeconds: 0.5, stages: parts.documentStages(config) });
  const out: IndexedRepository[] = [];
  try {
    for (const lib of options.libraries ?? REALWORLD_LIBRARIES) {
      const started = performance.now();
      const root = path.join(options.corpusDir, lib.folder);
      if (!existsSync(root)) throw new Error(`The real-world corpus folder ${root} is missing.`);
      const url = await tagFolder(root, parent, lib.folder);
      const [outcome] = await parts.addLibraries(db, config, { specs: [`${url}@${REALWORLD_TAG}`], path: [lib.docsPath], name: lib.library }, 'user');
      if (outcome?.status !== 'queued') throw new Error(`docdex add of ${lib.library} failed: ${outcome?.status === 'failed' ? outcome.error.message : 'no outcome'}`);
      const job = await parts.waitForUpload(db, outcome.jobs[0]!.id);
      if (job.status !== 'completed' || job.source_id === null) throw new Error(`Indexing ${lib.library} ended ${job.status}: ${job.error ?? ''}`);
      const indexed = {
        library: lib.library,
        sourceId: job.source_id,
        pages: job.processed_files - job.failed_files,
        snippets: job.snippets_extracted,
        seconds: (performance.now() - started) / 1000,
      };
      options.onLibrary?.(indexed);
      out.push(indexed);
    }
  } finally {
    await workers.stop();
    rmSync(parent, { recursive: true, force: true });
  }
  return out;
}
