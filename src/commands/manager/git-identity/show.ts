import { BaseCommand } from '../../../cli/base-command.js';
import { readGitIdentity } from '../../../core/agent/manage.js';

export default class GitIdentityShow extends BaseCommand<typeof GitIdentityShow> {
  static override summary = 'Show the commit identity forwarded into the sandbox.';
  static override examples = ['<%= config.bin %> manager git-identity show --json'];

  async run(): Promise<{ name: string | null; email: string | null }> {
    const identity = await readGitIdentity(this.settings);
    this.log(identity.name || identity.email ? `${identity.name ?? '?'} <${identity.email ?? '?'}>` : 'No git identity. Set one with `docdex manager git-identity set --name NAME --email EMAIL`.');
    return { name: identity.name ?? null, email: identity.email ?? null };
  }
}
