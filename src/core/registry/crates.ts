import { z } from 'zod';
import { ValidationError } from '../errors.js';
import { aliasesFor } from './aliases.js';
import { displayUrl, getRegistryJson } from './http.js';
import { badRegistryAnswer, packageNotFound, versionNotFound } from './problems.js';
import { docsSiteUrl, normaliseRepositoryUrl, webUrl } from './repository-url.js';
import { tagCandidates } from './tags.js';
import type { PackageRequest, RegistryConfig, RegistryRequestOptions, ResolvedPackage } from './types.js';
import { newestFirst, pickSemverVersion } from './versions.js';

/**
 * crates.io's API: `GET /api/v1/crates/<name>` gives the crate (`repository`, `documentation`, `homepage`,
 * `max_stable_version`) and its versions (`num`, `yanked`, and on newer answers each version's own links).
 */

const MAX_DOCUMENT_BYTES = 32 * 1024 * 1024;
const DEFAULT_REGISTRY = 'https://crates.io';
// crates.io's rule for new crate names; `-` and `_` are the same name to it.
const CRATE_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

const optionalText = z.string().nullable().optional().catch(undefined);

const Links = { repository: optionalText, documentation: optionalText, homepage: optionalText };

const CrateDocument = z.object({
  crate: z.object({
    name: z.string().min(1),
    max_stable_version: optionalText,
    max_version: optionalText,
    newest_version: optionalText,
    ...Links,
  }),
  versions: z
    .array(z.object({ num: z.string(), yanked: z.boolean().optional().catch(undefined), ...Links }).passthrough())
    .optional()
    .catch(undefined),
});

type CrateDocument = z.infer<typeof CrateDocument>;

function assertCrateName(name: string): void {
  if (!CRATE_NAME.test(name)) {
    throw new ValidationError(`${JSON.stringify(name.slice(0, 80))} is not a crate name.`, {
      hint: 'Crate names are ASCII letters, digits, - and _, starting with a letter, like serde or tokio-util.',
      details: [{ path: 'name', message: 'not a crate name' }],
    });
  }
}

/**
 * docs.rs serves every version published on crates.io; a link to the crate's docs there is pinned to the
 * resolved one. Without a link, docs.rs is assumed only for crates.io's own crates (`publicRegistry`): a
 * private registry's crates are not there, and crawling docs.rs for them fails.
 */
function pinnedDocumentation(raw: string | null | undefined, name: string, version: string, publicRegistry: boolean): string | undefined {
  const pinned = `https://docs.rs/${encodeURIComponent(name)}/${encodeURIComponent(version)}/`;
  const url = webUrl(raw);
  if (url === undefined) return publicRegistry ? pinned : undefined;
  return new URL(url).hostname.toLowerCase() === 'docs.rs' ? pinned : url;
}

function chooseCrateVersion(document: CrateDocument, requested: string | undefined): string | undefined {
  const { crate, versions } = document;
  const listed = versions ?? [];
  // Without a versions list (an answer trimmed by a mirror), the crate's own version fields are all there is.
  const published = listed.length > 0 ? listed.map((v) => v.num) : [crate.max_stable_version, crate.max_version, crate.newest_version].filter((v): v is string => !!v);
  const live = listed.length > 0 ? listed.filter((v) => v.yanked !== true).map((v) => v.num) : published;
  if (requested !== undefined && published.includes(requested)) return requested;
  return pickSemverVersion(live, requested, crate.max_stable_version ?? crate.max_version ?? undefined);
}

/**
 * Reads a crates.io crate document into a resolved package. `publicRegistry`: the answer came from crates.io
 * itself, so docs.rs documents the crate even when the document names no documentation.
 */
export function readCrateDocument(json: unknown, request: PackageRequest, url: string, publicRegistry = true): ResolvedPackage {
  const parsed = CrateDocument.safeParse(json);
  if (!parsed.success) throw badRegistryAnswer(displayUrl(url), 'the crate document has no crate.name');
  const { crate } = parsed.data;
  const version = chooseCrateVersion(parsed.data, request.version === 'latest' ? undefined : request.version);
  if (version === undefined) throw versionNotFound('crates', crate.name, request.version ?? 'latest', newestFirst((parsed.data.versions ?? []).filter((v) => v.yanked !== true).map((v) => v.num)));
  const own = parsed.data.versions?.find((v) => v.num === version);
  const repositoryText = own?.repository ?? crate.repository;
  const repository = repositoryText ? normaliseRepositoryUrl(repositoryText) : undefined;
  const homepage = docsSiteUrl(own?.homepage ?? crate.homepage, repository);
  const documentation = pinnedDocumentation(own?.documentation ?? crate.documentation, crate.name, version, publicRegistry);
  return {
    ecosystem: 'crates',
    name: crate.name,
    version,
    aliases: aliasesFor(crate.name, repository),
    ...(repository === undefined ? {} : { repository }),
    ...(homepage === undefined || homepage === documentation ? {} : { homepage }),
    ...(documentation === undefined ? {} : { documentation }),
    tagCandidates: tagCandidates(crate.name, version),
  };
}

export async function resolveCratePackage(config: RegistryConfig, request: PackageRequest, options: RegistryRequestOptions = {}): Promise<ResolvedPackage> {
  assertCrateName(request.name);
  const base = config.registry.cratesUrl.endsWith('/') ? config.registry.cratesUrl : `${config.registry.cratesUrl}/`;
  const url = new URL(`api/v1/crates/${request.name}`, base).toString();
  const answer = await getRegistryJson(config, url, MAX_DOCUMENT_BYTES, options);
  if (answer.json === undefined) throw packageNotFound('crates', request.name, displayUrl(url));
  return readCrateDocument(answer.json, request, answer.url, config.registry.cratesUrl.replace(/\/+$/, '') === DEFAULT_REGISTRY);
}
