import { Args } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { forceFlag } from '../../../cli/flags.js';
import { confirm } from '../../../cli/prompt.js';
import { removeCredential } from '../../../core/agent-server/manage.js';
import type { GitCredentialRecord } from '../../../core/agent-server/git-credentials.js';
import { UserError } from '../../../core/errors.js';

export default class GitCredentialsRemove extends BaseCommand<typeof GitCredentialsRemove> {
  static override summary = 'Remove a stored git credential (asks first on a terminal; --force skips).';
  static override examples = ['<%= config.bin %> manager git-credentials remove gc_Xk3...', '<%= config.bin %> manager git-credentials remove gc_Xk3... --force'];
  static override args = { id: Args.string({ description: 'Credential id (see `docdex manager git-credentials list`).', required: true }) };
  static override flags = { force: forceFlag };

  async run(): Promise<{ deleted: true; credential: GitCredentialRecord }> {
    if (!this.flags.force && !(await confirm(`Remove git credential ${this.args.id}? Its token is deleted for good.`))) {
      throw new UserError('Aborted: nothing was removed.', { code: 'aborted' });
    }
    const credential = await removeCredential(this.settings, this.args.id);
    this.log(`Removed ${credential.id} (${credential.host}).`);
    return { deleted: true, credential };
  }
}
