import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { jobReportLines } from '../../cli/job-render.js';
import { openDatabase } from '../../core/db/connect.js';
import { jobReport } from '../../core/jobs/jobs.js';
import type { JobReport } from '../../core/jobs/jobs.js';

/** The latest failed pages shown (the dashboard's job view shows them too); `--json` has the same list. */
const LAST_ERRORS = 5;

export default class CrawlStatus extends BaseCommand<typeof CrawlStatus> {
  static override summary = 'Show a crawl job: state, page and snippet counts, rate, ETA, error, and its last failed pages.';
  static override description = "Any job id works, an upload job's too (as `docdex jobs status`, which also follows a job with --wait).";
  static override examples = ['<%= config.bin %> crawl status 3f2a9c1e', '<%= config.bin %> crawl status 3f2a9c1e-... --json'];
  static override args = { job: Args.string({ description: 'Job id (or a unique prefix of it).', required: true }) };

  async run(): Promise<JobReport> {
    const db = await openDatabase(this.settings, { max: 2, applicationName: 'docdex-crawl' });
    try {
      const job = await jobReport(db.pool, this.args.job, { limit: LAST_ERRORS });
      if (!this.jsonEnabled()) for (const line of jobReportLines(job)) this.log(line);
      return job;
    } finally {
      await db.close();
    }
  }
}
