import type { Config } from '../config.js';
import { assertStartUrlsAllowed, startCrawl } from '../crawl/jobs.js';
import { isUserError } from '../errors.js';
import type { UserError } from '../errors.js';
import { startGitSource } from '../git/index.js';
import { assertRemoteAllowed, parseRemote } from '../git/remote.js';
import { findIndexedOrigin } from '../sources/indexed.js';
import type { IndexedLibrary } from '../sources/indexed.js';
import { parseAddRequest } from '../library-spec.js';
import type { AddRequest, LibrarySpec } from '../library-spec.js';
import { typedByUser } from '../net/provenance.js';
import type { Provenance } from '../net/provenance.js';
import type { QueueDb } from '../upload/queue.js';
import { recordOrigin } from '../sources/aliases.js';
import { addPackage } from './package.js';
import type { AddOutcome, SpecJobs } from './outcome.js';

/** A ref that names a release (`v2.1.0`, `2.1.0`): a repository added at one is added at another version the same way. */
const RELEASE_TAG = /^v?\d+(?:\.\d+)*(?:[-+][\w.]+)?$/;

/**
 * `docdex add <spec>...`, REST `POST /api/libraries` and MCP `add_library`: each spec becomes the jobs that
 * index it, through the producers that already exist (a crawl for a docs site, a git checkout for a
 * repository, both for a package). Specs are independent: one that fails is reported and the others still run.
 *
 * Who wrote the specs (`provenance`, net/provenance.ts) carries over to a docs URL or a repository given in a
 * spec, and to nothing else: what a package's registry names is third-party, however the package was asked for.
 * A version already indexed from the same origin is left alone, and nothing is fetched, unless `refresh`.
 */

function alreadyIndexed(library: IndexedLibrary): SpecJobs {
  return { name: library.name, version: library.version, jobs: [], notes: [], indexed: library };
}

async function addUrl(db: QueueDb, config: Config, spec: Extract<LibrarySpec, { kind: 'url' }>, request: AddRequest, provenance: Provenance): Promise<SpecJobs> {
  // The caller's permission first: what it may not fetch it is refused, indexed or not (REST keeps its 403).
  assertStartUrlsAllowed(config, [spec.url], typedByUser(provenance));
  const indexed = request.refresh ? null : await findIndexedOrigin(db.pool, { kind: 'url', url: spec.url }, request);
  if (indexed) return alreadyIndexed(indexed);
  const job = await startCrawl(
    db,
    config,
    {
      start_urls: [spec.url],
      ...request.crawl,
      ...(request.name === undefined ? {} : { name: request.name }),
      ...(request.version === undefined ? {} : { version: request.version }),
      ...(request.depth === undefined ? {} : { max_depth: request.depth }),
    },
    { provenance },
  );
  return { name: job.name, version: job.version, jobs: [{ type: 'crawl', id: job.job_id, what: `docs site ${spec.url}`, origin: { kind: 'docs_site', url: spec.url } }], notes: [] };
}

async function addGit(db: QueueDb, config: Config, spec: Extract<LibrarySpec, { kind: 'git' }>, request: AddRequest, provenance: Provenance): Promise<SpecJobs> {
  if (!request.refresh) {
    // The caller's permission first, as for a URL: a local repository stays the local user's even when it is indexed.
    const remote = parseRemote(spec.remote);
    assertRemoteAllowed(remote, typedByUser(provenance));
    const indexed = await findIndexedOrigin(db.pool, { kind: 'git', remote: remote.url, ref: spec.ref ?? null }, request);
    if (indexed) return alreadyIndexed(indexed);
  }
  // Whether the remote may be reached (paths, file:// and ssh are the local user's) is the git producer's rule.
  const job = await startGitSource(db, config, {
    remote: spec.remote,
    provenance,
    maxRepoMb: request.maxRepoMb,
    ...(spec.ref === undefined ? {} : { ref: spec.ref }),
    ...(request.path === undefined ? {} : { paths: request.path }),
    ...(request.examples === undefined ? {} : { examples: request.examples }),
    ...(request.name === undefined ? {} : { name: request.name }),
    ...(request.version === undefined ? {} : { version: request.version }),
  });
  const added = { name: job.source_name ?? job.name, version: job.version ?? '' };
  // A release tag: the not-indexed answer for another version of this library names the same remote at that version's tag.
  if (spec.ref !== undefined && RELEASE_TAG.test(spec.ref)) await recordOrigin(db.pool, added, `${spec.remote}@${spec.ref}`);
  return {
    ...added,
    jobs: [{ type: 'upload', id: job.id, what: `repository ${spec.remote}${spec.ref ? ` at ${spec.ref}` : ''}`, origin: { kind: 'repository', url: spec.remote } }],
    notes: [],
  };
}

function addSpec(db: QueueDb, config: Config, spec: LibrarySpec, request: AddRequest, provenance: Provenance): Promise<SpecJobs> {
  if (spec.kind === 'url') return addUrl(db, config, spec, request, provenance);
  if (spec.kind === 'git') return addGit(db, config, spec, request, provenance);
  // No provenance: everything a package's registry answers is third-party.
  return addPackage(db, config, spec, request);
}

function failure(spec: string, kind: AddOutcome['kind'], error: UserError): AddOutcome {
  return { spec, kind, status: 'failed', error: { code: error.code, message: error.message, ...(error.hint === undefined ? {} : { hint: error.hint }) } };
}

/**
 * Validates the request (a bad request throws, and nothing is written), then queues each spec's jobs in turn.
 * With several specs, a spec's own failure (no such package, an unknown ref) is its outcome; a bug still throws.
 * `provenance` says who wrote the specs: `user` only for the local user's `docdex add`.
 */
export async function addLibraries(db: QueueDb, config: Config, input: unknown, provenance: Provenance): Promise<AddOutcome[]> {
  const request = parseAddRequest(input);
  const outcomes: AddOutcome[] = [];
  for (const spec of request.specs) {
    try {
      const { indexed, ...added } = await addSpec(db, config, spec, request, provenance);
      outcomes.push(indexed ? { spec: spec.spec, kind: spec.kind, status: 'indexed', jobs: [], notes: added.notes, ...indexed } : { spec: spec.spec, kind: spec.kind, status: 'queued', ...added });
    } catch (error) {
      // One spec: its error is the answer, with its own status and exit code.
      if (!isUserError(error) || request.specs.length === 1) throw error;
      outcomes.push(failure(spec.spec, spec.kind, error));
    }
  }
  return outcomes;
}
