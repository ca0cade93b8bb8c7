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
