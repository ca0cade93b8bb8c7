import { BaseCommand } from '../../../cli/base-command.js';
import { saveGitIdentity } from '../../../core/agent/manage.js';

export default class GitIdentityClear extends BaseCommand<typeof GitIdentityClear> {
  static override summary = 'Remove the commit identity: sandboxed commands get no GIT_AUTHOR_* or GIT_COMMITTER_* variables.';
  static override examples = ['<%= config.bin %> manager git-identity clear'];

  async run(): Promise<{ name: null; email: null }> {
    await saveGitIdentity(this.settings, null);
    this.log('Git identity cleared.');
    return { name: null, email: null };
  }
}
