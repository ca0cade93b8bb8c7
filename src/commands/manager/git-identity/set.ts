import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { saveGitIdentity } from '../../../core/agent/manage.js';

export default class GitIdentitySet extends BaseCommand<typeof GitIdentitySet> {
  static override summary = 'Set the commit identity forwarded into the sandbox (GIT_AUTHOR_* and GIT_COMMITTER_*).';
  static override description = 'Sent with every sandboxed command while git credential forwarding is on (`docdex sandbox enable --git-credentials`), from the next command on; no restart needed.';
  static override examples = ['<%= config.bin %> manager git-identity set --name "Ada Lovelace" --email ada@example.com'];
  static override flags = {
    name: Flags.string({ description: 'GIT_AUTHOR_NAME and GIT_COMMITTER_NAME.', required: true }),
    email: Flags.string({ description: 'GIT_AUTHOR_EMAIL and GIT_COMMITTER_EMAIL.', required: true }),
  };

  async run(): Promise<{ name: string | null; email: string | null }> {
    const identity = await saveGitIdentity(this.settings, { name: this.flags.name, email: this.flags.email });
    this.log(`Git identity: ${identity.name} <${identity.email}>.`);
    return { name: identity.name ?? null, email: identity.email ?? null };
  }
}
