import type pg from 'pg';
import { getCrawlJob } from '../crawl/jobs.js';
import { crawlJobErrors } from '../stats/job-errors.js';
import { getUploadJob } from '../upload/job-rows.js';
import type { AddedJob, AddOutcome } from './outcome.js';

/**
 * What `docdex add --wait` and `docdex sync` say once the jobs are done: per library, whether it holds docs
 * (from any of its origins: a README indexed while the docs site's crawl failed still counts), how much, and
 * whether anything in it can be searched; each job that did not complete is a warning with its reason
 * (issue #49: a partial success exited 1, and `--json` carried no reason).
 */

/**
 * - `indexed`: it holds documents and code snippets;
 * - `nothing_to_search`: it holds documents but no code snippet (a README without code): searches find nothing;
 * - `not_indexed`: none of its origins stored anything.
 */
export const LIBRARY_RESULTS = ['indexed', 'nothing_to_search', 'not_indexed'] as const;
export type LibraryResultState = (typeof LIBRARY_RESULTS)[number];

/** How a queued job ended, and why, when it did not complete. */
export interface FinishedJob {
  type: AddedJob['type'];
  id: string;
  status: string;
  /** The library it indexes, `name@version`. */
  library: string;
  what: string;
  /** Why it did not complete (the job's error, else its first failed page or file); null when it completed. */
  error: string | null;
}

export interface JobWarning {
  job_id: string;
  type: AddedJob['type'];
  what: string;
  reason: string;
}

export interface LibraryResult {
  library: string;
  name: string;
  version: string;
  state: LibraryResultState;
  source_id: string | null;
  document_count: number;
  snippet_count: number;
  /** The jobs of this library that did not complete, with their reasons. */
  warnings: JobWarning[];
}

export function libraryLabel(library: { name: string; version: string }): string {
  return library.version ? `${library.name}@${library.version}` : library.name;
}

/** Why a job that did not complete did not: its error, else its first failed page or file, else its status. */
async function crawlReason(pool: pg.Pool, id: string): Promise<{ status: string; error: string | null }> {
  const job = await getCrawlJob(pool, id);
  if (job.status === 'completed') return { status: job.status, error: null };
  if (job.error) return { status: job.status, error: job.error };
  const [first] = await crawlJobErrors(pool, id, { limit: 1 });
  return { status: job.status, error: first ? `${first.url}: ${first.error}` : `the crawl was ${job.status}` };
}

async function uploadReason(pool: pg.Pool, id: string): Promise<{ status: string; error: string | null }> {
  const job = await getUploadJob(pool, id);
  if (job.status === 'completed') return { status: job.status, error: null };
  const first = job.file_errors[0];
  return { status: job.status, error: job.error ?? (first ? `${first.path}: ${first.error}` : `the job ${job.status === 'failed' ? 'failed' : `is ${job.status}`}`) };
}

/** Each queued job of `outcomes` as it stands now, with the reason of those that did not complete. */
export async function finishedJobs(pool: pg.Pool, outcomes: readonly AddOutcome[]): Promise<FinishedJob[]> {
  const finished: FinishedJob[] = [];
  for (const outcome of outcomes) {
    if (outcome.status !== 'queued') continue;
    for (const job of outcome.jobs) {
      const { status, error } = job.type === 'crawl' ? await crawlReason(pool, job.id) : await uploadReason(pool, job.id);
      finished.push({ type: job.type, id: job.id, status, library: libraryLabel(outcome), what: job.what, error });
    }
  }
  return finished;
}

interface SourceCounts {
  id: string;
  document_count: number;
  snippet_count: number;
}

async function sourceCounts(pool: pg.Pool, name: string, version: string): Promise<SourceCounts | null> {
  const { rows } = await pool.query<SourceCounts>('SELECT id, document_count, snippet_count FROM sources WHERE name = $1 AND version = $2', [name, version]);
  return rows[0] ?? null;
}

export function resultState(counts: { document_count: number; snippet_count: number }): LibraryResultState {
  if (counts.document_count === 0) return 'not_indexed';
  return counts.snippet_count === 0 ? 'nothing_to_search' : 'indexed';
}

/** Per library of `outcomes` (queued or already indexed): what the index holds of it now, and its warnings. */
export async function libraryResults(pool: pg.Pool, outcomes: readonly AddOutcome[], finished: readonly FinishedJob[]): Promise<LibraryResult[]> {
  const results: LibraryResult[] = [];
  for (const outcome of outcomes) {
    if (outcome.status === 'failed') continue;
    const library = libraryLabel(outcome);
    const counts = (await sourceCounts(pool, outcome.name, outcome.version)) ?? { id: null, document_count: 0, snippet_count: 0 };
    const warnings = finished.filter((j) => j.library === library && j.error !== null).map((j) => ({ job_id: j.id, type: j.type, what: j.what, reason: j.error! }));
    results.push({
      library,
      name: outcome.name,
      version: outcome.version,
      state: resultState(counts),
      source_id: counts.id,
      document_count: counts.document_count,
      snippet_count: counts.snippet_count,
      warnings,
    });
  }
  return results;
}
