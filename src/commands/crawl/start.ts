import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { crawlRequestFlags, requestFromFlags } from '../../cli/request-flags.js';
import { liveWorkers, startCrawl } from '../../core/crawl/jobs.js';
import type { CrawlJob } from '../../core/crawl/jobs.js';
import { parseCrawlRequest } from '../../core/crawl-request.js';
import type { CrawlRequestInput } from '../../core/crawl-request.js';
import { openDatabase } from '../../core/db/connect.js';

export default class CrawlStart extends BaseCommand<typeof CrawlStart> {
  static override summary = 'Crawl documentation from start URLs and index its code snippets.';
  static override description =
    'Follows links up to --depth (0: only the given URLs, 1: and their links, up to 3), staying on the start hosts unless --domain says otherwise. CRAWL_DELAY seconds separate requests to one host across all workers; robots.txt is honoured. Without --wait the job is queued for `docdex worker` or `docdex serve`; with --wait it runs here when no worker is running, and the exit code says whether it completed.';
  static override examples = [
    '<%= config.bin %> crawl start https://docs.python.org/3/library/json.html --depth 1 --wait',
    '<%= config.bin %> crawl start https://fastapi.tiangolo.com/ --name fastapi --version 0.115 --url-patterns "/tutorial/**,/advanced/**"',
    '<%= config.bin %> crawl start https://example.com/docs/ --depth 2 --concurrency 5 --wait --json',
  ];
  static override strict = false;
  static override args = { url: Args.string({ description: 'Start URL (several may be given).', required: true }) };
  static override flags = {
    // One flag per crawl request field, with the help text, bounds and defaults its schema states.
    ...crawlRequestFlags(),
    wait: Flags.boolean({ description: 'Wait for the crawl to finish (running it here if no worker is running).', default: false }),
  };

  async run(): Promise<CrawlJob> {
    const { argv } = await this.parse(CrawlStart);
    const f = this.flags;
    const request: CrawlRequestInput = { start_urls: argv.map(String), ...requestFromFlags(f) };
    // Validated before the database is even opened: bad input exits 2 and creates nothing.
    parseCrawlRequest(request, { ceiling: this.settings.crawl.maxConcurrent });
    const db = await openDatabase(this.settings, { max: 8, applicationName: 'docdex-crawl' });
    try {
      // URLs the local user typed: they may reach their localhost docs (never other internal ranges), on their own site.
      const job = await startCrawl(db, this.settings, request, { provenance: 'user' });
      if (!f.wait) {
        const workers = await liveWorkers(db.pool);
        this.log(`Crawl of ${job.name} queued: job ${job.job_id}. Follow it with \`docdex crawl status ${job.job_id}\`.`);
        if (workers.length === 0) this.logToStderr('No worker is running: start `docdex worker` or `docdex serve`, or re-run with --wait.');
        return job;
      }
      // The worker, HTTP client and extractor load only when this process may crawl.
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
