import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { listAgentSessions } from '../../core/agent-server/sessions.js';
import type { AgentSession } from '../../core/agent-server/sessions.js';

export default class AgentSessions extends BaseCommand<typeof AgentSessions> {
  static override summary = "List the agent server's sessions, most recently active first.";
  static override examples = ['<%= config.bin %> agent sessions', '<%= config.bin %> agent sessions --limit 5 --json'];
  static override flags = {
    limit: Flags.integer({ description: 'At most this many.', default: 50, min: 1, max: 1000 }),
    search: Flags.string({ description: 'Only sessions whose title contains this.' }),
  };

  async run(): Promise<{ sessions: AgentSession[] }> {
    const sessions = await listAgentSessions(this.settings, { limit: this.flags.limit, ...(this.flags.search === undefined ? {} : { search: this.flags.search }) });
    if (sessions.length === 0) this.log('No sessions.');
    for (const s of sessions) {
      const when = s.updatedAt === null ? '' : new Date(s.updatedAt).toISOString().slice(0, 16).replace('T', ' ');
      this.log(`${s.id.padEnd(32)} ${when.padEnd(17)} ${s.title.slice(0, 60).padEnd(60)} ${s.directory ?? ''}`);
    }
    return { sessions };
  }
}
