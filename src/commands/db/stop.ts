import { BaseCommand } from '../../cli/base-command.js';
import { stopDatabase } from '../../core/db/admin.js';
import type { EmbeddedStatus } from '../../core/db/embedded.js';

export default class DbStop extends BaseCommand<typeof DbStop> {
  static override summary = 'Stop the embedded PostgreSQL.';
  static override examples = ['<%= config.bin %> db stop'];

  async run(): Promise<EmbeddedStatus & { wasRunning: boolean; cutOff: string[] }> {
    const status = await stopDatabase(this.settings);
    this.log(status.wasRunning ? 'embedded PostgreSQL stopped' : 'embedded PostgreSQL was not running');
    if (status.cutOff.length > 0) {
      // Connections are named by what opened them (docdex-serve, docdex-listen), not by process: say what follows.
      this.logToStderr(
        `Warning: other docdex processes were connected (${status.cutOff.join(', ')}); they cannot reach the index, and a running \`docdex serve\` answers 503, until \`docdex db start\`.`,
      );
    }
    return status;
  }
}
