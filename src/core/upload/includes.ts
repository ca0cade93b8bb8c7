import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { expandIncludes, MAX_INCLUDED_BYTES } from '../extract/includes.js';
import type { IncludeHost, UnresolvedInclude } from '../extract/includes.js';
import { decodeUpload } from './decode.js';

/**
 * Included files read from the disk for a producer that has them (an uploaded folder, a git checkout):
 * confined to one root folder (the repository), regular files only, reached through no symlink that leaves
 * the root, within a size cap, UTF-8 text. The directives and paths are read by extract/includes.ts, which
 * never asks for a path that leaves the root; this side holds the file system to the same rule.
 */

const SYMLINK_OUT = { refused: 'a symlink out of the repository' };

/**
 * A repository path's file under `root` with symlinks resolved: null when there is none, refused when it
 * resolves outside `root`.
 */
export function confinedFile(root: string, realRoot: string, repoPath: string): string | { refused: string } | null {
  const absolute = path.join(root, ...repoPath.split('/'));
  let real: string;
  try {
    real = fs.realpathSync(absolute);
  } catch {
    return null;
  }
  return real === realRoot || real.startsWith(realRoot + path.sep) ? real : SYMLINK_OUT;
}

/** The text of a regular file within the include size cap; refused with why it is not one. */
export function readIncludedText(file: string): string | { refused: string } | null {
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile()) return { refused: 'not a file' };
    if (stat.size > MAX_INCLUDED_BYTES) return { refused: `larger than ${MAX_INCLUDED_BYTES / 1024} KB` };
    const decoded = decodeUpload(fs.readFileSync(file));
    return 'error' in decoded ? { refused: decoded.error } : decoded.text;
  } catch {
    return null;
  }
}

/**
 * Where an uploaded folder's includes may come from. The folder the user gave is theirs to index, so any of
 * its files; around it, the git work tree it is in (fastapi's pages include `../../docs_src/`), but only the
 * files git tracks there: what a page names outside the folder is read only if it is committed to the same
 * repository, never a personal file that happens to sit in the work tree.
 */
export interface IncludeScope {
  /** The repository's work tree, or the folder itself when it is in none: paths are relative to it. */
  root: string;
  /** The uploaded folder, relative to `root` ('' when it is the root). */
  folder: string;
  /** Files git tracks under `root`, when it is a work tree. */
  tracked: Set<string> | null;
}

function workTreeOf(start: string): string | null {
  let dir = start;
  for (;;) {
    if (fs.existsSync(path.join(dir, '.git'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/** The tracked files of a work tree: git with no system or global configuration and no fsmonitor hook. */
async function trackedFiles(root: string): Promise<Set<string> | null> {
  const result = await execa('git', ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', 'ls-files', '-z'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' },
    extendEnv: false,
    reject: false,
    timeout: 60_000,
    maxBuffer: 256 * 1024 * 1024,
    stdin: 'ignore',
  }).catch(() => null);
  if (result === null || result.exitCode !== 0) return null;
  return new Set(
    String(result.stdout)
      .split('\0')
      .filter((p) => p !== ''),
  );
}

/** The scope of an uploaded folder (or of the folder of an uploaded file). */
export async function includeScope(uploaded: string): Promise<IncludeScope> {
  const folder = path.resolve(uploaded);
  const tree = workTreeOf(folder);
  const tracked = tree === null ? null : await trackedFiles(tree);
  if (tree === null || tracked === null) return { root: folder, folder: '', tracked: null };
  return { root: tree, folder: path.relative(tree, folder).split(path.sep).join('/'), tracked };
}

function inFolder(repoPath: string, folder: string): boolean {
  return folder === '' || repoPath.startsWith(`${folder}/`);
}

/** Reads a scope's files: hidden files and folders (`.env`, `.git/`) never, as an upload skips them. */
export function scopeIncludeHost(scope: IncludeScope): IncludeHost {
  let realRoot: string;
  try {
    realRoot = fs.realpathSync(scope.root);
  } catch {
    return { read: () => null, exists: () => false };
  }
  return {
    read(repoPath) {
      const file = confinedFile(scope.root, realRoot, repoPath);
      if (typeof file !== 'string') return file;
      if (repoPath.split('/').some((s) => s.startsWith('.'))) return { refused: 'a hidden file' };
      if (!inFolder(repoPath, scope.folder) && !scope.tracked?.has(repoPath)) return { refused: 'not tracked by the repository' };
      return readIncludedText(file);
    },
    exists(repoPath) {
      return typeof confinedFile(scope.root, realRoot, repoPath) === 'string';
    },
  };
}

/** Resolved and unresolved includes of a job's files. */
export interface IncludeTally {
  resolved: number;
  unresolved: number;
  /** The first unresolved ones, with why. */
  problems: UnresolvedInclude[];
}

export function emptyTally(): IncludeTally {
  return { resolved: 0, unresolved: 0, problems: [] };
}

const MAX_PROBLEMS = 100;

export function addToTally(tally: IncludeTally, outcome: IncludeTally): void {
  tally.resolved += outcome.resolved;
  tally.unresolved += outcome.unresolved;
  for (const p of outcome.problems) if (tally.problems.length < MAX_PROBLEMS) tally.problems.push(p);
}

/** An uploaded file's text with its includes resolved in its scope (the file at `absolute` under its root). */
export function expandUploadedFile(scope: IncludeScope, host: IncludeHost, absolute: string, text: string): { text: string; tally: IncludeTally } {
  const repoPath = path.relative(scope.root, absolute).split(path.sep).join('/');
  if (repoPath.startsWith('..')) return { text, tally: emptyTally() };
  const outcome = expandIncludes(repoPath, text, host);
  return { text: outcome.text, tally: { resolved: outcome.resolved, unresolved: outcome.unresolved, problems: outcome.problems } };
}
