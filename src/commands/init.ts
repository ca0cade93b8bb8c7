import { Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { forceFlag } from '../cli/flags.js';
import { confirm } from '../cli/prompt.js';
import { initDatabase } from '../core/init.js';
import type { InitResult } from '../core/init.js';
import { UserError } from '../core/errors.js';

export default class Init extends BaseCommand<typeof Init> {
  static override summary = 'Create or upgrade the database schema (idempotent).';
  static override description =
    'Starts the embedded PostgreSQL when no external database is configured, applies pending migrations and installs the job queue. With --drop, first deletes ALL indexed data.';
  static override examples = ['<%= config.bin %> init', '<%= config.bin %> init --drop --force'];
  static override flags = {
    drop: Flags.boolean({ description: 'Delete all data (sources, snippets, jobs, queues) and recreate the schema.', default: false }),
    force: forceFlag,
  };

  async run(): Promise<InitResult> {
    if (this.flags.drop && !this.flags.force) {
      const ok = await confirm('Delete ALL docdex data (sources, documents, snippets, jobs)?');
      if (!ok) throw new UserError('Aborted: nothing was deleted.', { code: 'aborted' });
    }
    const result = await initDatabase(this.settings, { drop: this.flags.drop });
    // Every migration applied now means the schema was created: their names say nothing to a new user.
    const created = result.applied.length > 0 && result.applied.length === result.version;
    const what = created ? `created the schema` : result.applied.length > 0 ? `applied ${result.applied.join(', ')}` : 'schema already up to date';
    this.log(`${result.dropped ? 'Dropped all data; ' : ''}${what} (version ${result.version}) on ${result.mode} database ${result.database}.`);
    return result;
  }
}
