import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { startAgentServer } from '../../core/agent-server/control.js';
import type { AgentServerReport } from '../../core/agent-server/control.js';

export default class AgentRestart extends BaseCommand<typeof AgentRestart> {
  static override summary = 'Restart the agent server, e.g. after an agent configuration change that needs one.';
  static override examples = ['<%= config.bin %> agent restart'];
  static override flags = {
    wait: Flags.boolean({ description: 'Wait until the server answers again.', default: true, allowNo: true }),
    timeout: Flags.integer({ description: 'Seconds to wait.', default: 90, min: 1 }),
  };

  async run(): Promise<AgentServerReport> {
    const state = await startAgentServer(this.settings, { restart: true, wait: this.flags.wait, timeoutMs: this.flags.timeout * 1000 });
    this.log(this.flags.wait ? `Agent server running at ${state.endpoint} (pid ${state.pid}).` : 'Restart requested.');
    return state;
  }
}
