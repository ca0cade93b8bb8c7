import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { jobReportLines } from '../../cli/job-render.js';
import { openDatabase } from '../../core/db/connect.js';
import { jobReport } from '../../core/jobs/jobs.js';
import type { JobReport } from '../../core/jobs/jobs.js';
import type { JobChange } from '../../core/jobs/control.js';

/** The latest failed pages or files shown; `--json` has the same list. */
const LAST_ERRORS = 5;

export default class JobsStatus extends BaseCommand<typeof JobsStatus> {
  static override summary = 'Show a job of any kind (crawl or upload) and its last failures; --wait follows it to the end.';
  static override description = 'With --wait, a queued or running job is followed until it ends (run here when no worker is running), and the exit code says whether it completed.';
  static override examples = ['<%= config.bin %> jobs status 3f2a9c1e', '<%= config.bin %> jobs status 3f2a9c1e --wait'];
  static override args = { job: Args.string({ description: 'Job id (or a unique prefix of it), as add, upload, crawl start and sources recrawl print it.', required: true }) };
  static override flags = {
    wait: Flags.boolean({ description: 'Follow the job until it ends (live progress in a terminal).', default: false }),
  };

  async run(): Promise<JobReport | JobChange> {
    const db = await openDatabase(this.settings, { max: 8, applicationName: 'docdex-jobs' });
    try {
      const report = await jobReport(db.pool, this.args.job, { limit: LAST_ERRORS });
      const active = report.status === 'queued' || report.status === 'running' || report.status === 'processing' || report.status === 'enhancing';
      if (!this.flags.wait || !active) {
        if (!this.jsonEnabled()) for (const line of jobReportLines(report)) this.log(line);
        if (this.flags.wait && report.status !== 'completed') process.exitCode = 1;
        return report;
      }
      const { followJobToEnd } = await import('../../cli/job-follow.js');
      const change: JobChange = report.kind === 'crawl' ? { kind: 'crawl', job: report } : { kind: 'upload', job: report };
      // Awaited here, not returned bare: the finally below must not close the database mid-job.
      return await followJobToEnd(db, this.settings, change, { tty: this.isTty, json: this.jsonEnabled(), log: (line) => this.log(line), warn: (line) => this.logToStderr(line) });
    } finally {
      await db.close();
    }
  }
}
