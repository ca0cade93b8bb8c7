import { z } from 'zod';
import { ValidationError } from '../errors.js';
import { aliasesFor } from './aliases.js';
import { displayUrl, getRegistryJson } from './http.js';
import { newestPep440First, parsePep440, pickPep440Version } from './pep440.js';
import { badRegistryAnswer, packageNotFound, versionNotFound } from './problems.js';
import { docsSiteUrl, normaliseRepositoryUrl } from './repository-url.js';
import type { RepositoryLocation } from './repository-url.js';
import { tagCandidates } from './tags.js';
import type { PackageRequest, RegistryConfig, RegistryRequestOptions, ResolvedPackage } from './types.js';

/**
 * PyPI's JSON API: `/pypi/<name>/<version>/json` for a version, `/pypi/<name>/json` for the project (its
 * `info` is the latest release; `releases` lists every version with its files, which say when one is yanked).
 */

const MAX_DOCUMENT_BYTES = 32 * 1024 * 1024;
// PEP 508's name rule.
const PYPI_NAME = /^([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9])$/;

// project_urls keys are free text: compared lowercased with everything but letters and digits removed.
const DOCUMENTATION_KEYS = ['documentation', 'docs', 'documentationurl', 'doc', 'onlinedocumentation', 'readthedocs', 'apireference', 'reference'];
const SOURCE_KEYS = ['source', 'sourcecode', 'repository', 'sourcerepository', 'github', 'gitlab', 'code', 'git', 'repo', 'scm'];
const HOMEPAGE_KEYS = ['homepage', 'home', 'website'];

const optionalText = z.string().nullable().optional().catch(undefined);

const Release = z.object({
  info: z.object({
    name: z.string().min(1),
    version: z.string().min(1),
    home_page: optionalText,
    docs_url: optionalText,
    project_urls: z.record(z.string(), z.string().nullable()).nullable().optional().catch(undefined),
  }),
});

const Project = z.object({
  releases: z.record(z.string(), z.array(z.object({ yanked: z.boolean().optional().catch(undefined) }).catch({}))).catch({}),
});

/** PEP 503: lowercase, every run of `-`, `_` and `.` one `-`. */
export function normalisePypiName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

function assertPypiName(name: string): void {
  if (name.length > 200 || !PYPI_NAME.test(name)) {
    throw new ValidationError(`${JSON.stringify(name.slice(0, 210))} is not a PyPI project name.`, {
      hint: 'PyPI names are letters, digits, and . _ - inside, like requests or typing-extensions.',
      details: [{ path: 'name', message: 'not a PyPI project name' }],
    });
  }
}

function projectUrl(config: RegistryConfig, name: string, version?: string): string {
  const base = config.registry.pypiUrl.endsWith('/') ? config.registry.pypiUrl : `${config.registry.pypiUrl}/`;
  const path = version === undefined ? `pypi/${name}/json` : `pypi/${name}/${encodeURIComponent(version)}/json`;
  return new URL(path, base).toString();
}

function urlsByKey(projectUrls: Record<string, string | null> | null | undefined): Map<string, string> {
  const byKey = new Map<string, string>();
  for (const [key, value] of Object.entries(projectUrls ?? {})) {
    const folded = key.toLowerCase().replace(/[^a-z0-9]/g, '');
    if (value && !byKey.has(folded)) byKey.set(folded, value);
  }
  return byKey;
}

function firstOf(byKey: Map<string, string>, keys: string[]): string[] {
  return keys.map((k) => byKey.get(k)).filter((v): v is string => v !== undefined);
}

function findRepository(byKey: Map<string, string>, homepages: string[]): RepositoryLocation | undefined {
  for (const candidate of firstOf(byKey, SOURCE_KEYS)) {
    const location = normaliseRepositoryUrl(candidate);
    if (location) return location;
  }
  // A homepage on a forge is the repository (docsSiteUrl drops it as a docs site for the same reason).
  for (const candidate of homepages) {
    if (candidate && docsSiteUrl(candidate, undefined) === undefined) {
      const location = normaliseRepositoryUrl(candidate);
      if (location) return location;
    }
  }
  return undefined;
}

/** Reads a PyPI release document (version or project JSON) into a resolved package. */
export function readPypiRelease(json: unknown, url: string): ResolvedPackage {
  const parsed = Release.safeParse(json);
  if (!parsed.success) throw badRegistryAnswer(displayUrl(url), 'the release document has no info.name and info.version');
  const { info } = parsed.data;
  const byKey = urlsByKey(info.project_urls);
  const homepages = [...firstOf(byKey, HOMEPAGE_KEYS), ...(info.home_page ? [info.home_page] : [])];
  const repository = findRepository(byKey, homepages);
  const documentation = [...firstOf(byKey, DOCUMENTATION_KEYS), ...(info.docs_url ? [info.docs_url] : [])].map((u) => docsSiteUrl(u, repository)).find((u) => u !== undefined);
  const homepage = homepages.map((u) => docsSiteUrl(u, repository)).find((u) => u !== undefined && u !== documentation);
  return {
    ecosystem: 'pypi',
    name: info.name,
    version: info.version,
    aliases: aliasesFor(info.name, repository, [normalisePypiName(info.name)]),
    ...(repository === undefined ? {} : { repository }),
    ...(homepage === undefined ? {} : { homepage }),
    ...(documentation === undefined ? {} : { documentation }),
    tagCandidates: tagCandidates(info.name, info.version),
  };
}

/** The version a range or inexact request means among a project's releases, skipping yanked ones. */
export function choosePypiVersion(json: unknown, url: string, name: string, requested: string): string {
  const parsed = Project.safeParse(json);
  if (!parsed.success) throw badRegistryAnswer(displayUrl(url), 'the project document has no releases object');
  const all = Object.keys(parsed.data.releases);
  const live = all.filter((v) => {
    const files = parsed.data.releases[v]!;
    return files.length > 0 && !files.every((f) => f.yanked === true);
  });
  const version = pickPep440Version(live, requested);
  if (version === undefined) throw versionNotFound('pypi', name, requested, newestPep440First(live));
  return version;
}

export async function resolvePypiPackage(config: RegistryConfig, request: PackageRequest, options: RegistryRequestOptions = {}): Promise<ResolvedPackage> {
  assertPypiName(request.name);
  const name = normalisePypiName(request.name);
  const requested = request.version === 'latest' ? undefined : request.version;
  if (requested !== undefined && parsePep440(requested)) {
    const exact = await getRegistryJson(config, projectUrl(config, name, requested), MAX_DOCUMENT_BYTES, options);
    if (exact.json !== undefined) return readPypiRelease(exact.json, exact.url);
  }
  const project = await getRegistryJson(config, projectUrl(config, name), MAX_DOCUMENT_BYTES, options);
  if (project.json === undefined) throw packageNotFound('pypi', request.name, displayUrl(project.url));
  if (requested === undefined) return readPypiRelease(project.json, project.url);
  const version = choosePypiVersion(project.json, project.url, request.name, requested);
  const release = await getRegistryJson(config, projectUrl(config, name, version), MAX_DOCUMENT_BYTES, options);
  if (release.json === undefined) throw versionNotFound('pypi', request.name, version, []);
  return readPypiRelease(release.json, release.url);
}
