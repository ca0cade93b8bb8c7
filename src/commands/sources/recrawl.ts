import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { versionFlag } from '../../cli/index-flags.js';
import type { CrawlJob } from '../../core/crawl/index.js';
import { openDatabase } from '../../core/db/connect.js';
import { recrawlAnySource } from '../../core/crawl/recrawl.js';
import type { JobChange } from '../../core/jobs/control.js';
import type { UploadJob } from '../../core/upload/job-rows.js';

export default class SourcesRecrawl extends BaseCommand<typeof SourcesRecrawl> {
  static override summary = 'Re-fetch a source with its stored crawl settings (a git source: check its ref out again); unchanged pages are skipped.';
  static override examples = ['<%= config.bin %> sources recrawl python', '<%= config.bin %> sources recrawl python --version 3.12 --wait --json'];
  static override args = { source: Args.string({ description: 'Source name (fuzzy) or id.', required: true }) };
  static override flags = {
    version: versionFlag,
    wait: Flags.boolean({ description: 'Run the job here (sharing it with any running worker) and wait until it is done; the exit code says whether it completed.', default: false }),
  };

  async run(): Promise<CrawlJob | UploadJob> {
    const db = await openDatabase(this.settings, { max: 8, applicationName: 'docdex-sources' });
    try {
      // The local user asks: start URLs or a repository they typed keep loopback (and a local path), as `crawl start`
      // has; what a registry, a project file, a pack or an API caller stored stays under the remote rules.
      const started = await recrawlAnySource(db, this.settings, this.args.source, { askedBy: 'user', ...(this.flags.version === undefined ? {} : { version: this.flags.version }) });
      const change: JobChange = started.kind === 'git' ? { kind: 'upload', job: started.job } : { kind: 'crawl', job: started.job };
      if (!this.flags.wait) {
        const id = change.kind === 'crawl' ? change.job.job_id : change.job.id;
        const what = change.kind === 'crawl' ? 'Recrawl queued: crawl job' : `Checkout queued (${started.kind === 'git' ? started.job.file_count : 0} changed files): upload job`;
        this.log(`${what} ${id}. Follow it with \`docdex jobs status ${id} --wait\`; \`docdex serve\` or \`docdex worker\` runs it.`);
        return started.job;
      }
      const { followJobToEnd } = await import('../../cli/job-follow.js');
      const final = await followJobToEnd(db, this.settings, change, { tty: this.isTty, json: this.jsonEnabled(), log: (line) => this.log(line), warn: (line) => this.logToStderr(line) });
      return final.job;
    } finally {
      await db.close();
    }
  }
}
