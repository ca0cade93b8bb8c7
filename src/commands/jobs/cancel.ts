import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { openDatabase } from '../../core/db/connect.js';
import { cancelJob } from '../../core/jobs/control.js';
import { plural } from '../../cli/plural.js';
import type { JobChange } from '../../core/jobs/control.js';

export default class JobsCancel extends BaseCommand<typeof JobsCancel> {
  static override summary = 'Cancel a queued or running job of any kind; what it stored stays searchable, and it can be resumed.';
  static override examples = ['<%= config.bin %> jobs cancel 3f2a9c1e'];
  static override args = { job: Args.string({ description: 'Job id (or a unique prefix of it).', required: true }) };

  async run(): Promise<JobChange> {
    const db = await openDatabase(this.settings, { max: 2, applicationName: 'docdex-jobs' });
    try {
      const change = await cancelJob(db.pool, this.args.job);
      const id = change.kind === 'crawl' ? change.job.job_id : change.job.id;
      const done = change.kind === 'crawl' ? plural(change.job.pages_crawled, 'page') : `${change.job.processed_files} of ${plural(change.job.file_count, 'file')}`;
      this.log(
        `Cancelled ${change.kind} job ${id} of ${change.kind === 'crawl' ? change.job.name : (change.job.source_name ?? change.job.name)} after ${done}. Resume with \`docdex jobs resume ${id}\`.`,
      );
      return change;
    } finally {
      await db.close();
    }
  }
}
