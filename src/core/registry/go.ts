import semver from 'semver';
import { z } from 'zod';
import { ValidationError } from '../errors.js';
import { aliasesFor } from './aliases.js';
import { displayUrl, getRegistryJson, openRegistryUrl, readCapped, unusableAnswer } from './http.js';
import { badRegistryAnswer, packageNotFound, versionNotFound } from './problems.js';
import { normaliseDirectory, normaliseRepositoryUrl } from './repository-url.js';
import type { RepositoryLocation } from './repository-url.js';
import type { PackageRequest, RegistryConfig, RegistryRequestOptions, ResolvedPackage } from './types.js';

/**
 * The GOPROXY protocol (go.dev/ref/mod#goproxy-protocol): `<module>/@v/list` lists a module's tagged
 * versions, `<module>/@v/<version>.info` describes one (`Version`, and for modules fetched since Go 1.19
 * `Origin {VCS, URL, Subdir, Ref, Hash}`: the repository, the module's folder and the tag), `<module>/@latest`
 * the latest. Paths are case-encoded: a capital letter is `!` and the letter in lower case. Without an
 * Origin, the repository is read off the module path where a forge's layout says it (github.com/o/r/sub).
 */

const MAX_DOCUMENT_BYTES = 1024 * 1024;
const MAX_LIST_BYTES = 8 * 1024 * 1024;
// golang.org/x/mod/module.CheckPath, loosely: a dotted host, then path elements.
const MODULE_PATH = /^[a-z0-9-]+(\.[a-z0-9-]+)+(\/[A-Za-z0-9_~+-]+(\.[A-Za-z0-9_~+-]+)*)*$/;
const GO_VERSION = /^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+incompatible)?$/;
const DEFAULT_PROXY = 'https://proxy.golang.org';

const Info = z.object({
  Version: z.string().regex(GO_VERSION),
  Origin: z
    .object({ VCS: z.string().optional().catch(undefined), URL: z.string().optional().catch(undefined), Subdir: z.string().optional().catch(undefined), Ref: z.string().optional().catch(undefined) })
    .optional()
    .catch(undefined),
});

type Info = z.infer<typeof Info>;

/** The protocol's case encoding: `github.com/BurntSushi/toml` is `github.com/!burnt!sushi/toml`. */
export function escapeModulePath(text: string): string {
  return text.replace(/[A-Z]/g, (c) => `!${c.toLowerCase()}`);
}

function assertModulePath(name: string): void {
  if (name.length > 500 || !MODULE_PATH.test(name) || name.split('/').some((e) => e.startsWith('.') || e.endsWith('.'))) {
    throw new ValidationError(`${JSON.stringify(name.slice(0, 80))} is not a Go module path.`, {
      hint: 'Give the module path as go.mod names it, like github.com/spf13/cobra or golang.org/x/sync.',
      details: [{ path: 'name', message: 'not a Go module path' }],
    });
  }
}

function proxyUrl(config: RegistryConfig, module: string, tail: string): string {
  const base = config.registry.goProxyUrl.replace(/\/+$/, '');
  return `${base}/${escapeModulePath(module)}/${tail}`;
}

function parseInfo(json: unknown, url: string): Info {
  const parsed = Info.safeParse(json);
  if (!parsed.success) throw badRegistryAnswer(displayUrl(url), 'the version info has no Version like v1.2.3');
  return parsed.data;
}

async function getInfo(config: RegistryConfig, url: string, options: RegistryRequestOptions): Promise<Info | undefined> {
  const answer = await getRegistryJson(config, url, MAX_DOCUMENT_BYTES, options);
  return answer.json === undefined ? undefined : parseInfo(answer.json, answer.url);
}

/** The tagged versions `@v/list` gives (one a line); undefined when the proxy knows no such module. */
async function listVersions(config: RegistryConfig, module: string, options: RegistryRequestOptions): Promise<string[] | undefined> {
  const url = proxyUrl(config, module, '@v/list');
  const response = await openRegistryUrl(config, url, 'text/plain', options);
  try {
    const ok = response.status >= 200 && response.status < 300;
    // Off the proxy's own origin (a redirect), any other status is the one generic reason (http.ts).
    if (!ok && !response.trusted) throw unusableAnswer(response, `it answered HTTP ${response.status}`);
    if (response.status === 404 || response.status === 410) return undefined;
    if (!ok) throw badRegistryAnswer(displayUrl(url), `it answered HTTP ${response.status}`);
    const text = (await readCapped(response, MAX_LIST_BYTES)).toString('utf8');
    return text
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => GO_VERSION.test(line));
  } finally {
    await response.close();
  }
}

/** Go versions newest first, releases before prereleases. */
function newestGoFirst(versions: string[]): string[] {
  const sorted = [...versions].sort((a, b) => semver.rcompare(a.slice(1), b.slice(1)));
  return [...sorted.filter((v) => semver.prerelease(v.slice(1)) === null), ...sorted.filter((v) => semver.prerelease(v.slice(1)) !== null)];
}

/** The newest listed version a semver range allows (`v1`, `^1.2`, `>=1.4 <2`), or undefined. */
function pickFromRange(versions: string[], range: string): string | undefined {
  const valid = semver.validRange(range.replace(/(^|[\s^~<>=])v(?=\d)/g, '$1'));
  if (valid === null) return undefined;
  const match = semver.maxSatisfying(
    versions.map((v) => v.slice(1)),
    valid,
  );
  return match === null ? undefined : versions.find((v) => v.slice(1) === match);
}

/** An exact version as Go writes it (`v1.2.3`; `1.2.3` is taken for it), or undefined for a range. */
function exactGoVersion(requested: string): string | undefined {
  const withV = requested.startsWith('v') ? requested : `v${requested}`;
  return GO_VERSION.test(withV) ? withV : undefined;
}

async function versionInfo(config: RegistryConfig, request: PackageRequest, options: RegistryRequestOptions): Promise<Info> {
  const module = request.name;
  const requested = request.version === undefined || request.version === 'latest' ? undefined : request.version;
  const exact = requested === undefined ? undefined : exactGoVersion(requested);
  if (requested === undefined) {
    const latest = await getInfo(config, proxyUrl(config, module, '@latest'), options);
    if (latest === undefined) throw packageNotFound('go', module, displayUrl(proxyUrl(config, module, '@latest')));
    return latest;
  }
  const listed = exact === undefined ? await listVersions(config, module, options) : undefined;
  const version = exact ?? (listed === undefined ? undefined : pickFromRange(listed, requested));
  const info = version === undefined ? undefined : await getInfo(config, proxyUrl(config, module, `@v/${escapeModulePath(version)}.info`), options);
  if (info !== undefined) return info;
  const versions = listed ?? (await listVersions(config, module, options));
  if (versions === undefined) throw packageNotFound('go', module, displayUrl(proxyUrl(config, module, '@v/list')));
  throw versionNotFound('go', module, requested, newestGoFirst(versions));
}

/** `sub/v2` → `sub`: a major-version suffix names no folder of its own in the tag prefix. */
function withoutMajorSuffix(segments: string[]): string[] {
  const last = segments.at(-1);
  return last !== undefined && /^v[2-9]\d*$|^v[1-9]\d+$/.test(last) ? segments.slice(0, -1) : segments;
}

/** The repository and the module's folder, read off the module path for forges whose layout is known. */
function repositoryFromPath(module: string): RepositoryLocation | undefined {
  const [host, ...rest] = module.split('/');
  if (host === 'github.com' || host === 'gitlab.com' || host === 'bitbucket.org' || host === 'codeberg.org') {
    if (rest.length < 2) return undefined;
    const directory = normaliseDirectory(withoutMajorSuffix(rest.slice(2)).join('/'));
    const url = normaliseRepositoryUrl(`https://${host}/${rest[0]}/${rest[1]}`)?.url;
    return url === undefined ? undefined : { url, ...(directory === undefined ? {} : { directory }) };
  }
  // gopkg.in/pkg.v3 is github.com/go-pkg/pkg; gopkg.in/user/pkg.v3 is github.com/user/pkg.
  const gopkg = host === 'gopkg.in' ? /^(?:([A-Za-z0-9_-]+)\/)?([A-Za-z0-9_.-]+?)\.v\d+$/.exec(rest.join('/')) : null;
  if (gopkg) return { url: `https://github.com/${gopkg[1] ?? `go-${gopkg[2]}`}/${gopkg[2]}` };
  if (host === 'golang.org' && rest[0] === 'x' && rest[1] !== undefined) return { url: `https://go.googlesource.com/${rest[1]}` };
  return undefined;
}

function repositoryFromOrigin(origin: Info['Origin']): RepositoryLocation | undefined {
  if (origin?.URL === undefined || (origin.VCS !== undefined && origin.VCS !== 'git')) return undefined;
  const location = normaliseRepositoryUrl(origin.URL);
  if (location === undefined) return undefined;
  const directory = normaliseDirectory(origin.Subdir);
  return { url: location.url, ...(directory === undefined ? {} : { directory }) };
}

/** The tag the proxy says the version came from, then `<folder>/<version>` (Go's rule for nested modules). */
function goTagCandidates(version: string, origin: Info['Origin'], repository: RepositoryLocation | undefined): string[] {
  const fromOrigin = origin?.Ref?.startsWith('refs/tags/') ? [origin.Ref.slice('refs/tags/'.length)] : [];
  // A module in a major-version folder (`sub/v2`) is still tagged `sub/v2.x.y`'s way: `sub/` + the version.
  const folder = repository?.directory === undefined ? [] : withoutMajorSuffix(repository.directory.split('/'));
  const prefix = folder.length === 0 ? undefined : folder.join('/');
  // `+incompatible` marks a v2+ module without a /v2 path in go.mod; its tag is the plain version.
  const tag = version.replace(/\+incompatible$/, '');
  return [...new Set([...fromOrigin, ...(prefix === undefined ? [] : [`${prefix}/${tag}`]), tag])];
}

/**
 * Reads a `.info` answer for module `name` into a resolved package. `publicProxy`: the answer came from
 * proxy.golang.org, so pkg.go.dev documents the module (a private proxy's modules are not there).
 */
export function readGoInfo(json: unknown, name: string, url: string, publicProxy: boolean): ResolvedPackage {
  const info = parseInfo(json, url);
  const repository = repositoryFromOrigin(info.Origin) ?? repositoryFromPath(name);
  return {
    ecosystem: 'go',
    name,
    version: info.Version,
    aliases: aliasesFor(name, repository),
    ...(repository === undefined ? {} : { repository }),
    ...(publicProxy ? { documentation: `https://pkg.go.dev/${name}@${info.Version}` } : {}),
    tagCandidates: goTagCandidates(info.Version, info.Origin, repository),
  };
}

/** Resolves a Go module through the configured GOPROXY endpoint (GO_PROXY_URL). */
export async function resolveGoModule(config: RegistryConfig, request: PackageRequest, options: RegistryRequestOptions = {}): Promise<ResolvedPackage> {
  assertModulePath(request.name);
  const info = await versionInfo(config, request, options);
  return readGoInfo(info, request.name, proxyUrl(config, request.name, '@latest'), config.registry.goProxyUrl.replace(/\/+$/, '') === DEFAULT_PROXY);
}
