import type { Config } from '../core/config.js';
import { getCrawlJob } from '../core/crawl/jobs.js';
import type { Database } from '../core/db/connect.js';
import { listProjectLibraries } from '../core/project/store.js';
import type { ProjectLibraryRow } from '../core/project/store.js';
import type { SyncResult } from '../core/project/sync.js';
import { getUploadJob } from '../core/upload/job-rows.js';
import { fromCrawlJob, fromUploadJob } from '../ui/job-view.js';
import type { JobProgressView } from '../ui/job-view.js';
import { libraryResults } from '../core/library/results.js';
import type { FinishedJob, LibraryResult } from '../core/library/results.js';
import { followAddedJobs } from './add-follow.js';
import type { FollowOptions } from './crawl-follow.js';

/**
 * `docdex sync` (waiting): every queued job runs here as `docdex add --wait` runs them (in a terminal under
 * one view of all jobs, in CI as plain lines), then the project's libraries are read again, so the exit code
 * reflects what the index holds once the jobs are done: a library that holds docs from one origin is indexed
 * though another failed (that one is a warning).
 */

const REDRAW_MS = 500;

async function jobViews(db: Database, result: SyncResult): Promise<JobProgressView[]> {
  return Promise.all(
    result.jobs.map(async (job) => {
      const view = job.type === 'crawl' ? fromCrawlJob(await getCrawlJob(db.pool, job.id)) : fromUploadJob(await getUploadJob(db.pool, job.id));
      return { ...view, name: `${job.library}: ${job.what}` };
    }),
  );
}

async function followUnderOneView(db: Database, config: Config, result: SyncResult, options: FollowOptions): Promise<FinishedJob[]> {
  const { renderJobsProgress } = await import('../ui/jobs-progress.js');
  const view = renderJobsProgress(await jobViews(db, result));
  const timer = setInterval(() => void jobViews(db, result).then(view.update, () => undefined), REDRAW_MS);
  const warnings: string[] = [];
  let finished: FinishedJob[];
  try {
    // The view stands for the followers' own lines; their warnings are shown once it is done.
    finished = await followAddedJobs(db, config, result.added, { tty: false, json: true, log: () => undefined, warn: (line) => warnings.push(line) });
  } finally {
    clearInterval(timer);
    await view.finish(await jobViews(db, result).catch(() => undefined));
  }
  for (const line of warnings) options.warn(line);
  return finished;
}

export interface FollowedSync {
  /** The project's libraries once the jobs are done. */
  rows: ProjectLibraryRow[];
  /** What each queued library holds now, with a warning for each of its jobs that did not complete. */
  results: LibraryResult[];
}

export async function followSync(db: Database, config: Config, result: SyncResult, options: FollowOptions): Promise<FollowedSync> {
  let finished: FinishedJob[] = [];
  if (result.jobs.length > 0) finished = options.tty ? await followUnderOneView(db, config, result, options) : await followAddedJobs(db, config, result.added, options);
  const results = await libraryResults(db.pool, result.added, finished);
  return { rows: result.project_id === null ? [] : await listProjectLibraries(db.pool, result.project_id), results };
}
