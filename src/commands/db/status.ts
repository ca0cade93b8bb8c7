import { BaseCommand } from '../../cli/base-command.js';
import { databaseStatus } from '../../core/db/admin.js';
import type { DatabaseStatus } from '../../core/db/admin.js';

export default class DbStatus extends BaseCommand<typeof DbStatus> {
  static override summary = 'Show where the database is and whether it is up.';
  static override examples = ['<%= config.bin %> db status', '<%= config.bin %> db status --json'];

  async run(): Promise<DatabaseStatus> {
    const status = await databaseStatus(this.settings);
    if (status.mode === 'embedded') {
      this.log(`embedded PostgreSQL ${status.serverVersion ?? ''}`.trim());
      this.log(`  state:    ${status.running ? `running (pid ${status.pid}, 127.0.0.1:${status.port})` : status.initialised ? 'stopped' : 'not initialised'}`);
      if (status.socketDir) this.log(`  socket:   ${status.socketDir}`);
      this.log(`  data:     ${status.dataDir}`);
      this.log(`  schema:   ${status.schemaVersion ?? '-'} of ${status.latestVersion}`);
    } else {
      this.log(`external PostgreSQL ${status.database}`);
      this.log(`  state:    ${status.reachable ? `reachable (server ${status.serverVersion})` : `unreachable: ${status.error}`}`);
      this.log(`  schema:   ${status.schemaVersion ?? '-'} of ${status.latestVersion}`);
    }
    return status;
  }
}
