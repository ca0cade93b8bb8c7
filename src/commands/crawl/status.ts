import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { openDatabase } from '../../core/db/connect.js';
import { crawlJobReport } from '../../core/stats/job-errors.js';
import { llmProgressText } from '../../core/llm/progress-text.js';
import { routesText } from '../../core/crawl/jobs.js';
import type { CrawlJobReport } from '../../core/stats/job-errors.js';
import { plural } from '../../cli/plural.js';

/** The latest failed pages shown (the dashboard's job view shows them too); `--json` has the same list. */
const LAST_ERRORS = 5;

export default class CrawlStatus extends BaseCommand<typeof CrawlStatus> {
  static override summary = 'Show a crawl job: state, page and snippet counts, rate, ETA, error, and its last failed pages.';
  static override examples = ['<%= config.bin %> crawl status 3f2a9c1e', '<%= config.bin %> crawl status 3f2a9c1e-... --json'];
  static override args = { job: Args.string({ description: 'Job id (or a unique prefix of it).', required: true }) };

  async run(): Promise<CrawlJobReport> {
    const db = await openDatabase(this.settings, { max: 2, applicationName: 'docdex-crawl' });
    try {
      const job = await crawlJobReport(db.pool, this.args.job, { limit: LAST_ERRORS });
      this.log(`${job.name}${job.version ? ` ${job.version}` : ''}: ${job.status} (job ${job.job_id})`);
      this.log(`  pages:    ${job.pages_crawled} crawled, ${job.pages_skipped} skipped, ${job.pages_failed} failed, ${job.pages_found} found`);
      this.log(`  snippets: ${job.snippets_stored}`);
      const routes = routesText(job.routes);
      if (routes) this.log(`  read:     ${routes}`);
      if (job.pages_rendered > 0) this.log(`  rendered: ${plural(job.pages_rendered, 'page')} in headless Chromium (--render ${job.render})`);
      if (job.render_hint) this.log(`  render:   ${job.render_hint}`);
      if (job.llm_enhance && job.llm_pages_total > 0) this.log(`  llm:      ${llmProgressText(job)}`);
      if (job.status === 'running') {
        this.log(`  rate:     ${job.pages_per_second} pages/s, ETA ${job.eta_seconds === null ? '-' : `${job.eta_seconds} s`}`);
        if (job.current_url) this.log(`  fetching: ${job.current_url}`);
      }
      this.log(`  start:    ${job.start_urls.join(' ')} (depth ${job.max_depth}, concurrency ${job.max_concurrent_crawls})`);
      this.log(`  created:  ${job.created_at}${job.completed_at ? `, finished ${job.completed_at}` : ''}`);
      if (job.error) this.log(`  error:    ${job.error}`);
      if (job.recent_errors.length > 0) {
        const more = job.pages_failed - job.recent_errors.length;
        this.log(`  last errors${more > 0 ? ` (${job.recent_errors.length} of ${job.pages_failed})` : ''}:`);
        for (const e of job.recent_errors) this.log(`    ${e.url}  ${e.error}`);
      }
      return job;
    } finally {
      await db.close();
    }
  }
}
