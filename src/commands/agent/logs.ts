import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { followAgentServerLog, readAgentServerLog } from '../../core/agent-server/control.js';

export default class AgentLogs extends BaseCommand<typeof AgentLogs> {
  static override summary = "Print the agent server's output (the daemon writes it to a file in the workspace).";
  static override examples = ['<%= config.bin %> agent logs', '<%= config.bin %> agent logs -n 500', '<%= config.bin %> agent logs --follow'];
  static override flags = {
    lines: Flags.integer({ char: 'n', description: 'How many of the last lines.', default: 100, min: 1 }),
    follow: Flags.boolean({ char: 'f', description: 'Keep printing new lines until interrupted.', default: false, exclusive: ['json'] }),
  };

  async run(): Promise<{ file: string; lines: string[] }> {
    const log = await readAgentServerLog(this.settings, this.flags.lines);
    if (log.lines.length === 0 && !this.jsonEnabled()) this.logToStderr(`No output yet in ${log.file}.`);
    for (const line of log.lines) this.log(line);
    if (this.flags.follow) {
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort());
      await followAgentServerLog(this.settings, (text) => process.stdout.write(text), stop.signal);
    }
    return log;
  }
}
