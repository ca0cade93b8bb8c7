import fs from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../errors.js';
import { scrubSecret } from './access.js';
import type { GitAccess } from './access.js';
import type { Remote } from './remote.js';
import { directoryBytes, runGit } from './run.js';
import type { GitContext, GitResult } from './run.js';
import { sparsePatterns } from './select.js';
import type { Selection, TrackedFile } from './select.js';

/**
 * A shallow checkout of one ref into a private temp directory: `ls-remote` first (so an unknown ref, a missing
 * repository or a refused login is a clear error before anything is fetched), then `init` + a sparse checkout of
 * the docs paths + `fetch --depth 1 --filter=blob:none` of exactly that ref, tag or commit, and `checkout`.
 */

export type RefKind = 'tag' | 'branch' | 'commit';

export interface ResolvedRef {
  kind: RefKind;
  /** The tag or branch name, or the full commit hash. */
  name: string;
  /** What is fetched: refs/tags/…, refs/heads/…, HEAD or the commit hash. */
  fetch: string;
}

export interface Checkout {
  /** The work tree. */
  dir: string;
  commit: string;
  ref: ResolvedRef;
  /** Every tracked regular file with its blob id. */
  tracked: TrackedFile[];
}

export interface CheckoutRequest {
  remote: Remote;
  ref?: string;
  selection: Selection;
  maxBytes: number;
  access: GitAccess;
}

const FULL_SHA = /^[0-9a-f]{40}$/;
const SHORT_SHA = /^[0-9a-f]{4,39}$/;

export function contextFor(tmp: string, remote: Remote, access: GitAccess, maxBytes: number): GitContext {
  return { tmp, allowFile: remote.kind === 'file', settings: access.settings, env: access.env, maxBytes };
}

/** The error for a failed git command: what the user can do about it, git's own words redacted. */
export function gitFailure(result: GitResult, remote: Remote, access: GitAccess, maxBytes: number): UserError {
  const all = scrubSecret(result.stderr, access.secret).trim();
  const said =
    all
      .split('\n')
      .filter((line) => line.startsWith('fatal:') || line.startsWith('error:'))
      .slice(-2)
      .join(' ')
      .slice(0, 500) || all.slice(-500);
  const where = remote.url;
  if (result.oversize) {
    return new UserError(`${where} is larger than the ${Math.round(maxBytes / 1024 / 1024)} MB limit for a repository.`, { code: 'git_repo_too_large' });
  }
  if (/could not read (Username|Password)|Authentication failed|terminal prompts disabled|HTTP 40[13]|Permission denied \(publickey|Invalid username or password/i.test(all)) {
    const stored = access.secret === undefined ? 'and no credential is stored for its host' : 'and the stored credential for its host was refused';
    return new UserError(`${where} needs authentication ${stored}.`, { code: 'git_auth_required' });
  }
  if (/not found|does not appear to be a git repository|not a git repository|No such file or directory|HTTP 404|does not exist/i.test(all)) {
    return new UserError(`No repository at ${where}.`, { code: 'git_repo_not_found' });
  }
  if (result.timedOut) return new UserError(`git timed out reading ${where}.`, { code: 'git_failed' });
  return new UserError(`git could not read ${where}: ${said || `exit code ${result.exitCode}`}`, { code: 'git_failed' });
}

interface RemoteRefs {
  refs: Map<string, string>;
  /** The default branch (HEAD's symref target), when the server says. */
  head?: string;
}

function parseLsRemote(stdout: string): RemoteRefs {
  const refs = new Map<string, string>();
  let head: string | undefined;
  for (const line of stdout.split('\n')) {
    const symref = /^ref: refs\/heads\/(\S+)\tHEAD$/.exec(line);
    if (symref) head = symref[1];
    const entry = /^([0-9a-f]{40,64})\t(\S+)$/.exec(line);
    if (entry) refs.set(entry[2]!, entry[1]!);
  }
  return head === undefined ? { refs } : { refs, head };
}

export function resolveRef(remoteRefs: RemoteRefs, ref: string | undefined, remote: Remote): ResolvedRef {
  // `@HEAD` names what git itself calls HEAD on that repository: its default branch (a local clone's current one).
  if (ref === undefined || ref === 'HEAD') {
    return remoteRefs.head === undefined ? { kind: 'branch', name: 'HEAD', fetch: 'HEAD' } : { kind: 'branch', name: remoteRefs.head, fetch: `refs/heads/${remoteRefs.head}` };
  }
  if (remoteRefs.refs.has(`refs/tags/${ref}`)) return { kind: 'tag', name: ref, fetch: `refs/tags/${ref}` };
  if (remoteRefs.refs.has(`refs/heads/${ref}`)) return { kind: 'branch', name: ref, fetch: `refs/heads/${ref}` };
  const lower = ref.toLowerCase();
  if (FULL_SHA.test(lower)) return { kind: 'commit', name: lower, fetch: lower };
  const hint = SHORT_SHA.test(lower) ? 'A commit must be given as its full 40-character hash.' : 'Give a tag, a branch or a full commit hash of the repository.';
  throw new UserError(`${remote.url} has no tag or branch "${ref}".`, { code: 'git_ref_not_found', hint });
}

/** Tags and branches matching the ref, and the default branch: one round trip before anything is fetched. */
export async function listRemoteRefs(context: GitContext, request: Pick<CheckoutRequest, 'remote' | 'access' | 'maxBytes'>, patterns: string[], extra: string[] = []): Promise<RemoteRefs> {
  const result = await runGit(context, ['ls-remote', ...extra, request.remote.url, ...patterns], context.tmp);
  if (result.exitCode !== 0) throw gitFailure(result, request.remote, request.access, request.maxBytes);
  return parseLsRemote(result.stdout);
}

async function step(context: GitContext, request: CheckoutRequest, dir: string, args: string[]): Promise<string> {
  const result = await runGit(context, args, dir);
  if (result.exitCode !== 0) throw gitFailure(result, request.remote, request.access, request.maxBytes);
  return result.stdout;
}

function parseLsFiles(stdout: string): TrackedFile[] {
  const files: TrackedFile[] = [];
  for (const record of stdout.split('\0')) {
    const match = /^(\d{6}) ([0-9a-f]{40,64}) \d\t(.+)$/s.exec(record);
    // Regular files only: symlinks could point out of the work tree, and submodules are other repositories.
    if (match && (match[1] === '100644' || match[1] === '100755')) files.push({ path: match[3]!, blob: match[2]! });
  }
  return files;
}

/** Checks the ref out under `tmp/repo`; throws a UserError for every failure. The caller removes `tmp`. */
export async function checkoutRef(tmp: string, request: CheckoutRequest): Promise<Checkout> {
  const context = contextFor(tmp, request.remote, request.access, request.maxBytes);
  const patterns = request.ref === undefined ? ['HEAD'] : ['HEAD', `refs/tags/${request.ref}`, `refs/heads/${request.ref}`];
  const ref = resolveRef(await listRemoteRefs(context, request, patterns, ['--symref']), request.ref, request.remote);
  const dir = path.join(tmp, 'repo');
  await fs.mkdir(dir);
  await step(context, request, dir, ['init', '-q']);
  await step(context, request, dir, ['remote', 'add', 'origin', request.remote.url]);
  await step(context, request, dir, ['sparse-checkout', 'set', '--no-cone', ...sparsePatterns(request.selection)]);
  const fetched = await runGit(context, ['fetch', '-q', '--depth', '1', '--no-tags', '--no-recurse-submodules', '--filter=blob:none', 'origin', ref.fetch], dir);
  if (fetched.exitCode !== 0) {
    if (ref.kind === 'commit' && !fetched.oversize && !/HTTP 40[13]|Authentication/i.test(fetched.stderr)) {
      throw new UserError(`${request.remote.url} has no commit ${ref.name}.`, { code: 'git_ref_not_found' });
    }
    throw gitFailure(fetched, request.remote, request.access, request.maxBytes);
  }
  await step(context, request, dir, ['checkout', '-q', '--detach', 'FETCH_HEAD']);
  if ((await directoryBytes(tmp)) > request.maxBytes) {
    throw gitFailure({ stdout: '', stderr: '', exitCode: 1, oversize: true, timedOut: false }, request.remote, request.access, request.maxBytes);
  }
  const commit = (await step(context, request, dir, ['rev-parse', 'HEAD'])).trim();
  const tracked = parseLsFiles(await step(context, request, dir, ['ls-files', '-s', '-z']));
  return { dir, commit, ref, tracked };
}

/** A tracked path as a non-cone sparse-checkout pattern matching exactly it (gitignore syntax, anchored). */
function exactPattern(filePath: string): string {
  return `/${filePath.replace(/[\\*?[\]!#]/g, '\\$&').replace(/ +$/, (spaces) => spaces.replaceAll(' ', '\\ '))}`;
}

/**
 * Adds tracked files outside the docs paths to the checkout (an include names them): their blobs are
 * fetched from the same commit by the partial clone's lazy fetch, within the size watch of `--max-repo-mb`.
 * False when git failed or the repository grew past the limit: the caller keeps those includes unresolved.
 */
export async function checkoutMore(tmp: string, request: Pick<CheckoutRequest, 'remote' | 'access' | 'maxBytes'>, dir: string, paths: readonly string[]): Promise<boolean> {
  const patterns = paths.filter((p) => !p.includes('\n')).map(exactPattern);
  if (patterns.length === 0) return true;
  const context = contextFor(tmp, request.remote, request.access, request.maxBytes);
  const result = await runGit(context, ['sparse-checkout', 'add', '--stdin'], dir, `${patterns.join('\n')}\n`);
  if (result.exitCode !== 0 || result.oversize) return false;
  return (await directoryBytes(tmp)) <= request.maxBytes;
}
