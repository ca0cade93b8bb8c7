import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { forceFlag } from '../../cli/flags.js';
import { versionFlag } from '../../cli/index-flags.js';
import { confirm } from '../../cli/prompt.js';
import { openDatabase } from '../../core/db/connect.js';
import { UserError } from '../../core/errors.js';
import { deleteSource, getSource } from '../../core/sources/manage.js';
import type { DeleteResult } from '../../core/sources/manage.js';
import { plural } from '../../cli/plural.js';

export default class SourcesDelete extends BaseCommand<typeof SourcesDelete> {
  static override summary = 'Delete a source with all its pages, snippets and jobs.';
  static override description = 'Asks for confirmation on a terminal; without one, --force is required.';
  static override examples = ['<%= config.bin %> sources delete fastapi', '<%= config.bin %> sources delete 6f1c... --force --json'];
  static override args = { source: Args.string({ description: 'Source name (fuzzy) or id.', required: true }) };
  static override flags = { version: versionFlag, force: forceFlag };

  async run(): Promise<DeleteResult> {
    const db = await openDatabase(this.settings, { max: 4, applicationName: 'docdex-sources' });
    try {
      // Resolved first, so the question names exactly what a fuzzy name matched.
      const s = await getSource(db.pool, this.args.source, this.flags.version);
      if (!this.flags.force) {
        const label = `${s.name}${s.version ? ` ${s.version}` : ''}`;
        const ok = await confirm(`Delete ${label} (${plural(s.snippet_count, 'snippet')} on ${plural(s.page_count, 'page')})?`);
        if (!ok) throw new UserError('Aborted: nothing was deleted.', { code: 'aborted' });
      }
      const result = await deleteSource(db.pool, s.id);
      this.log(
        `Deleted ${result.name}${result.version ? ` ${result.version}` : ''}: ${plural(result.documents, 'page')}, ${plural(result.snippets, 'snippet')}, ${plural(result.crawl_jobs + result.upload_jobs, 'job')}.`,
      );
      return result;
    } finally {
      await db.close();
    }
  }
}
