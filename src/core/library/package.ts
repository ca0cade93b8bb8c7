import type { Config } from '../config.js';
import { startCrawl } from '../crawl/jobs.js';
import { isUserError, UserError } from '../errors.js';
import { listRemoteTags, startGitSource } from '../git/index.js';
import type { AddRequest, LibrarySpec } from '../library-spec.js';
import { fetchTarballReadme, pickTag, resolvePackage } from '../registry/index.js';
import type { ResolvedPackage } from '../registry/index.js';
import { createUploadFromContent } from '../upload/jobs.js';
import type { QueueDb } from '../upload/queue.js';
import { recordPackageOrigin } from '../sources/aliases.js';
import { findIndexedLibrary } from '../sources/indexed.js';
import type { AddedJob, SpecJobs } from './outcome.js';

/**
 * A package spec: the registry says where the docs of that exact version live. Its repository is indexed at
 * the release's tag (never at another ref: that would be other docs under this version's label), its docs
 * homepage is crawled one link deep, and when neither can be had, the README in the published tarball is
 * indexed instead. The library is named after the package; the repository's name becomes an alias.
 *
 * The repository, homepage, documentation and tarball URLs are written by the package's author and served by
 * the registry: they are third-party (net/provenance.ts) whoever asked for the package, so nothing here takes
 * the caller's permission. The registry requests themselves are the operator's (registry/http.ts).
 */

type PackageSpec = Extract<LibrarySpec, { kind: 'package' }>;

interface Identity {
  name: string;
  version: string;
}

function reason(error: unknown): string {
  return (isUserError(error) || error instanceof Error ? error.message : String(error)).replace(/\.$/, '');
}

/** The repository at the release's tag, or why it could not be used (a note, not a failure). */
async function repositoryJob(db: QueueDb, config: Config, pkg: ResolvedPackage, id: Identity, request: AddRequest): Promise<AddedJob | string> {
  const repo = pkg.repository;
  if (!repo) return 'the registry names no repository';
  let tags: string[];
  try {
    tags = await listRemoteTags(config, repo.url, db.pool);
  } catch (error) {
    return `its repository ${repo.url} cannot be read (${reason(error)})`;
  }
  const tag = pickTag(pkg.tagCandidates, tags);
  if (tag === undefined) return `its repository ${repo.url} has no tag for ${pkg.version} (tried ${pkg.tagCandidates.join(', ')})`;
  const paths = request.path ?? (repo.directory ? [repo.directory] : undefined);
  try {
    const job = await startGitSource(db, config, {
      remote: repo.url,
      ref: tag,
      provenance: 'third_party',
      maxRepoMb: request.maxRepoMb,
      name: id.name,
      version: id.version,
      ...(paths === undefined ? {} : { paths }),
      ...(request.examples === undefined ? {} : { examples: request.examples }),
    });
    return { type: 'upload', id: job.id, what: `repository ${repo.url} at ${tag}`, origin: { kind: 'repository', url: repo.url } };
  } catch (error) {
    if (!isUserError(error)) throw error;
    return `its repository ${repo.url} at ${tag} cannot be indexed (${reason(error)})`;
  }
}

/** The docs site, when the registry names one apart from the repository. */
async function homepageJob(db: QueueDb, config: Config, pkg: ResolvedPackage, id: Identity, request: AddRequest): Promise<AddedJob | string | null> {
  const site = pkg.documentation ?? pkg.homepage;
  if (site === undefined) return null;
  try {
    const job = await startCrawl(db, config, { start_urls: [site], name: id.name, version: id.version, max_depth: request.depth ?? 1, ...request.crawl }, { provenance: 'third_party' });
    return { type: 'crawl', id: job.job_id, what: `docs site ${site}`, origin: { kind: 'docs_site', url: site } };
  } catch (error) {
    if (!isUserError(error)) throw error;
    return `its docs site ${site} cannot be crawled (${reason(error)})`;
  }
}

/** The README published in the package itself: the fallback when no repository can be indexed. */
async function readmeJob(db: QueueDb, config: Config, pkg: ResolvedPackage, id: Identity): Promise<AddedJob | string> {
  if (pkg.tarball === undefined) return 'the registry offers no package archive to read a README from';
  try {
    const readme = await fetchTarballReadme(config, pkg.tarball);
    if (!readme) return 'its package archive holds no README';
    const job = await createUploadFromContent(db, config, {
      content: readme.content,
      filename: readme.filename,
      name: id.name,
      version: id.version,
      sourceUrl: pkg.tarball,
      // Read from that URL just now, not claimed: a crawl of a page on the registry's host must not block it.
      sourceUrlFetched: true,
    });
    return { type: 'upload', id: job.id, what: `the README in ${pkg.ecosystem} package ${pkg.name}@${pkg.version}`, origin: { kind: 'readme', url: pkg.tarball } };
  } catch (error) {
    if (!isUserError(error)) throw error;
    return `the README in its package archive cannot be indexed (${reason(error)})`;
  }
}

export async function addPackage(db: QueueDb, config: Config, spec: PackageSpec, request: AddRequest): Promise<SpecJobs> {
  // An exact version already indexed asks nothing of the registry either (a range never equals a stored version).
  const known = request.refresh || spec.version === undefined ? null : await findIndexedLibrary(db.pool, request.name ?? spec.name, request.version ?? spec.version);
  if (known) return { name: known.name, version: known.version, jobs: [], notes: [], indexed: known };
  const pkg = await resolvePackage(config, { ecosystem: spec.ecosystem, name: spec.name, ...(spec.version === undefined ? {} : { version: spec.version }) });
  const id: Identity = { name: request.name ?? pkg.name, version: request.version ?? pkg.version };
  const indexed = request.refresh ? null : await findIndexedLibrary(db.pool, id.name, id.version);
  if (indexed) return { name: indexed.name, version: indexed.version, jobs: [], notes: [], indexed };
  const jobs: AddedJob[] = [];
  const notes: string[] = [];
  const take = (result: AddedJob | string | null) => {
    if (result === null) return;
    if (typeof result === 'string') notes.push(result);
    else jobs.push(result);
  };
  const repo = await repositoryJob(db, config, pkg, id, request);
  take(repo);
  // The README before the docs site: an upload may not add pages to a crawled library, while a crawl may join one.
  if (typeof repo === 'string') take(await readmeJob(db, config, pkg, id));
  take(await homepageJob(db, config, pkg, id, request));
  if (jobs.length === 0) {
    throw new UserError(`Nothing to index for ${spec.spec} (${pkg.name}@${pkg.version}): ${notes.join('; ')}.`, {
      code: 'nothing_to_index',
      hint: 'Index its docs another way: `docdex add <docs URL>` or `docdex add <git URL>@<tag>`.',
    });
  }
  await recordPackageOrigin(db.pool, id, `${pkg.ecosystem}:${pkg.name}@${pkg.version}`, pkg.aliases);
  return { name: id.name, version: id.version, jobs, notes };
}
