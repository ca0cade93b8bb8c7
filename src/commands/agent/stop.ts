import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { stopAgentServer } from '../../core/agent-server/control.js';
import type { AgentServerReport } from '../../core/agent-server/control.js';

export default class AgentStop extends BaseCommand<typeof AgentStop> {
  static override summary = 'Stop the agent server; the daemon keeps it stopped until `docdex agent start`.';
  static override examples = ['<%= config.bin %> agent stop'];
  static override flags = {
    wait: Flags.boolean({ description: 'Wait until it has stopped.', default: true, allowNo: true }),
    timeout: Flags.integer({ description: 'Seconds to wait.', default: 60, min: 1 }),
  };

  async run(): Promise<AgentServerReport> {
    const state = await stopAgentServer(this.settings, { wait: this.flags.wait, timeoutMs: this.flags.timeout * 1000 });
    this.log(this.flags.wait ? 'Agent server stopped.' : 'Stop requested.');
    return state;
  }
}
