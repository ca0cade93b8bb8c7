import { statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Remote } from './remote.js';

/**
 * The URL a document from a repository is stored under: the file at that commit on the forge's web view when
 * the host is a known forge, else `<remote>@<commit>/<path>`. The commit sits before the path so that relative
 * links between documents (`../guide.md`) resolve to the same commit; the same file at the same commit always
 * gets the same URL.
 */

const FORGES: Record<string, (repo: string, commit: string, file: string) => string> = {
  'github.com': (repo, commit, file) => `https://github.com/${repo}/blob/${commit}/${file}`,
  'gitlab.com': (repo, commit, file) => `https://gitlab.com/${repo}/-/blob/${commit}/${file}`,
  'codeberg.org': (repo, commit, file) => `https://codeberg.org/${repo}/src/commit/${commit}/${file}`,
  'bitbucket.org': (repo, commit, file) => `https://bitbucket.org/${repo}/src/${commit}/${file}`,
};

function encodePath(filePath: string): string {
  return filePath.split('/').map(encodeURIComponent).join('/');
}

export function fileUrl(remote: Remote, commit: string, filePath: string): string {
  const host = remote.host.toLowerCase();
  const forge = remote.kind === 'file' ? undefined : FORGES[host];
  const file = encodePath(filePath);
  if (forge) return forge(remote.repoPath.split('/').map(encodeURIComponent).join('/'), commit, file);
  return `${remote.url.replace(/\/+$/, '')}@${commit}/${file}`;
}

// `<remote>@<commit>/<path>`: fileUrl's form for a host with no known web view (a local repository's `file://`).
const IDENTITY = /^(.*)@([0-9a-f]{40}|[0-9a-f]{64})\/(.+)$/;

function existingFileUrl(filePath: string): string | undefined {
  try {
    return statSync(filePath).isFile() ? pathToFileURL(filePath).href : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A link that opens a stored document, for results to carry beside their `source_url` (which is an identity:
 * a local repository's document is `file:///…/mylib@<commit>/docs/x.md`, which nothing opens; issue #49).
 * - a web page, a forge's file view: the URL itself;
 * - a file of a local repository: the file in that repository on disk, when it is still there (its working
 *   tree; it may have moved on since that commit), as a `file://` URL without the anchor, which a terminal opens;
 * - an uploaded file: that file, when it is still there;
 * - anything else (a repository on a host with no known web view, an upload of text): none.
 * Read on the machine that answers, so a `file://` link names its disk.
 */
export function openableLink(sourceUrl: string): string | undefined {
  let url: URL;
  try {
    url = new URL(sourceUrl);
  } catch {
    return undefined;
  }
  if (url.protocol === 'http:' || url.protocol === 'https:') return IDENTITY.test(url.pathname) ? undefined : sourceUrl;
  if (url.protocol !== 'file:' || url.host !== '') return undefined;
  url.hash = '';
  url.search = '';
  let filePath: string;
  try {
    filePath = fileURLToPath(url);
  } catch {
    return undefined;
  }
  const identity = IDENTITY.exec(filePath);
  if (!identity) return existingFileUrl(filePath);
  // The URL parser has resolved any `..`: the path is the one file the stored URL names.
  const [, repository, , inRepository] = identity;
  return existingFileUrl(path.join(repository!, inRepository!));
}
