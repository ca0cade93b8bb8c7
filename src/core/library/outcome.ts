import type { ErrorCode } from '../errors.js';
import type { LibrarySpec } from '../library-spec.js';
import type { IndexedLibrary } from '../sources/indexed.js';

// What `docdex add` (library/add.ts) and its package producer (library/package.ts) answer for each spec: its own
// module, so that both, and the CLI, REST and MCP views of it, read one definition without importing each other.

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

/**
 * What became of a spec: its jobs were queued; it was already indexed, so nothing was fetched (`refresh`
 * fetches it again); or it failed. The one list, for the REST and MCP schemas.
 */
export const ADD_STATUSES = ['queued', 'indexed', 'failed'] as const;

export type AddOutcome =
  | { spec: string; kind: LibrarySpec['kind']; status: 'queued'; name: string; version: string; jobs: AddedJob[]; notes: string[] }
  | ({ spec: string; kind: LibrarySpec['kind']; status: 'indexed'; jobs: []; notes: string[] } & IndexedLibrary)
  | { spec: string; kind: LibrarySpec['kind'] | 'invalid'; status: 'failed'; error: { code: ErrorCode; message: string; hint?: string } };

/** One spec's jobs, or the UserError that says why it cannot be indexed; `indexed` when it already is. */
export interface SpecJobs {
  name: string;
  version: string;
  jobs: AddedJob[];
  notes: string[];
  indexed?: IndexedLibrary;
}
