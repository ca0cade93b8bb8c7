import { z } from 'zod';
import { ValidationError } from '../errors.js';
import { aliasesFor } from './aliases.js';
import { displayUrl, getRegistryJson } from './http.js';
import { npmRegistryBase } from './npm-registry-url.js';
import { badRegistryAnswer, packageNotFound, versionNotFound } from './problems.js';
import { docsSiteUrl, normaliseDirectory, normaliseRepositoryUrl, webUrl } from './repository-url.js';
import type { RepositoryLocation } from './repository-url.js';
import { tagCandidates } from './tags.js';
import type { PackageRequest, RegistryConfig, RegistryRequestOptions, ResolvedPackage } from './types.js';
import { newestFirst, pickSemverVersion } from './versions.js';

/**
 * npm: the full package document (`GET <registry>/<name>`; the abbreviated install document lacks
 * `repository` and `homepage`). Only the chosen version's manifest is read field by field; the document's
 * other versions are only keys.
 */

// Full documents of packages with thousands of releases run to tens of MiB.
const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024;
// npm's own rule, with capitals allowed: packages from before the rule keep them (JSONStream).
const NPM_NAME = /^(?:@[A-Za-z0-9~-][A-Za-z0-9._~-]*\/)?[A-Za-z0-9~-][A-Za-z0-9._~-]*$/;

const PackageDocument = z.object({
  name: z.string().optional().catch(undefined),
  'dist-tags': z.record(z.string(), z.string()).optional().catch(undefined),
  versions: z.record(z.string(), z.unknown()).optional(),
});

const VersionManifest = z.object({
  repository: z
    .union([z.string(), z.object({ url: z.string().optional().catch(undefined), directory: z.string().optional().catch(undefined) })])
    .optional()
    .catch(undefined),
  homepage: z.unknown().optional(),
  dist: z
    .object({ tarball: z.string().optional().catch(undefined) })
    .optional()
    .catch(undefined),
});

function assertNpmName(name: string): void {
  if (name.length > 214 || !NPM_NAME.test(name)) {
    throw new ValidationError(`${JSON.stringify(name.slice(0, 220))} is not an npm package name.`, {
      hint: 'npm names look like react or @scope/name.',
      details: [{ path: 'name', message: 'not an npm package name' }],
    });
  }
}

/** `@scope/pkg` travels as `@scope%2fpkg`, as the npm client sends it. */
function documentUrl(base: string, name: string): string {
  return new URL(name.replace('/', '%2f'), base).toString();
}

/** The manifest's repository: a string (any spelling npm accepts) or `{ type, url, directory }`. */
export function npmRepository(raw: z.infer<typeof VersionManifest>['repository']): RepositoryLocation | undefined {
  const text = typeof raw === 'string' ? raw : raw?.url;
  const location = text === undefined ? undefined : normaliseRepositoryUrl(text);
  if (!location) return undefined;
  const directory = typeof raw === 'object' ? normaliseDirectory(raw.directory) : undefined;
  return directory === undefined ? location : { ...location, directory };
}

function chooseVersion(document: z.infer<typeof PackageDocument>, request: PackageRequest, name: string): string {
  const published = Object.keys(document.versions ?? {});
  const tags = document['dist-tags'] ?? {};
  const requested = request.version;
  const tagged = requested !== undefined && Object.hasOwn(tags, requested) ? tags[requested] : undefined;
  const version = tagged !== undefined && published.includes(tagged) ? tagged : pickSemverVersion(published, requested, tags.latest);
  if (version === undefined) throw versionNotFound('npm', name, requested ?? 'latest', newestFirst(published));
  return version;
}

/** Reads an npm package document (already fetched) into a resolved package. Throws a UserError for anything else. */
export function readNpmDocument(json: unknown, request: PackageRequest, url: string): ResolvedPackage {
  const parsed = PackageDocument.safeParse(json);
  if (!parsed.success) throw badRegistryAnswer(displayUrl(url), 'the package document has no versions object');
  const name = parsed.data.name ?? request.name;
  if (Object.keys(parsed.data.versions ?? {}).length === 0) throw packageNotFound('npm', request.name, displayUrl(url));
  const version = chooseVersion(parsed.data, request, name);
  const manifest = VersionManifest.safeParse(parsed.data.versions![version]);
  const fields = manifest.success ? manifest.data : {};
  const repository = npmRepository(fields.repository);
  const homepage = docsSiteUrl(fields.homepage, repository);
  const tarball = webUrl(fields.dist?.tarball);
  return {
    ecosystem: 'npm',
    name,
    version,
    aliases: aliasesFor(name, repository),
    ...(repository === undefined ? {} : { repository }),
    ...(homepage === undefined ? {} : { homepage }),
    ...(tarball === undefined ? {} : { tarball }),
    tagCandidates: tagCandidates(name, version),
  };
}

export async function resolveNpmPackage(config: RegistryConfig, request: PackageRequest, options: RegistryRequestOptions = {}): Promise<ResolvedPackage> {
  assertNpmName(request.name);
  const url = documentUrl(await npmRegistryBase(config), request.name);
  const answer = await getRegistryJson(config, url, MAX_DOCUMENT_BYTES, options);
  if (answer.json === undefined) throw packageNotFound('npm', request.name, displayUrl(url));
  return readNpmDocument(answer.json, request, answer.url);
}
