import { BaseCommand } from '../../../cli/base-command.js';
import { listCredentials } from '../../../core/agent-server/manage.js';
import type { GitCredentialRecord } from '../../../core/agent-server/git-credentials.js';

export default class GitCredentialsList extends BaseCommand<typeof GitCredentialsList> {
  static override summary = 'List the stored git credentials (tokens are never shown).';
  static override examples = ['<%= config.bin %> manager git-credentials list', '<%= config.bin %> manager git-credentials list --json'];

  async run(): Promise<{ credentials: GitCredentialRecord[] }> {
    const credentials = await listCredentials(this.settings);
    if (credentials.length === 0) this.log('No git credentials. Add one with `docdex manager git-credentials add --host github.com`.');
    for (const c of credentials) {
      const extra = [c.username ? `user ${c.username}` : '', c.repoName ? `repo ${c.repoName}` : '', c.isDefault ? 'default' : '', c.label ?? ''].filter(Boolean).join(', ');
      this.log(`${c.id.padEnd(20)} ${c.host.padEnd(28)} ${extra}`);
    }
    return { credentials };
  }
}
