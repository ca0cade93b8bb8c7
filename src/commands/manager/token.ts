import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { managerToken } from '../../core/agent/manage.js';
import type { ManagerToken } from '../../core/agent/token.js';

export default class ManagerTokenCommand extends BaseCommand<typeof ManagerTokenCommand> {
  static override summary = 'Print the bearer token of the internal API (/api/internal), creating it if needed.';
  static override description = 'External clients send it as "Authorization: Bearer <token>". With --rotate the old token stops working at once; restart the agent server afterwards.';
  static override examples = ['<%= config.bin %> manager token', '<%= config.bin %> manager token --rotate --json'];
  static override flags = { rotate: Flags.boolean({ description: 'Replace the token with a new random one.', default: false }) };

  async run(): Promise<ManagerToken> {
    const token = await managerToken(this.settings, { rotate: this.flags.rotate });
    this.log(token.token);
    return token;
  }
}
