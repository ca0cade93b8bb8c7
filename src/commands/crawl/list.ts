import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { CRAWL_JOB_STATUSES, listCrawlJobs } from '../../core/crawl/jobs.js';
import type { CrawlJob, CrawlJobStatus } from '../../core/crawl/jobs.js';
import { openDatabase } from '../../core/db/connect.js';
import { sourceIdsOf } from '../../core/jobs/jobs.js';
import { plural } from '../../cli/plural.js';

export default class CrawlList extends BaseCommand<typeof CrawlList> {
  static override summary = 'List crawl jobs, newest first.';
  static override examples = ['<%= config.bin %> crawl list', '<%= config.bin %> crawl list --status running --json'];
  static override flags = {
    status: Flags.string({ description: 'Only jobs in this state.', options: [...CRAWL_JOB_STATUSES] }),
    source: Flags.string({ description: 'Only jobs of this library: a name (every version), name@version, or a source id.' }),
    limit: Flags.integer({ char: 'n', description: 'Jobs per page (1-500).', default: 20, min: 1, max: 500 }),
    offset: Flags.integer({ description: 'Skip this many jobs.', default: 0, min: 0 }),
  };

  async run(): Promise<{ items: CrawlJob[]; total: number; limit: number; offset: number }> {
    const db = await openDatabase(this.settings, { max: 2, applicationName: 'docdex-crawl' });
    try {
      const page = await listCrawlJobs(db.pool, {
        limit: this.flags.limit,
        offset: this.flags.offset,
        ...(this.flags.status === undefined ? {} : { status: this.flags.status as CrawlJobStatus }),
        ...(this.flags.source === undefined ? {} : { sourceIds: await sourceIdsOf(db.pool, this.flags.source) }),
      });
      if (page.items.length === 0) {
        this.log(page.total === 0 ? 'No crawl jobs.' : 'No more crawl jobs.');
        return page;
      }
      const rows = page.items.map((j) => [
        j.job_id.slice(0, 8),
        j.status === 'enhancing' ? `enhancing ${j.llm_pages_done}/${j.llm_pages_total}` : j.status,
        `${j.pages_crawled}/${j.pages_found}`,
        String(j.snippets_stored),
        j.created_at.slice(0, 19).replace('T', ' '),
        `${j.name}${j.version ? ` ${j.version}` : ''}`,
      ]);
      const head = ['JOB', 'STATUS', 'PAGES', 'SNIPPETS', 'CREATED', 'NAME'];
      const numeric = new Set([2, 3]);
      const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
      for (const r of [head, ...rows])
        this.log(
          r
            .map((cell, i) => (numeric.has(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
            .join('  ')
            .trimEnd(),
        );
      const next = page.offset + page.items.length;
      if (page.total > next) this.log(`(${plural(page.total, 'job')}; next page: --offset ${next})`);
      return page;
    } finally {
      await db.close();
    }
  }
}
