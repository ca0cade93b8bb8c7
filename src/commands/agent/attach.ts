import { spawn } from 'node:child_process';
import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { attachPlan } from '../../core/agent-server/sessions.js';
import { UserError } from '../../core/errors.js';

export default class AgentAttach extends BaseCommand<typeof AgentAttach> {
  static override summary = "Open opencode's terminal UI attached to the managed agent server.";
  static override description = 'Runs `opencode attach` against AGENT_HOST:AGENT_PORT (with the server password when one is set). Find session ids with `docdex agent sessions`.';
  static override examples = ['<%= config.bin %> agent attach', '<%= config.bin %> agent attach --session ses_abc123'];
  static override enableJsonFlag = false;
  static override flags = {
    session: Flags.string({ char: 's', description: 'Continue this session.' }),
    dir: Flags.string({ description: 'Project folder to open (default: the assistant workspace).' }),
  };

  async run(): Promise<void> {
    if (!process.stdin.isTTY || !process.stdout.isTTY) throw new UserError('`docdex agent attach` needs a terminal.', { exitCode: 2, hint: 'Use `docdex agent sessions` from scripts.' });
    const plan = await attachPlan(this.settings, {
      ...(this.flags.session === undefined ? {} : { session: this.flags.session }),
      ...(this.flags.dir === undefined ? {} : { directory: this.flags.dir }),
    });
    const child = spawn(plan.command, plan.args, { env: plan.env, stdio: 'inherit' });
    // The terminal UI handles Ctrl-C itself; the CLI only waits for it.
    const ignore = () => undefined;
    process.on('SIGINT', ignore);
    try {
      const code = await new Promise<number>((resolve, reject) => {
        child.once('error', reject);
        child.once('exit', (status, signal) => resolve(status ?? (signal ? 128 : 1)));
      });
      if (code !== 0) throw new UserError(`opencode attach exited with code ${code}.`, { exitCode: code, code: 'attach_failed' });
    } finally {
      process.off('SIGINT', ignore);
    }
  }
}
