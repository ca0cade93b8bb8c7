import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { jobTableLines, morePagesLine } from '../../cli/job-render.js';
import { openDatabase } from '../../core/db/connect.js';
import { JOB_KINDS, JOB_STATUSES, listJobs } from '../../core/jobs/jobs.js';
import type { JobKind, JobStatus, JobSummary } from '../../core/jobs/jobs.js';

export default class JobsList extends BaseCommand<typeof JobsList> {
  static override summary = 'List jobs of every kind, newest first: crawls and upload jobs (uploads, git checkouts, package READMEs).';
  static override examples = ['<%= config.bin %> jobs list', '<%= config.bin %> jobs list --source react --status failed', '<%= config.bin %> jobs list --kind upload --json'];
  static override flags = {
    kind: Flags.string({ description: 'Only jobs of this kind.', options: [...JOB_KINDS] }),
    status: Flags.string({ description: 'Only jobs in this state.', options: [...JOB_STATUSES] }),
    source: Flags.string({ description: 'Only jobs of this library: a name (every version), name@version, or a source id.' }),
    limit: Flags.integer({ char: 'n', description: 'Jobs per page (1-500).', default: 20, min: 1, max: 500 }),
    offset: Flags.integer({ description: 'Skip this many jobs.', default: 0, min: 0 }),
  };

  async run(): Promise<{ items: JobSummary[]; total: number; limit: number; offset: number }> {
    const db = await openDatabase(this.settings, { max: 2, applicationName: 'docdex-jobs' });
    try {
      const page = await listJobs(db.pool, {
        limit: this.flags.limit,
        offset: this.flags.offset,
        ...(this.flags.kind === undefined ? {} : { kind: this.flags.kind as JobKind }),
        ...(this.flags.status === undefined ? {} : { status: this.flags.status as JobStatus }),
        ...(this.flags.source === undefined ? {} : { source: this.flags.source }),
      });
      if (page.items.length === 0) {
        this.log(page.total === 0 ? 'No jobs.' : 'No more jobs.');
        return page;
      }
      for (const line of jobTableLines(page.items)) this.log(line);
      const more = morePagesLine(page);
      if (more) this.log(more);
      return page;
    } finally {
      await db.close();
    }
  }
}
