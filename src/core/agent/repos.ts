import { lstat, mkdir, readlink, realpath, rm, stat, symlink } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { z } from 'zod';
import { ConflictError, NotFoundError, UserError } from '../errors.js';
import { git, GitError, redactCredentials } from './git.js';
import { AGENT_QUEUES } from './queue.js';
import { DEFAULT_USER_ID, readSettings } from './settings.js';
import type { Workspace } from './workspace.js';

/** The spec's repo record, exactly: what GET /repos returns. */
export const RepoRecord = z
  .object({
    id: z.number().int(),
    repoUrl: z.string().optional().describe('Absent for local-only repos'),
    localPath: z.string().describe('Relative to the repos root'),
    fullPath: z.string().describe('Absolute path'),
    sourcePath: z.string().optional().describe('Worktrees only'),
    branch: z.string().optional().describe('Worktrees only'),
    defaultBranch: z.string().optional(),
    cloneStatus: z.enum(['cloning', 'ready', 'error']),
    clonedAt: z.number().describe('Milliseconds since the Unix epoch'),
    lastPulled: z.number().optional(),
    lastAccessedAt: z.number().optional(),
    isWorktree: z.boolean().optional(),
    isLocal: z.boolean().optional(),
  })
  .meta({ id: 'RepoRecord' });
export type RepoRecord = z.infer<typeof RepoRecord>;

/** A repo as docdex knows it: the record plus the clone error text, kept for `repos list` and git-info. */
export interface Repo extends RepoRecord {
  cloneError?: string;
  sourceRepoId?: number;
  /** Set by `addRepo` and `addWorktree`: what the user should know about the new repo (never stored). */
  warnings?: string[];
}

export interface RepoContext {
  pool: pg.Pool;
  workspace: Workspace;
}

interface RepoRow {
  id: number;
  repo_url: string | null;
  local_path: string;
  source_path: string | null;
  source_repo_id: number | null;
  branch: string | null;
  requested_branch: string | null;
  default_branch: string | null;
  clone_status: 'cloning' | 'ready' | 'error';
  clone_error: string | null;
  is_worktree: boolean;
  is_local: boolean;
  cloned_at: Date;
  last_pulled: Date | null;
  last_accessed_at: Date | null;
}

function toRepo(ws: Workspace, row: RepoRow): Repo {
  return {
    id: row.id,
    ...(row.repo_url === null ? {} : { repoUrl: row.repo_url }),
    localPath: row.local_path,
    fullPath: path.join(ws.reposDir, row.local_path),
    ...(row.source_path === null ? {} : { sourcePath: row.source_path }),
    ...(row.branch === null ? {} : { branch: row.branch }),
    ...(row.default_branch === null ? {} : { defaultBranch: row.default_branch }),
    cloneStatus: row.clone_status,
    clonedAt: row.cloned_at.getTime(),
    ...(row.last_pulled === null ? {} : { lastPulled: row.last_pulled.getTime() }),
    ...(row.last_accessed_at === null ? {} : { lastAccessedAt: row.last_accessed_at.getTime() }),
    ...(row.is_worktree ? { isWorktree: true } : {}),
    ...(row.is_local ? { isLocal: true } : {}),
    ...(row.clone_error === null ? {} : { cloneError: row.clone_error }),
    ...(row.source_repo_id === null ? {} : { sourceRepoId: row.source_repo_id }),
  };
}

/** The API shape: exactly the spec's fields. */
export function toRepoRecord(repo: Repo): RepoRecord {
  const { cloneError: _e, sourceRepoId: _s, warnings: _w, ...record } = repo;
  return record;
}

const SELECT = 'SELECT * FROM agent_repos';

export async function listRepos(ctx: RepoContext): Promise<Repo[]> {
  const { rows } = await ctx.pool.query<RepoRow>(`${SELECT} ORDER BY id`);
  return rows.map((r) => toRepo(ctx.workspace, r));
}

/**
 * Repos in the user's order: the ids in `repoOrder` first, in that order, then the rest by `repoSortMode`
 * (recent: last accessed, else cloned, newest first; name: by local path; manual: in the order added).
 */
export function orderRepos<T extends RepoRecord>(repos: T[], repoOrder: readonly number[] | undefined, mode: 'recent' | 'manual' | 'name'): T[] {
  const rank = new Map((repoOrder ?? []).map((id, i) => [id, i]));
  const byMode = (a: T, b: T): number => {
    if (mode === 'name') return a.localPath.localeCompare(b.localPath, 'en') || a.id - b.id;
    if (mode === 'manual') return a.id - b.id;
    return (b.lastAccessedAt ?? b.clonedAt) - (a.lastAccessedAt ?? a.clonedAt) || b.id - a.id;
  };
  return [...repos].sort((a, b) => {
    const ra = rank.get(a.id);
    const rb = rank.get(b.id);
    if (ra !== undefined && rb !== undefined) return ra - rb;
    if (ra !== undefined) return -1;
    if (rb !== undefined) return 1;
    return byMode(a, b);
  });
}

export async function listReposOrdered(ctx: RepoContext, userId = DEFAULT_USER_ID): Promise<Repo[]> {
  const [repos, settings] = await Promise.all([listRepos(ctx), readSettings(ctx.pool, userId)]);
  return orderRepos(repos, settings.preferences.repoOrder, settings.preferences.repoSortMode);
}

export async function getRepoById(ctx: RepoContext, id: number): Promise<Repo> {
  const { rows } = await ctx.pool.query<RepoRow>(`${SELECT} WHERE id = $1`, [id]);
  if (!rows[0]) throw new NotFoundError(`No repo with id ${id}.`, { hint: 'Run `docdex repos list` to see the repos.' });
  return toRepo(ctx.workspace, rows[0]);
}

/** A repo by id or by its local path (the directory name under repos/). */
export async function findRepo(ctx: RepoContext, idOrName: string | number): Promise<Repo> {
  const text = String(idOrName).trim();
  if (/^\d+$/.test(text)) return getRepoById(ctx, Number(text));
  const { rows } = await ctx.pool.query<RepoRow>(`${SELECT} WHERE local_path = $1`, [text]);
  if (!rows[0]) throw new NotFoundError(`No repo named "${text}".`, { hint: 'Run `docdex repos list` to see the repos.' });
  return toRepo(ctx.workspace, rows[0]);
}

/** The next step for a repo that is still cloning or failed to clone. */
export const NOT_READY_HINT = '`docdex repos list` shows its clone status; remove a failed one and add it again.';
const GIT_URL_HINT = 'Git URLs start with https://, ssh://, git://, file:// or look like user@host:path.';

const SCP_LIKE = /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:(?!\/\/)/;

/** True for what git treats as a remote: a URL with a scheme, or scp-like `user@host:path`. */
export function isGitUrl(source: string): boolean {
  return /^(https?|ssh|git|file):\/\//i.test(source) || SCP_LIKE.test(source);
}

/** A directory name from a URL or path: its last segment without `.git`, reduced to safe characters. */
export function repoDirName(source: string): string {
  const trimmed = source.replace(/[/\\]+$/, '').replace(/\.git$/i, '');
  const last = trimmed.split(/[/\\:]/).pop() ?? '';
  const cleaned = last
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[.-]+/, '')
    .slice(0, 100);
  return cleaned === '' ? 'repo' : cleaned;
}

function assertDirName(name: string): void {
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(name) || name === '.' || name === '..' || name.startsWith('.')) {
    throw new UserError(`Invalid repo name "${name}": use letters, digits, ".", "_" or "-" (not starting with ".").`, {
      code: 'bad_request',
      exitCode: 2,
      hint: 'Pick a --name such as api or my-project.',
    });
  }
}

async function pathTaken(file: string): Promise<boolean> {
  try {
    await lstat(file);
    return true;
  } catch {
    return false;
  }
}

/** The first free name: `name`, then `name-2`, `name-3`, ... (free in the database and on disk). */
async function freeName(ctx: RepoContext, wanted: string, explicit: boolean): Promise<string> {
  for (let i = 1; i < 1000; i++) {
    const name = i === 1 ? wanted : `${wanted}-${i}`;
    const { rowCount } = await ctx.pool.query('SELECT 1 FROM agent_repos WHERE local_path = $1', [name]);
    if (rowCount === 0 && !(await pathTaken(path.join(ctx.workspace.reposDir, name)))) return name;
    if (explicit) throw new ConflictError(`A repo named "${name}" already exists.`, { hint: 'Pick another --name.' });
  }
  throw new ConflictError(`No free repo name like "${wanted}".`, { hint: 'Pick another --name.' });
}

export interface AddRepoInput {
  /** A git URL (https, ssh, git, file, or scp-like) to clone, or a local directory to register. */
  source: string;
  branch?: string;
  name?: string;
  /** A local git repository is cloned into repos/ instead of registered through a symlink. */
  clone?: boolean;
}

/** A local directory outside repos/: registered through a symlink, which the sandbox microVM does not follow. */
export interface ExternalLocalSource {
  /** The resolved directory the symlink would point at. */
  real: string;
  /** It holds a git repository of its own, so it can be cloned in instead. */
  gitRepo: boolean;
}

/**
 * Whether `source` is a local, non-bare directory that lives outside the repos root (undefined for git URLs,
 * bare repositories, missing paths and directories already directly under repos/).
 */
export async function externalLocalSource(ws: Workspace, source: string): Promise<ExternalLocalSource | undefined> {
  const trimmed = source.trim();
  if (trimmed === '' || isGitUrl(trimmed)) return undefined;
  const real = await realpath(path.resolve(trimmed)).catch(() => undefined);
  if (real === undefined || !(await stat(real)).isDirectory() || (await isBareRepository(ws, real))) return undefined;
  await mkdir(ws.reposDir, { recursive: true });
  if (path.dirname(real) === (await realpath(ws.reposDir))) return undefined;
  return { real, gitRepo: await pathTaken(path.join(real, '.git')) };
}

/** What a link out of the workspace means for the sandbox, and what to do instead (spec: MicroVM scope). */
function externalRepoWarning(ws: Workspace, name: string, outside: ExternalLocalSource): string {
  const instead = outside.gitRepo ? `clone it in instead: \`docdex repos add ${outside.real} --clone\`` : `move or copy it into ${ws.reposDir}`;
  return (
    `repos/${name} is a link to ${outside.real}, outside the workspace. The sandbox microVM sees only ${ws.reposDir} and ${ws.scheduleWorktreesDir}, ` +
    `so with sandbox enforcement on every agent bash command there is refused. To work on it in the sandbox, ${instead}.`
  );
}

function assertBranchName(branch: string): void {
  // Also keeps a branch from being read as an option by git.
  if (!/^[A-Za-z0-9._/-]{1,200}$/.test(branch) || branch.startsWith('-') || branch.includes('..')) {
    throw new UserError(`Invalid branch name "${branch}".`, {
      code: 'bad_request',
      exitCode: 2,
      hint: 'Branch names use letters, digits, ".", "_", "/" and "-", without "..", and do not start with "-".',
    });
  }
}

/**
 * Adds a repo. A git URL (or the path of a bare repository) gets a `cloning` record and a clone job (the
 * record moves to ready or error when the job ends); any other local directory is registered at once as
 * `isLocal`, through a symlink under repos/ unless it already lives there. URLs with a password are refused: the record is readable by agents.
 */
export async function addRepo(ctx: RepoContext & { boss: PgBoss }, input: AddRepoInput): Promise<Repo> {
  const source = input.source.trim();
  if (source === '') throw new UserError('Give a git URL or a local directory.', { code: 'bad_request', exitCode: 2, hint: GIT_URL_HINT });
  if (input.branch !== undefined) assertBranchName(input.branch);
  if (input.name !== undefined) assertDirName(input.name);
  await mkdir(ctx.workspace.reposDir, { recursive: true });

  if (input.clone && !isGitUrl(source)) return addRepo(ctx, { ...input, source: await cloneableLocalUrl(ctx.workspace, source), clone: false });
  // A bare repository on this host has no working tree to work in: it is a remote, so it is cloned.
  const bare = !isGitUrl(source) && (await isBareRepository(ctx.workspace, path.resolve(source)));
  if (isGitUrl(source) || bare) {
    if (source.startsWith('-')) throw new UserError(`Invalid git URL "${source}".`, { code: 'bad_request', exitCode: 2, hint: GIT_URL_HINT });
    if (/^[a-z][a-z0-9+.-]*:\/\/[^/@\s]*:[^/@\s]*@/i.test(source)) {
      throw new UserError('The URL contains a password, which would be stored and shown to agents.', {
        code: 'bad_request',
        exitCode: 2,
        hint: 'Use a URL without credentials, and an SSH key or git credentials instead.',
      });
    }
    const url = bare ? await realpath(source) : source;
    const name = await freeName(ctx, input.name ?? repoDirName(url), input.name !== undefined);
    const { rows } = await ctx.pool.query<RepoRow>(
      `INSERT INTO agent_repos (repo_url, local_path, requested_branch, default_branch, clone_status)
       VALUES ($1, $2, $3, $3, 'cloning') RETURNING *`,
      [url, name, input.branch ?? null],
    );
    const repo = toRepo(ctx.workspace, rows[0]!);
    try {
      await ctx.boss.send(AGENT_QUEUES.clone, { repoId: repo.id });
    } catch (error) {
      await ctx.pool.query('DELETE FROM agent_repos WHERE id = $1', [repo.id]);
      throw error;
    }
    return repo;
  }

  const target = path.resolve(source);
  let real: string;
  try {
    real = await realpath(target);
    if (!(await stat(real)).isDirectory()) throw new Error('not a directory');
  } catch {
    throw new UserError(`"${source}" is neither a git URL nor an existing directory.`, {
      code: 'bad_request',
      exitCode: 2,
      hint: GIT_URL_HINT,
    });
  }
  const reposReal = await realpath(ctx.workspace.reposDir);
  const inPlace = path.dirname(real) === reposReal;
  const name = inPlace ? path.basename(real) : await freeName(ctx, input.name ?? repoDirName(real), input.name !== undefined);
  if (inPlace) {
    const { rowCount } = await ctx.pool.query('SELECT 1 FROM agent_repos WHERE local_path = $1', [name]);
    if (rowCount !== 0) throw new ConflictError(`"${name}" is already registered.`, { hint: '`docdex repos list` shows it; remove it first to register it again.' });
  } else {
    await symlink(real, path.join(ctx.workspace.reposDir, name), 'dir');
  }
  const defaultBranch = await currentBranch(ctx.workspace, real);
  try {
    const { rows } = await ctx.pool.query<RepoRow>(`INSERT INTO agent_repos (local_path, default_branch, clone_status, is_local) VALUES ($1, $2, 'ready', true) RETURNING *`, [
      name,
      defaultBranch ?? null,
    ]);
    const repo = toRepo(ctx.workspace, rows[0]!);
    return inPlace ? repo : { ...repo, warnings: [externalRepoWarning(ctx.workspace, name, { real, gitRepo: await pathTaken(path.join(real, '.git')) })] };
  } catch (error) {
    if (!inPlace) await rm(path.join(ctx.workspace.reposDir, name), { force: true });
    throw error;
  }
}

/** `file://` of a local git repository for `repos add --clone`; refused for anything git cannot clone. */
async function cloneableLocalUrl(ws: Workspace, source: string): Promise<string> {
  const real = await realpath(path.resolve(source)).catch(() => undefined);
  const cloneable = real !== undefined && ((await pathTaken(path.join(real, '.git'))) || (await isBareRepository(ws, real)));
  if (!cloneable) {
    throw new UserError(`"${source}" is not a git repository, so there is nothing to clone.`, {
      code: 'bad_request',
      exitCode: 2,
      hint: 'Leave out --clone to register the directory as it is, or move it into the workspace repos folder.',
    });
  }
  return pathToFileURL(real).href;
}

async function isBareRepository(ws: Workspace, dir: string): Promise<boolean> {
  if (
    !(await stat(dir).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  )
    return false;
  try {
    return (await git(ws, ['rev-parse', '--is-bare-repository'], { cwd: dir })) === 'true';
  } catch {
    return false;
  }
}

async function currentBranch(ws: Workspace, dir: string): Promise<string | undefined> {
  try {
    return (await git(ws, ['symbolic-ref', '--quiet', '--short', 'HEAD'], { cwd: dir })) || undefined;
  } catch {
    return undefined;
  }
}

const CLONE_TIMEOUT_MS = 30 * 60_000;

/**
 * The clone job. Idempotent: a repo that is no longer `cloning` (or was removed) is left alone, and a
 * directory left by an interrupted attempt is ours to replace. The error text is kept on the record.
 */
export async function runClone(ctx: RepoContext, repoId: number): Promise<Repo | undefined> {
  const { rows } = await ctx.pool.query<RepoRow>(`${SELECT} WHERE id = $1`, [repoId]);
  const row = rows[0];
  if (!row || row.clone_status !== 'cloning' || row.repo_url === null) return row ? toRepo(ctx.workspace, row) : undefined;
  const dest = path.join(ctx.workspace.reposDir, row.local_path);
  await mkdir(ctx.workspace.reposDir, { recursive: true });
  await rm(dest, { recursive: true, force: true });
  const args = ['clone', '--quiet', ...(row.requested_branch ? ['--branch', row.requested_branch] : []), '--', row.repo_url, dest];
  let status: 'ready' | 'error' = 'ready';
  let error: string | null = null;
  let defaultBranch = row.requested_branch;
  try {
    await git(ctx.workspace, args, { timeoutMs: CLONE_TIMEOUT_MS });
    defaultBranch = (await currentBranch(ctx.workspace, dest)) ?? defaultBranch;
  } catch (e) {
    status = 'error';
    error = e instanceof GitError ? (e.stderr || e.message).slice(-4000) : redactCredentials((e as Error).message);
    await rm(dest, { recursive: true, force: true });
  }
  const updated = await ctx.pool.query<RepoRow>(
    `UPDATE agent_repos SET clone_status = $2, clone_error = $3, default_branch = $4, cloned_at = now()
      WHERE id = $1 AND clone_status = 'cloning' RETURNING *`,
    [repoId, status, error, defaultBranch],
  );
  // Removed while cloning: the files are nobody's.
  if (updated.rowCount === 0) {
    await rm(dest, { recursive: true, force: true });
    return undefined;
  }
  return toRepo(ctx.workspace, updated.rows[0]!);
}

/** Waits until a repo leaves `cloning` (or is removed), polling its row. */
export async function waitForClone(ctx: RepoContext, repoId: number, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<Repo> {
  const deadline = Date.now() + (options.timeoutMs ?? CLONE_TIMEOUT_MS + 60_000);
  for (;;) {
    const repo = await getRepoById(ctx, repoId);
    if (repo.cloneStatus !== 'cloning') return repo;
    if (Date.now() > deadline) throw new UserError(`Repo ${repoId} is still cloning.`, { hint: 'Check again with `docdex repos list`.' });
    options.signal?.throwIfAborted();
    await new Promise((r) => setTimeout(r, 300));
  }
}

export interface AddWorktreeInput {
  repo: string | number;
  branch: string;
  name?: string;
}

/**
 * A user worktree of a ready repo, as its own repo record under repos/. The branch is checked out when it
 * exists locally, tracked when it exists on origin, and created from the current HEAD otherwise.
 */
export async function addWorktree(ctx: RepoContext, input: AddWorktreeInput): Promise<Repo> {
  assertBranchName(input.branch);
  const source = await findRepo(ctx, input.repo);
  if (source.isWorktree) {
    throw new UserError('Make worktrees from the original repo, not from a worktree.', {
      code: 'bad_request',
      exitCode: 2,
      hint: `Name the repo it was made from${source.sourcePath ? ` (${path.basename(source.sourcePath)})` : ''}.`,
    });
  }
  if (source.cloneStatus !== 'ready') throw new ConflictError(`Repo "${source.localPath}" is ${source.cloneStatus}, not ready.`, { hint: NOT_READY_HINT });
  if (input.name !== undefined) assertDirName(input.name);
  const name = await freeName(ctx, input.name ?? `${source.localPath}-${input.branch.replace(/[^A-Za-z0-9._-]+/g, '-')}`, input.name !== undefined);
  const dest = path.join(ctx.workspace.reposDir, name);
  const has = async (ref: string) =>
    git(ctx.workspace, ['rev-parse', '--verify', '--quiet', ref], { cwd: source.fullPath }).then(
      () => true,
      () => false,
    );
  let args: string[];
  if (await has(`refs/heads/${input.branch}`)) args = ['worktree', 'add', '--', dest, input.branch];
  else if (await has(`refs/remotes/origin/${input.branch}`)) args = ['worktree', 'add', '--track', '-b', input.branch, '--', dest, `origin/${input.branch}`];
  else args = ['worktree', 'add', '-b', input.branch, '--', dest];
  try {
    await git(ctx.workspace, args, { cwd: source.fullPath });
  } catch (error) {
    throw new UserError(`Could not create the worktree: ${(error as Error).message}`, {
      code: 'git_failed',
      hint: 'A branch can be checked out in one worktree at a time: `git worktree list` in the source repo shows where.',
    });
  }
  const { rows } = await ctx.pool.query<RepoRow>(
    `INSERT INTO agent_repos (repo_url, local_path, source_path, source_repo_id, branch, default_branch, clone_status, is_worktree, is_local)
     VALUES ($1, $2, $3, $4, $5, $6, 'ready', true, $7) RETURNING *`,
    [source.repoUrl ?? null, name, source.fullPath, source.id, input.branch, source.defaultBranch ?? null, source.isLocal ?? false],
  );
  const worktree = toRepo(ctx.workspace, rows[0]!);
  const sourceReal = await realpath(source.fullPath).catch(() => source.fullPath);
  if (path.dirname(sourceReal) === (await realpath(ctx.workspace.reposDir))) return worktree;
  // The worktree's own files are under repos/, but its `.git` points into the source repository, which the
  // microVM does not see: git fails there in every sandboxed command.
  return {
    ...worktree,
    warnings: [
      `The worktree's git data stays in ${path.join(sourceReal, '.git', 'worktrees')}, outside the workspace: with sandbox enforcement on, git fails in agent bash commands in ${dest}. ` +
        `Clone the repository in (\`docdex repos add ${sourceReal} --clone\`) and make the worktree from the clone.`,
    ],
  };
}

/**
 * Removes a repo record and its files: a clone's directory, a worktree through git, and for a local repo
 * only the symlink (never the user's own directory). Refused while worktrees made from it exist.
 */
export async function removeRepo(ctx: RepoContext, idOrName: string | number, options: { keepFiles?: boolean } = {}): Promise<Repo> {
  const repo = await findRepo(ctx, idOrName);
  const { rows: children } = await ctx.pool.query<{ local_path: string }>('SELECT local_path FROM agent_repos WHERE source_repo_id = $1', [repo.id]);
  if (children.length > 0) {
    throw new ConflictError(`Repo "${repo.localPath}" has worktrees: ${children.map((c) => c.local_path).join(', ')}.`, { hint: 'Remove the worktrees first.' });
  }
  if (!options.keepFiles) {
    if (repo.isWorktree && repo.sourcePath) {
      await git(ctx.workspace, ['worktree', 'remove', '--force', '--', repo.fullPath], { cwd: repo.sourcePath }).catch(async () => {
        await rm(repo.fullPath, { recursive: true, force: true });
        await git(ctx.workspace, ['worktree', 'prune'], { cwd: repo.sourcePath }).catch(() => undefined);
      });
    } else if (repo.isLocal) {
      const info = await lstat(repo.fullPath).catch(() => undefined);
      if (info?.isSymbolicLink()) await rm(repo.fullPath, { force: true });
    } else {
      await rm(repo.fullPath, { recursive: true, force: true });
    }
  }
  await ctx.pool.query('DELETE FROM agent_repos WHERE id = $1', [repo.id]);
  return repo;
}

export const GitInfo = z
  .object({
    repoId: z.number(),
    path: z.string(),
    cloneStatus: z.enum(['cloning', 'ready', 'error']),
    cloneError: z.string().optional(),
    branch: z.string().nullable().describe('Current branch; null when HEAD is detached or the repo is not ready'),
    head: z.string().nullable().describe('Commit id of HEAD; null in an empty repo'),
    upstream: z.string().nullable(),
    ahead: z.number().nullable(),
    behind: z.number().nullable(),
    dirty: z.boolean(),
    changedFiles: z.number(),
    untrackedFiles: z.number(),
    remotes: z.array(z.object({ name: z.string(), url: z.string() })),
    lastCommit: z.object({ sha: z.string(), subject: z.string(), author: z.string(), date: z.number() }).nullable(),
    symlinkTarget: z.string().optional().describe('Local repos: the directory the repos/ entry points at'),
  })
  .meta({ id: 'RepoGitInfo' });
export type GitInfo = z.infer<typeof GitInfo>;

/** Branch, upstream, ahead/behind, working-tree state, remotes and the last commit of a repo. */
export async function gitInfo(ctx: RepoContext, repoId: number): Promise<GitInfo> {
  const repo = await getRepoById(ctx, repoId);
  const base: GitInfo = {
    repoId: repo.id,
    path: repo.fullPath,
    cloneStatus: repo.cloneStatus,
    ...(repo.cloneError === undefined ? {} : { cloneError: repo.cloneError }),
    branch: null,
    head: null,
    upstream: null,
    ahead: null,
    behind: null,
    dirty: false,
    changedFiles: 0,
    untrackedFiles: 0,
    remotes: [],
    lastCommit: null,
  };
  if (repo.isLocal) {
    const link = await readlink(repo.fullPath).catch(() => undefined);
    if (link !== undefined) base.symlinkTarget = link;
  }
  if (repo.cloneStatus !== 'ready') return base;
  const status = await git(ctx.workspace, ['status', '--porcelain=v2', '--branch'], { cwd: repo.fullPath });
  for (const line of status.split('\n')) {
    if (line.startsWith('# branch.oid ')) base.head = line.slice(13) === '(initial)' ? null : line.slice(13);
    else if (line.startsWith('# branch.head ')) base.branch = line.slice(14) === '(detached)' ? null : line.slice(14);
    else if (line.startsWith('# branch.upstream ')) base.upstream = line.slice(18);
    else if (line.startsWith('# branch.ab ')) {
      const m = /^\+(\d+) -(\d+)$/.exec(line.slice(12));
      if (m) [base.ahead, base.behind] = [Number(m[1]), Number(m[2])];
    } else if (line.startsWith('? ')) base.untrackedFiles++;
    else if (/^[12u] /.test(line)) base.changedFiles++;
  }
  base.dirty = base.changedFiles + base.untrackedFiles > 0;
  const remotes = await git(ctx.workspace, ['remote', '-v'], { cwd: repo.fullPath });
  const seen = new Set<string>();
  for (const line of remotes.split('\n')) {
    const m = /^(\S+)\s+(\S+)\s+\(fetch\)$/.exec(line);
    if (m && !seen.has(m[1]!)) {
      seen.add(m[1]!);
      base.remotes.push({ name: m[1]!, url: redactCredentials(m[2]!) });
    }
  }
  if (base.head !== null) {
    const log = await git(ctx.workspace, ['log', '-1', '--format=%H%x00%s%x00%an%x00%ct'], { cwd: repo.fullPath });
    const [sha, subject, author, ct] = log.split('\0');
    base.lastCommit = { sha: sha ?? '', subject: subject ?? '', author: author ?? '', date: Number(ct ?? 0) * 1000 };
  }
  return base;
}
