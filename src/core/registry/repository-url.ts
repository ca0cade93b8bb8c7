/**
 * Repository URLs as registries spell them (npm's `git+https://`, `git://`, `git+ssh://git@host/…`, scp-like
 * `git@host:o/r.git`, `github:o/r` and bare `o/r` shorthands; PyPI's web links to `…/tree/main/sub`) turned
 * into one https clone URL, plus the package's folder when the link names one. Credentials never survive.
 */

export interface RepositoryLocation {
  url: string;
  directory?: string;
}

const SHORTHAND_HOSTS: Record<string, string> = { github: 'github.com', gitlab: 'gitlab.com', bitbucket: 'bitbucket.org' };
// Forges whose repository is always the first two path segments, and whose web pages are never a docs site.
const TWO_SEGMENT_FORGES = new Set(['github.com', 'bitbucket.org', 'codeberg.org']);
const FORGES = new Set([...TWO_SEGMENT_FORGES, 'gitlab.com']);
const SEGMENT = /^[A-Za-z0-9_.-]+$/;
const MAX_URL_LENGTH = 2048;

/** A relative folder inside a repository, as `packages/core`; undefined for anything that could leave it. */
export function normaliseDirectory(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const parts = raw
    .replace(/\\/g, '/')
    .split('/')
    .filter((p) => p !== '' && p !== '.');
  if (raw.startsWith('/') || parts.length === 0 || parts.some((p) => p === '..' || !/^[^\p{Cc}:*?"<>|]+$/u.test(p))) return undefined;
  return parts.join('/');
}

/** `github:o/r`, `gitlab:o/r`, `bitbucket:o/r` and npm's bare `o/r` mean that forge's repository. */
function expandShorthand(raw: string): string | undefined {
  const match = /^(?:(github|gitlab|bitbucket):)?([A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+)(?:#.*)?$/.exec(raw);
  if (!match) return undefined;
  return `https://${SHORTHAND_HOSTS[match[1] ?? 'github']}/${match[2]}`;
}

/** scp-like `git@host:o/r.git` → `ssh://git@host/o/r.git`, so the URL parser can read it. */
function scpToUrl(raw: string): string | undefined {
  const match = /^[A-Za-z0-9_.-]+@([A-Za-z0-9.-]+):(?!\/\/)(.+)$/.exec(raw);
  return match ? `ssh://git@${match[1]}/${match[2]}` : undefined;
}

/** `github.com/o/r` typed without a scheme. */
function forgeWithoutScheme(raw: string): string | undefined {
  const host = raw
    .split('/')[0]!
    .toLowerCase()
    .replace(/^www\./, '');
  return FORGES.has(host) ? `https://${raw}` : undefined;
}

function parseAnyUrl(raw: string): URL | undefined {
  const text = raw.trim();
  if (text.length === 0 || text.length > MAX_URL_LENGTH) return undefined;
  const candidate = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : (scpToUrl(text) ?? expandShorthand(text) ?? forgeWithoutScheme(text));
  if (candidate === undefined) return undefined;
  try {
    return new URL(candidate);
  } catch {
    return undefined;
  }
}

/** The repository path and any folder a web link names (`/o/r/tree/<ref>/sub`, GitLab's `/-/tree/<ref>/sub`). */
function splitRepositoryPath(host: string, segments: string[]): { repo: string[]; directory?: string } | undefined {
  const dash = segments.indexOf('-');
  const webAt = TWO_SEGMENT_FORGES.has(host) ? 2 : dash >= 0 ? dash : segments.length;
  const repo = segments.slice(0, webAt);
  if (repo.length < (FORGES.has(host) ? 2 : 1)) return undefined;
  const rest = segments.slice(webAt + (dash === webAt ? 1 : 0));
  const directory = ['tree', 'blob', 'src'].includes(rest[0] ?? '') ? normaliseDirectory(rest.slice(2).join('/')) : undefined;
  return { repo, ...(directory === undefined ? {} : { directory }) };
}

/** An https (or, off the public forges, http) clone URL for a repository reference; undefined when it is none. */
export function normaliseRepositoryUrl(raw: string): RepositoryLocation | undefined {
  const url = parseAnyUrl(raw);
  if (!url) return undefined;
  const scheme = url.protocol.replace(/:$/, '').replace(/^git\+/, '');
  if (!['https', 'http', 'git', 'ssh'].includes(scheme)) return undefined;
  const host = url.hostname.toLowerCase().replace(/^www\./, '');
  if (host === '') return undefined;
  const segments = url.pathname.split('/').filter((s) => s !== '');
  const split = splitRepositoryPath(host, segments);
  if (!split) return undefined;
  const repo = split.repo.map((s, i) => (i === split.repo.length - 1 ? s.replace(/\.git$/i, '') : s));
  if (repo.some((s) => !SEGMENT.test(s) || s === '.' || s === '..' || s === '-')) return undefined;
  // Forges serve https; self-hosted servers keep their scheme and port (ssh and git ports mean nothing to https).
  const keepHttp = scheme === 'http' && !FORGES.has(host);
  const port = (scheme === 'http' || scheme === 'https') && url.port !== '' ? `:${url.port}` : '';
  const out: RepositoryLocation = { url: `${keepHttp ? 'http' : 'https'}://${host}${port}/${repo.join('/')}` };
  if (split.directory !== undefined) out.directory = split.directory;
  return out;
}

/** The repository's own name (`r` for `https://host/o/r`). */
export function repositoryName(repositoryUrl: string): string {
  return (
    new URL(repositoryUrl).pathname
      .split('/')
      .filter((s) => s !== '')
      .pop() ?? ''
  );
}

/** An http(s) URL without credentials, or undefined. */
export function webUrl(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || raw.length > MAX_URL_LENGTH) return undefined;
  try {
    const url = new URL(raw.trim());
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
    url.username = '';
    url.password = '';
    return url.toString();
  } catch {
    return undefined;
  }
}

// Package pages of the registries themselves: a listing, never the docs.
const REGISTRY_PAGES = /^(?:www\.)?(?:npmjs\.com|npmjs\.org|pypi\.org|pypi\.python\.org|crates\.io|lib\.rs)$/;

/**
 * A page worth crawling as the package's docs: not a forge's web view of a repository (github.com/o/r,
 * `#readme`, `/tree/…`), not the repository's own URL, not a registry's package page.
 */
export function docsSiteUrl(raw: unknown, repository: RepositoryLocation | undefined): string | undefined {
  const url = webUrl(raw);
  if (url === undefined) return undefined;
  const host = new URL(url).hostname.toLowerCase().replace(/^www\./, '');
  if (FORGES.has(host) || REGISTRY_PAGES.test(host)) return undefined;
  const asRepository = normaliseRepositoryUrl(url);
  if (repository && asRepository && asRepository.url.replace(/^http:/, 'https:') === repository.url.replace(/^http:/, 'https:')) return undefined;
  return url;
}
