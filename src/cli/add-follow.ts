import type { Config } from '../core/config.js';
import { getCrawlJob, liveWorkers } from '../core/crawl/jobs.js';
import { ConflictError } from '../core/errors.js';
import { cancelJob } from '../core/jobs/control.js';
import type { Database } from '../core/db/connect.js';
import type { AddOutcome } from '../core/library/outcome.js';
import { finishedJobs } from '../core/library/results.js';
import type { FinishedJob } from '../core/library/results.js';
import { startUploadWorkers } from '../core/upload/worker.js';
import { waitForUpload } from '../core/upload/job-rows.js';
import { documentStages } from '../core/pipeline/stages.js';
import { unresolvedIncludeLines, uploadSummaryLine } from './upload-summary.js';
import { followCrawl, summaryLine } from './crawl-follow.js';
import type { FollowOptions } from './crawl-follow.js';
import { plural } from './plural.js';

/**
 * `docdex add --wait` and `docdex sync`: the queued jobs run here (crawls through `crawl start --wait`'s
 * follower, git checkouts and READMEs through upload workers of this process; workers elsewhere share them).
 * How each ended, and why when it did not complete, is returned: the caller decides the exit code from what
 * each library holds (a library indexed from one origin is indexed though another failed).
 */

export type { FinishedJob };

/**
 * One Ctrl-C stops the waiting on every job (issue #49: with several crawls, the next one was followed after
 * the first was interrupted). This listener sees a Ctrl-C that comes between two followers; the crawl being
 * followed gets it too, and is cancelled resumably (in-process workers) or left to its worker.
 */
function watchInterrupt(): { signal: AbortSignal; stop(): void } {
  const interrupt = new AbortController();
  const onSigint = () => interrupt.abort(new Error('interrupted'));
  process.on('SIGINT', onSigint);
  return { signal: interrupt.signal, stop: () => process.removeListener('SIGINT', onSigint) };
}

async function followCrawls(db: Database, config: Config, ids: readonly string[], signal: AbortSignal, options: FollowOptions): Promise<void> {
  for (const id of ids) {
    if (signal.aborted) return;
    const { job: final, stoppedFollowing, interrupted } = await followCrawl(db, config, await getCrawlJob(db.pool, id), options);
    // A crawl left to its worker has been named by followCrawl; one cancelled here says so in its summary.
    if (!options.json && !stoppedFollowing) options.log(summaryLine(final));
    if (stoppedFollowing || interrupted) return;
  }
}

async function followUploads(db: Database, ids: readonly string[], signal: AbortSignal, options: FollowOptions): Promise<void> {
  for (const id of ids) {
    if (signal.aborted) return;
    const final = await waitForUpload(db, id, undefined, { signal }).catch((error: unknown) => {
      if (signal.aborted) return null;
      throw error;
    });
    if (final === null) return;
    if (!options.json) options.log(uploadSummaryLine(final));
    for (const e of final.file_errors) options.warn(`error ${e.path}: ${e.error}`);
    for (const line of unresolvedIncludeLines(final)) options.warn(`warning ${line}`);
  }
}

export async function followAddedJobs(db: Database, config: Config, outcomes: readonly AddOutcome[], options: FollowOptions): Promise<FinishedJob[]> {
  const jobs = outcomes.flatMap((o) => (o.status === 'queued' ? o.jobs : []));
  const uploads = jobs.filter((j) => j.type === 'upload').map((j) => j.id);
  const interrupt = watchInterrupt();
  const workers = uploads.length > 0 ? await startUploadWorkers(db, config, { pollingIntervalSeconds: 0.5, stages: documentStages(config), llmStage: true }) : null;
  try {
    await followCrawls(
      db,
      config,
      jobs.filter((j) => j.type === 'crawl').map((j) => j.id),
      interrupt.signal,
      options,
    );
    await followUploads(db, uploads, interrupt.signal, options);
  } finally {
    interrupt.stop();
    await workers?.stop();
  }
  if (!interrupt.signal.aborted) return finishedJobs(db.pool, outcomes);
  // Interrupted, not failed: 130 is how shells report Ctrl-C.
  process.exitCode = 130;
  await settleInterrupted(db, await finishedJobs(db.pool, outcomes), options);
  return finishedJobs(db.pool, outcomes);
}

/**
 * The jobs a Ctrl-C left open: with no worker process connected, nothing runs them once this process exits
 * (its in-process workers had taken them), so each is cancelled resumably, as `crawl start --wait` cancels its
 * crawl; a worker elsewhere goes on with them.
 */
async function settleInterrupted(db: Database, finished: readonly FinishedJob[], options: FollowOptions): Promise<void> {
  const open = finished.filter((j) => !['completed', 'failed', 'cancelled'].includes(j.status));
  if (open.length === 0) return;
  const commands = (verb: string) => open.map((j) => `\`docdex jobs ${verb} ${j.id}\``).join(', ');
  if ((await liveWorkers(db.pool)).length > 0) {
    options.warn(`Stopped waiting; ${plural(open.length, 'job')} go on on the worker: ${commands('status --wait')}.`);
    return;
  }
  for (const job of open) {
    // A job that ended meanwhile is left as it ended.
    await cancelJob(db.pool, job.id).catch((error: unknown) => {
      if (!(error instanceof ConflictError)) throw error;
    });
  }
  options.warn(`Cancelled ${plural(open.length, 'more job')}, resumable: ${commands('resume')}.`);
}
