import type { Config } from '../core/config.js';
import type { Database } from '../core/db/connect.js';
import type { JobChange } from '../core/jobs/control.js';
import { documentStages } from '../core/pipeline/stages.js';
import { getUploadJob, waitForUpload } from '../core/upload/job-rows.js';
import { startUploadWorkers } from '../core/upload/worker.js';
import type { UploadJob } from '../core/upload/job-rows.js';
import { followToEnd } from './crawl-follow.js';
import type { FollowOptions } from './crawl-follow.js';
import { uploadSummaryLine } from './upload-summary.js';

/**
 * `--wait` for a job of either kind (`jobs status`, `jobs resume`, `sources recrawl`): a crawl as `crawl start
 * --wait` follows it, an upload job with upload workers in this process (workers elsewhere share its files).
 * The exit code says whether it completed; Ctrl-C stops following (130) and the job stays resumable.
 */
async function followUpload(db: Database, config: Config, job: UploadJob, options: FollowOptions): Promise<UploadJob> {
  const workers = await startUploadWorkers(db, config, { pollingIntervalSeconds: 0.5, stages: documentStages(config), llmStage: true });
  const stop = new AbortController();
  const onSigint = () => stop.abort();
  process.once('SIGINT', onSigint);
  try {
    const final = await waitForUpload(db, job.id, undefined, { signal: stop.signal }).catch(async (error: unknown) => {
      if (!stop.signal.aborted) throw error;
      options.warn(`Stopped following upload job ${job.id}. Follow it again with \`docdex jobs status ${job.id} --wait\`.`);
      process.exitCode = 130;
      return getUploadJob(db.pool, job.id);
    });
    if (!options.json) options.log(uploadSummaryLine(final));
    if (final.status !== 'completed' && process.exitCode !== 130) process.exitCode = 1;
    return final;
  } finally {
    process.removeListener('SIGINT', onSigint);
    await workers.stop();
  }
}

export async function followJobToEnd(db: Database, config: Config, change: JobChange, options: FollowOptions): Promise<JobChange> {
  if (change.kind === 'crawl') return { kind: 'crawl', job: await followToEnd(db, config, change.job, options) };
  return { kind: 'upload', job: await followUpload(db, config, change.job, options) };
}
