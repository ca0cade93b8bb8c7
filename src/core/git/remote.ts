import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { UserError, ValidationError } from '../errors.js';

/**
 * A repository's remote, parsed and checked before git ever sees it. Forms: `https://host/org/repo(.git)`
 * (and http), `ssh://[user@]host[:port]/path`, scp-like `git@host:org/repo.git`, `file:///abs/path`, and a
 * local path. Everything but http(s) reads from this machine or through the user's own ssh setup, so those are
 * for the CLI only (`local`).
 */

export type RemoteKind = 'https' | 'http' | 'ssh' | 'file';

export interface Remote {
  kind: RemoteKind;
  /** What git is given: credentials never included. */
  url: string;
  /** Host name without brackets (http, https, ssh); '' for file. */
  host: string;
  /** Port for http(s): the URL's or the scheme's default. */
  port: number;
  /** The repository's path on its host (no leading slash, no `.git`), for forge links. */
  repoPath: string;
  /** `acme` for `…/acme.git`: the default library name. */
  name: string;
}

const MAX_REMOTE_LENGTH = 2000;
// scp-like syntax: [user@]host:path, with no scheme and no slash before the colon.
const SCP_LIKE = /^(?:([A-Za-z0-9._~-]+)@)?([A-Za-z0-9.-]+):(?!\/\/)([^\s]+)$/;

function refused(message: string): UserError {
  return new UserError(message, { code: 'git_remote_refused' });
}

function repoNameOf(repoPath: string): string {
  const last = repoPath.replace(/\/+$/, '').split('/').pop() ?? '';
  return last.replace(/\.git$/i, '') || 'repository';
}

function trimRepoPath(pathname: string): string {
  return pathname
    .replace(/^\/+/, '')
    .replace(/\/+$/, '')
    .replace(/\.git$/i, '');
}

/** A URL path with its %-escapes decoded; a malformed escape (`%` not followed by two hex digits) is bad input. */
function decodedPath(pathname: string): string {
  try {
    return decodeURIComponent(pathname);
  } catch {
    throw new ValidationError(`The repository path ${JSON.stringify(pathname.slice(0, 200))} has a malformed %-escape.`, { hint: 'Write % as %25 in a URL.' });
  }
}

function parseUrlRemote(text: string): Remote {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ValidationError(`${JSON.stringify(text.slice(0, 200))} is not a repository URL.`, { hint: 'Give https://host/org/repo, git@host:org/repo.git, file:///path or a local path.' });
  }
  const scheme = url.protocol.slice(0, -1);
  if (scheme === 'file') {
    if (url.host !== '') throw new ValidationError('A file:// remote must be a local absolute path (file:///path).');
    return { kind: 'file', url: url.href, host: '', port: 0, repoPath: trimRepoPath(decodedPath(url.pathname)), name: repoNameOf(decodedPath(url.pathname)) };
  }
  if (scheme !== 'https' && scheme !== 'http' && scheme !== 'ssh') {
    throw refused(`Remotes of scheme "${scheme}" are not supported.`);
  }
  if (url.search !== '' || url.hash !== '') throw new ValidationError('A repository URL has no query or fragment.');
  const repoPath = trimRepoPath(decodedPath(url.pathname));
  if (repoPath === '') throw new ValidationError(`${url.host}: the URL names no repository.`);
  // Credentials in the URL would end up in argv, logs and the stored origin: store a credential instead.
  if (scheme !== 'ssh' && (url.username !== '' || url.password !== '')) {
    throw new ValidationError('Put no credentials in the repository URL.', { hint: 'Store a token for the host: `docdex manager git-credentials add --host HOST`.' });
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = url.port === '' ? (scheme === 'https' ? 443 : scheme === 'http' ? 80 : 22) : Number(url.port);
  const cleaned = new URL(url.href);
  cleaned.password = '';
  return { kind: scheme, url: cleaned.href, host, port, repoPath, name: repoNameOf(repoPath) };
}

/** Parses a remote as given by a user. Throws a ValidationError (or git_remote_refused) for anything else. */
export function parseRemote(input: string): Remote {
  const text = input.trim();
  if (text === '') throw new ValidationError('The repository is empty.');
  if (text.length > MAX_REMOTE_LENGTH) throw new ValidationError(`The repository is longer than ${MAX_REMOTE_LENGTH} characters.`);
  // A remote starting with "-" would be read by git as an option; control characters have no place in one.
  if (text.startsWith('-') || hasControlCharacter(text)) throw new ValidationError('The repository contains characters a remote cannot have.');
  // `transport::address` runs a remote helper (ext:: runs a command): never.
  if (/^[a-z][a-z0-9+.-]*::/i.test(text)) throw refused('Remote helpers (transport::address) are not supported.');
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return parseUrlRemote(text);
  const scp = SCP_LIKE.exec(text);
  if (scp && !text.startsWith('/') && !text.startsWith('.')) {
    const [, user, host, repo] = scp as unknown as [string, string | undefined, string, string];
    const repoPath = trimRepoPath(repo);
    if (repoPath === '') throw new ValidationError(`${host}: the remote names no repository.`);
    return { kind: 'ssh', url: `ssh://${user ? `${user}@` : ''}${host}/${repo.replace(/^\/+/, '')}`, host, port: 22, repoPath, name: repoNameOf(repoPath) };
  }
  const absolute = path.resolve(text);
  return { kind: 'file', url: pathToFileURL(absolute).href, host: '', port: 0, repoPath: trimRepoPath(absolute), name: repoNameOf(absolute) };
}

/** Local paths, file:// and ssh reach what this machine's user can: refused unless the caller is the local CLI. */
export function assertRemoteAllowed(remote: Remote, local: boolean): void {
  if (local) return;
  if (remote.kind === 'file') throw refused('A local repository (a path or file://) can only be indexed from the CLI on its machine.');
  if (remote.kind === 'ssh') throw refused("ssh remotes use the local user's keys: they can only be indexed from the CLI.");
}

/** True when `text` has a control character (C0 or DEL): no name, path or remote git is given may have one. */
export function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
