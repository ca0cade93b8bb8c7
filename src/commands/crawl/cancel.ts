import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { cancelCrawl, resolveCrawlJobId } from '../../core/crawl/jobs.js';
import type { CrawlJob } from '../../core/crawl/jobs.js';
import { openDatabase } from '../../core/db/connect.js';
import { plural } from '../../cli/plural.js';

export default class CrawlCancel extends BaseCommand<typeof CrawlCancel> {
  static override summary = 'Cancel a queued or running crawl; every worker stops within one page fetch.';
  static override examples = ['<%= config.bin %> crawl cancel 3f2a9c1e'];
  static override args = { job: Args.string({ description: 'Job id (or a unique prefix of it).', required: true }) };

  async run(): Promise<CrawlJob> {
    const db = await openDatabase(this.settings, { max: 2, applicationName: 'docdex-crawl' });
    try {
      const job = await cancelCrawl(db.pool, await resolveCrawlJobId(db.pool, this.args.job));
      this.log(`Cancelled crawl ${job.job_id} of ${job.name} after ${plural(job.pages_crawled, 'page')}. Resume with \`docdex crawl resume ${job.job_id}\`.`);
      return job;
    } finally {
      await db.close();
    }
  }
}
