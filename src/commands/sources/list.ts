import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { limitFlag, offsetFlag } from '../../cli/index-flags.js';
import { openDatabase } from '../../core/db/connect.js';
import { listSources } from '../../core/sources/manage.js';
import type { Page, SourceSummary } from '../../core/sources/manage.js';

/**
 * One row per source, grouped by library as listSources orders them: a library's name (and its version count)
 * on its first row only, its versions below it, the latest first.
 */
function tableRows(items: SourceSummary[]): string[][] {
  return items.map((s, i) => {
    const sameLibrary = i > 0 && items[i - 1]!.name.toLowerCase() === s.name.toLowerCase();
    return [
      sameLibrary ? '' : s.name,
      s.version || '-',
      s.kind,
      String(s.snippet_count),
      String(s.page_count),
      sameLibrary ? '' : String(s.version_count),
      s.last_crawled_at ? new Date(s.last_crawled_at).toISOString().slice(0, 16).replace('T', ' ') : '-',
      s.id,
    ];
  });
}

export default class SourcesList extends BaseCommand<typeof SourcesList> {
  static override summary = "List indexed sources with their snippet, page and version counts, each library's versions together, the latest first.";
  static override examples = ['<%= config.bin %> sources list', '<%= config.bin %> sources list --query fast --json'];
  static override flags = {
    query: Flags.string({ char: 'q', description: 'Only sources whose name is like this (fuzzy).' }),
    limit: limitFlag(50),
    offset: offsetFlag,
  };

  async run(): Promise<Page<SourceSummary>> {
    const db = await openDatabase(this.settings, { max: 2, applicationName: 'docdex-sources' });
    try {
      const page = await listSources(db.pool, {
        limit: this.flags.limit,
        offset: this.flags.offset,
        ...(this.flags.query === undefined ? {} : { query: this.flags.query }),
      });
      if (page.items.length === 0) {
        this.log(page.total === 0 ? 'No sources yet. Index one with `docdex crawl start <url>` or `docdex upload <dir>`.' : 'No more sources.');
        return page;
      }
      const rows = tableRows(page.items);
      const head = ['NAME', 'VERSION', 'KIND', 'SNIPPETS', 'PAGES', 'VERSIONS', 'LAST CRAWLED', 'ID'];
      const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
      for (const r of [head, ...rows])
        this.log(
          r
            .map((cell, i) => cell.padEnd(widths[i]!))
            .join('  ')
            .trimEnd(),
        );
      if (page.offset + page.items.length < page.total) this.log(`(${page.items.length} of ${page.total}; next page: --offset ${page.offset + page.items.length})`);
      return page;
    } finally {
      await db.close();
    }
  }
}
