import type { Config } from '../core/config.js';
import { getCrawlJob } from '../core/crawl/jobs.js';
import type { Database } from '../core/db/connect.js';
import type { AddOutcome } from '../core/library/add.js';
import { startUploadWorkers, waitForUpload } from '../core/upload/index.js';
import { documentStages } from '../core/pipeline/stages.js';
import { unresolvedIncludeLines, uploadSummaryLine } from './upload-summary.js';
import { followToEnd } from './crawl-follow.js';
import type { FollowOptions } from './crawl-follow.js';

/**
 * `docdex add --wait`: the queued jobs run here (crawls through `crawl start --wait`'s follower, git checkouts
 * and READMEs through upload workers of this process; workers elsewhere share them), and the exit code says
 * whether every one completed.
 */

export interface FinishedJob {
  type: 'crawl' | 'upload';
  id: string;
  status: string;
}

export async function followAddedJobs(db: Database, config: Config, outcomes: readonly AddOutcome[], options: FollowOptions): Promise<FinishedJob[]> {
  const jobs = outcomes.flatMap((o) => (o.status === 'queued' ? o.jobs : []));
  const uploads = jobs.filter((j) => j.type === 'upload');
  const workers = uploads.length > 0 ? await startUploadWorkers(db, config, { pollingIntervalSeconds: 0.5, stages: documentStages(config), llmStage: true }) : null;
  const finished: FinishedJob[] = [];
  try {
    for (const job of jobs.filter((j) => j.type === 'crawl')) {
      const final = await followToEnd(db, config, await getCrawlJob(db.pool, job.id), options);
      finished.push({ type: 'crawl', id: job.id, status: final.status });
    }
    for (const job of uploads) {
      const final = await waitForUpload(db, job.id);
      if (!options.json) options.log(uploadSummaryLine(final));
      for (const e of final.file_errors) options.warn(`error ${e.path}: ${e.error}`);
      for (const line of unresolvedIncludeLines(final)) options.warn(`warning ${line}`);
      if (final.status !== 'completed') process.exitCode = 1;
      finished.push({ type: 'upload', id: job.id, status: final.status });
    }
  } finally {
    await workers?.stop();
  }
  return finished;
}
