import { BaseCommand } from '../../cli/base-command.js';
import { crawlHealth } from '../../core/crawl/jobs.js';
import type { CrawlHealth } from '../../core/crawl/jobs.js';
import { openDatabase } from '../../core/db/connect.js';
import { plural } from '../../cli/plural.js';

export default class CrawlHealthCommand extends BaseCommand<typeof CrawlHealthCommand> {
  static override summary = 'Report crawl workers, page-queue depth and stalled jobs (exit code 1 when any job is stalled).';
  static override examples = ['<%= config.bin %> crawl health', '<%= config.bin %> crawl health --json'];

  async run(): Promise<CrawlHealth> {
    const db = await openDatabase(this.settings, { max: 2, applicationName: 'docdex-crawl' });
    try {
      const h = await crawlHealth(db);
      this.log(`workers:  ${h.workers.live} live, ${plural(h.workers.pages_in_flight, 'page')} in flight`);
      for (const w of h.workers.list) {
        this.log(`  ${w.worker_id.slice(0, 8)}  ${w.client_addr ?? 'local'}  since ${w.connected_at}  ${plural(w.pages_in_flight, 'page')}, ${plural(w.controlling, 'job')} controlled`);
      }
      this.log(`queue:    ${plural(h.queue.queued, 'page')} queued, ${h.queue.active} active, ${h.queue.retry} retrying`);
      this.log(`jobs:     ${h.jobs.running} running, ${h.jobs.queued} queued`);
      if (h.stalled.length === 0) this.log('stalled:  none');
      for (const s of h.stalled) this.log(`stalled:  ${s.job_id} ${s.name} (${s.status}): ${s.reason}`);
      if (!h.healthy) process.exitCode = 1;
      return h;
    } finally {
      await db.close();
    }
  }
}
