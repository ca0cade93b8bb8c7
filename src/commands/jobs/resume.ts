import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { openDatabase } from '../../core/db/connect.js';
import { resumeJob } from '../../core/jobs/control.js';
import type { JobChange } from '../../core/jobs/control.js';

export default class JobsResume extends BaseCommand<typeof JobsResume> {
  static override summary = 'Continue a cancelled or failed job of any kind: a crawl from its frontier, an upload with the files it had not processed.';
  static override description = 'Nothing already done is done again: crawled pages are not fetched again (transient failures are retried), processed files are not processed again.';
  static override examples = ['<%= config.bin %> jobs resume 3f2a9c1e --wait'];
  static override args = { job: Args.string({ description: 'Job id (or a unique prefix of it).', required: true }) };
  static override flags = {
    wait: Flags.boolean({ description: 'Wait for the job to finish (running it here if no worker is running).', default: false }),
  };

  async run(): Promise<JobChange> {
    const db = await openDatabase(this.settings, { max: 8, applicationName: 'docdex-jobs' });
    try {
      // The local user's own resume: a crawl may reach their localhost docs again.
      const change = await resumeJob(db, this.settings, this.args.job, { askedBy: 'user' });
      const id = change.kind === 'crawl' ? change.job.job_id : change.job.id;
      if (!this.flags.wait) {
        this.log(`${change.kind === 'crawl' ? 'Crawl' : 'Upload'} job ${id} queued again. Follow it with \`docdex jobs status ${id} --wait\`.`);
        return change;
      }
      const { followJobToEnd } = await import('../../cli/job-follow.js');
      return await followJobToEnd(db, this.settings, change, { tty: this.isTty, json: this.jsonEnabled(), log: (line) => this.log(line), warn: (line) => this.logToStderr(line) });
    } finally {
      await db.close();
    }
  }
}
