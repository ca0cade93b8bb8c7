import { BaseCommand } from '../../cli/base-command.js';
import { agentServerStatus } from '../../core/agent-server/control.js';
import type { AgentServerReport } from '../../core/agent-server/control.js';

export default class AgentStatus extends BaseCommand<typeof AgentStatus> {
  static override summary = 'Show whether the agent server runs, who supervises it, and its last error.';
  static override examples = ['<%= config.bin %> agent status', '<%= config.bin %> agent status --json'];

  async run(): Promise<AgentServerReport> {
    const s = await agentServerStatus(this.settings);
    const since = (t: number | null) => (t === null ? '' : ` since ${new Date(t).toISOString()}`);
    this.log(`status:     ${s.status}${s.status === 'running' ? since(s.startedAt) : ''} (desired: ${s.desired})`);
    this.log(`endpoint:   ${s.endpoint}${s.pid === null ? '' : ` (pid ${s.pid})`}`);
    this.log(`supervisor: ${s.supervised ? s.supervisor : 'none (is `docdex serve` running?)'}`);
    if (s.restarts > 0) this.log(`restarts:   ${s.restarts}${s.lastExit ? ` (last exit: ${s.lastExit})` : ''}`);
    if (s.retryAt !== null) this.log(`next try:   ${new Date(s.retryAt).toISOString()}`);
    if (s.lastError) this.log(`last error: ${s.lastError}`);
    this.log(`log file:   ${s.logFile}`);
    return s;
  }
}
