import { BaseCommand } from '../../cli/base-command.js';
import { stopDatabase } from '../../core/db/admin.js';
import type { EmbeddedStatus } from '../../core/db/embedded.js';

export default class DbStop extends BaseCommand<typeof DbStop> {
  static override summary = 'Stop the embedded PostgreSQL.';
  static override examples = ['<%= config.bin %> db stop'];

  async run(): Promise<EmbeddedStatus & { wasRunning: boolean }> {
    const status = await stopDatabase(this.settings);
    this.log(status.wasRunning ? 'embedded PostgreSQL stopped' : 'embedded PostgreSQL was not running');
    return status;
  }
}
