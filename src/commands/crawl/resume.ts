import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { resolveCrawlJobId, resumeCrawl } from '../../core/crawl/jobs.js';
import type { CrawlJob } from '../../core/crawl/jobs.js';
import { openDatabase } from '../../core/db/connect.js';

export default class CrawlResume extends BaseCommand<typeof CrawlResume> {
  static override summary = 'Continue a failed or cancelled crawl (or one whose worker died) from its frontier.';
  static override description = 'Pages already crawled are not fetched again; pages that failed transiently (no answer, 429, 5xx) are retried.';
  static override examples = ['<%= config.bin %> crawl resume 3f2a9c1e --wait'];
  static override args = { job: Args.string({ description: 'Job id (or a unique prefix of it).', required: true }) };
  static override flags = {
    wait: Flags.boolean({ description: 'Wait for the crawl to finish (running it here if no worker is running).', default: false }),
  };

  async run(): Promise<CrawlJob> {
    const db = await openDatabase(this.settings, { max: 8, applicationName: 'docdex-crawl' });
    try {
      const job = await resumeCrawl(db, this.settings, await resolveCrawlJobId(db.pool, this.args.job), { askedBy: 'user' });
      if (!this.flags.wait) {
        this.log(`Crawl ${job.job_id} of ${job.name} queued again. Follow it with \`docdex crawl status ${job.job_id}\`.`);
        return job;
      }
      const { followToEnd } = await import('../../cli/crawl-follow.js');
      // Awaited here, not returned bare: the finally below must not close the database mid-crawl.
      return await followToEnd(db, this.settings, job, {
        tty: this.isTty,
        json: this.jsonEnabled(),
        log: (line) => this.log(line),
        warn: (line) => this.logToStderr(line),
      });
    } finally {
      await db.close();
    }
  }
}
