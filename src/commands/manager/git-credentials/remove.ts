import { Args } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { removeCredential } from '../../../core/agent-server/manage.js';
import type { GitCredentialRecord } from '../../../core/agent-server/git-credentials.js';

export default class GitCredentialsRemove extends BaseCommand<typeof GitCredentialsRemove> {
  static override summary = 'Remove a stored git credential.';
  static override examples = ['<%= config.bin %> manager git-credentials remove gc_Xk3...'];
  static override args = { id: Args.string({ description: 'Credential id (see `docdex manager git-credentials list`).', required: true }) };

  async run(): Promise<{ deleted: true; credential: GitCredentialRecord }> {
    const credential = await removeCredential(this.settings, this.args.id);
    this.log(`Removed ${credential.id} (${credential.host}).`);
    return { deleted: true, credential };
  }
}
