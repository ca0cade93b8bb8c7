import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { startAgentServer } from '../../core/agent-server/control.js';
import type { AgentServerReport } from '../../core/agent-server/control.js';

export default class AgentStart extends BaseCommand<typeof AgentStart> {
  static override summary = 'Start the agent server (opencode), supervised by the running docdex daemon.';
  static override description =
    'Records that the agent server should run; `docdex serve` starts it (and restarts it after a crash), now and after its own restarts, until `docdex agent stop`. ' +
    'It binds to AGENT_HOST:AGENT_PORT (default 127.0.0.1:4096); a non-loopback host needs OPENCODE_SERVER_PASSWORD.';
  static override examples = ['<%= config.bin %> agent start', '<%= config.bin %> agent start --no-wait --json'];
  static override flags = {
    wait: Flags.boolean({ description: 'Wait until the server answers.', default: true, allowNo: true }),
    timeout: Flags.integer({ description: 'Seconds to wait.', default: 90, min: 1 }),
  };

  async run(): Promise<AgentServerReport> {
    const state = await startAgentServer(this.settings, { wait: this.flags.wait, timeoutMs: this.flags.timeout * 1000 });
    this.log(this.flags.wait ? `Agent server running at ${state.endpoint} (pid ${state.pid}).` : 'Start requested.');
    return state;
  }
}
