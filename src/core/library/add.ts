import type { Config } from '../config.js';
import { startCrawl } from '../crawl/jobs.js';
import { isUserError } from '../errors.js';
import type { ErrorCode, UserError } from '../errors.js';
import { startGitSource } from '../git/index.js';
import { parseAddRequest } from '../library-spec.js';
import type { AddRequest, LibrarySpec } from '../library-spec.js';
import type { QueueDb } from '../upload/queue.js';
import { recordOrigin } from '../sources/aliases.js';
import { addPackage } from './package.js';

/** A ref that names a release (`v2.1.0`, `2.1.0`): a repository added at one is added at another version the same way. */
const RELEASE_TAG = /^v?\d+(?:\.\d+)*(?:[-+][\w.]+)?$/;

/**
 * `docdex add <spec>...`, REST `POST /api/libraries` and MCP `add_library`: each spec becomes the jobs that
 * index it, through the producers that already exist (a crawl for a docs site, a git checkout for a
 * repository, both for a package). Specs are independent: one that fails is reported and the others still run.
 */

export interface AddPermission {
  /** The CLI's own request: it may read this machine's repositories (paths, file://, ssh keys) and loopback. */
  local: boolean;
}

/** Where a job's documents come from (AddedJob.origin); the one list, for the REST and MCP schemas. */
export const JOB_ORIGIN_KINDS = ['docs_site', 'repository', 'readme'] as const;

export interface AddedJob {
  /** Which job table and status command follow it: crawl jobs (`crawl status`) or upload jobs (git, README). */
  type: 'crawl' | 'upload';
  id: string;
  /** What the job indexes, for people: "repository at v1.2.3", "docs site https://…", "package README". */
  what: string;
  /**
   * Where the job's documents come from, for a caller that shows what will be fetched (MCP add_library): the
   * docs site's start URL, the repository's remote, or the package archive its README was already read from.
   */
  origin?: { kind: (typeof JOB_ORIGIN_KINDS)[number]; url: string };
}

export type AddOutcome =
  | { spec: string; kind: LibrarySpec['kind']; status: 'queued'; name: string; version: string; jobs: AddedJob[]; notes: string[] }
  | { spec: string; kind: LibrarySpec['kind'] | 'invalid'; status: 'failed'; error: { code: ErrorCode; message: string; hint?: string } };

/** One spec's jobs, or the UserError that says why it cannot be indexed. */
export interface SpecJobs {
  name: string;
  version: string;
  jobs: AddedJob[];
  notes: string[];
}

async function addUrl(db: QueueDb, config: Config, spec: Extract<LibrarySpec, { kind: 'url' }>, request: AddRequest, permission: AddPermission): Promise<SpecJobs> {
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
    { allowLoopback: permission.local },
  );
  return { name: job.name, version: job.version, jobs: [{ type: 'crawl', id: job.job_id, what: `docs site ${spec.url}`, origin: { kind: 'docs_site', url: spec.url } }], notes: [] };
}

async function addGit(db: QueueDb, config: Config, spec: Extract<LibrarySpec, { kind: 'git' }>, request: AddRequest, permission: AddPermission): Promise<SpecJobs> {
  // Whether this caller may reach the remote (paths, file:// and ssh are the CLI's) is the git producer's rule.
  const job = await startGitSource(db, config, {
    remote: spec.remote,
    local: permission.local,
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

function addSpec(db: QueueDb, config: Config, spec: LibrarySpec, request: AddRequest, permission: AddPermission): Promise<SpecJobs> {
  if (spec.kind === 'url') return addUrl(db, config, spec, request, permission);
  if (spec.kind === 'git') return addGit(db, config, spec, request, permission);
  return addPackage(db, config, spec, request, permission);
}

function failure(spec: string, kind: AddOutcome['kind'], error: UserError): AddOutcome {
  return { spec, kind, status: 'failed', error: { code: error.code, message: error.message, ...(error.hint === undefined ? {} : { hint: error.hint }) } };
}

/**
 * Validates the request (a bad request throws, and nothing is written), then queues each spec's jobs in turn.
 * With several specs, a spec's own failure (no such package, an unknown ref) is its outcome; a bug still throws.
 */
export async function addLibraries(db: QueueDb, config: Config, input: unknown, permission: AddPermission): Promise<AddOutcome[]> {
  const request = parseAddRequest(input);
  const outcomes: AddOutcome[] = [];
  for (const spec of request.specs) {
    try {
      const added = await addSpec(db, config, spec, request, permission);
      outcomes.push({ spec: spec.spec, kind: spec.kind, status: 'queued', ...added });
    } catch (error) {
      // One spec: its error is the answer, with its own status and exit code.
      if (!isUserError(error) || request.specs.length === 1) throw error;
      outcomes.push(failure(spec.spec, spec.kind, error));
    }
  }
  return outcomes;
}
