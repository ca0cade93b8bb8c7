import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { versionFlag } from '../../cli/index-flags.js';
import type { CrawlJob } from '../../core/crawl/index.js';
import { openDatabase } from '../../core/db/connect.js';
import { recrawlAnySource } from '../../core/crawl/recrawl.js';
import type { UploadJob } from '../../core/upload/index.js';

export default class SourcesRecrawl extends BaseCommand<typeof SourcesRecrawl> {
  static override summary = 'Re-fetch a source with its stored crawl settings (a git source: check its ref out again); unchanged pages are skipped.';
  static override examples = ['<%= config.bin %> sources recrawl python', '<%= config.bin %> sources recrawl python --version 3.12 --json'];
  static override args = { source: Args.string({ description: 'Source name (fuzzy) or id.', required: true }) };
  static override flags = { version: versionFlag };

  async run(): Promise<CrawlJob | UploadJob> {
    const db = await openDatabase(this.settings, { max: 4, applicationName: 'docdex-sources' });
    try {
      // The local user asks: start URLs or a repository they typed keep loopback (and a local path), as `crawl start`
      // has; what a registry, a project file, a pack or an API caller stored stays under the remote rules.
      const started = await recrawlAnySource(db, this.settings, this.args.source, { askedBy: 'user', ...(this.flags.version === undefined ? {} : { version: this.flags.version }) });
      if (started.kind === 'git') {
        this.log(`Checkout queued: upload job ${started.job.id} (${started.job.file_count} changed files); \`docdex serve\` or \`docdex worker\` processes it.`);
      } else {
        this.log(`Recrawl queued: job ${started.job.id}. Follow it with \`docdex crawl status ${started.job.id}\`; \`docdex serve\` or \`docdex worker\` runs it.`);
      }
      return started.job;
    } finally {
      await db.close();
    }
  }
}
