import { BaseCommand } from '../../cli/base-command.js';
import { startDatabase } from '../../core/db/admin.js';
import type { EmbeddedStatus } from '../../core/db/embedded.js';

export default class DbStart extends BaseCommand<typeof DbStart> {
  static override summary = 'Start the embedded PostgreSQL (initialising it on first use).';
  static override examples = ['<%= config.bin %> db start'];

  async run(): Promise<EmbeddedStatus> {
    const status = await startDatabase(this.settings);
    this.log(`embedded PostgreSQL running (pid ${status.pid}, 127.0.0.1:${status.port})`);
    return status;
  }
}
