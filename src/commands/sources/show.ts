import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { versionFlag } from '../../cli/index-flags.js';
import { openDatabase } from '../../core/db/connect.js';
import { getSource } from '../../core/sources/manage.js';
import type { SourceDetails } from '../../core/sources/manage.js';
import { plural } from '../../cli/plural.js';

export default class SourcesShow extends BaseCommand<typeof SourcesShow> {
  static override summary = 'Show one source: counts, crawl settings, languages and recent jobs.';
  static override examples = ['<%= config.bin %> sources show python', '<%= config.bin %> sources show 6f1c... --json'];
  static override args = { source: Args.string({ description: 'Source name (fuzzy) or id.', required: true }) };
  static override flags = { version: versionFlag };

  async run(): Promise<SourceDetails> {
    const db = await openDatabase(this.settings, { max: 4, applicationName: 'docdex-sources' });
    try {
      const s = await getSource(db.pool, this.args.source, this.flags.version);
      const c = s.crawl_config;
      this.log(`${s.name}${s.version ? ` ${s.version}` : ''}  (${s.kind}, id ${s.id})`);
      if (s.description) this.log(`  ${s.description}`);
      this.log(`  base URL:     ${s.base_url ?? '-'}`);
      this.log(`  snippets:     ${s.snippet_count} on ${plural(s.page_count, 'page')}; ${plural(s.version_count, 'version')} of ${s.name}`);
      this.log(`  languages:    ${s.languages.map((l) => `${l.language} ${l.snippets}`).join(', ') || '-'}`);
      if (s.kind === 'crawl') {
        this.log(`  start URLs:   ${(c.start_urls ?? []).join(' ') || '-'}`);
        this.log(`  depth:        ${c.max_depth ?? '-'}   concurrency: ${c.max_concurrent_crawls ?? '-'}   domain: ${c.domain_filter ?? '-'}`);
        this.log(`  include:      ${(c.url_patterns ?? []).join(' ') || '-'}`);
        this.log(`  exclude:      ${(c.exclude_patterns ?? []).join(' ') || '-'}`);
      }
      this.log(`  last crawled: ${s.last_crawled_at ? new Date(s.last_crawled_at).toISOString() : '-'}`);
      for (const j of s.jobs) this.log(`  ${j.kind} job ${j.id}  ${j.status}  ${new Date(j.created_at).toISOString()}`);
      return s;
    } finally {
      await db.close();
    }
  }
}
