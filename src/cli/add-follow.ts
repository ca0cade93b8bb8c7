import type { Config } from '../core/config.js';
import { getCrawlJob } from '../core/crawl/jobs.js';
import type { Database } from '../core/db/connect.js';
import type { AddOutcome } from '../core/library/add.js';
import { finishedJobs } from '../core/library/results.js';
import type { FinishedJob } from '../core/library/results.js';
import { startUploadWorkers, waitForUpload } from '../core/upload/index.js';
import { documentStages } from '../core/pipeline/stages.js';
import { unresolvedIncludeLines, uploadSummaryLine } from './upload-summary.js';
import { followCrawl, summaryLine } from './crawl-follow.js';
import type { FollowOptions } from './crawl-follow.js';

/**
 * `docdex add --wait` and `docdex sync`: the queued jobs run here (crawls through `crawl start --wait`'s
 * follower, git checkouts and READMEs through upload workers of this process; workers elsewhere share them).
 * How each ended, and why when it did not complete, is returned: the caller decides the exit code from what
 * each library holds (a library indexed from one origin is indexed though another failed).
 */

export type { FinishedJob };

export async function followAddedJobs(db: Database, config: Config, outcomes: readonly AddOutcome[], options: FollowOptions): Promise<FinishedJob[]> {
  const jobs = outcomes.flatMap((o) => (o.status === 'queued' ? o.jobs : []));
  const uploads = jobs.filter((j) => j.type === 'upload');
  const workers = uploads.length > 0 ? await startUploadWorkers(db, config, { pollingIntervalSeconds: 0.5, stages: documentStages(config), llmStage: true }) : null;
  try {
    for (const job of jobs.filter((j) => j.type === 'crawl')) {
      const { job: final, stoppedFollowing } = await followCrawl(db, config, await getCrawlJob(db.pool, job.id), options);
      if (stoppedFollowing) {
        // Interrupted, not failed: the crawl goes on on its worker; 130 is how shells report Ctrl-C.
        process.exitCode = 130;
        break;
      }
      if (!options.json) options.log(summaryLine(final));
    }
    for (const job of uploads) {
      const final = await waitForUpload(db, job.id);
      if (!options.json) options.log(uploadSummaryLine(final));
      for (const e of final.file_errors) options.warn(`error ${e.path}: ${e.error}`);
      for (const line of unresolvedIncludeLines(final)) options.warn(`warning ${line}`);
    }
  } finally {
    await workers?.stop();
  }
  return finishedJobs(db.pool, outcomes);
}
