import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { forceFlag } from '../../cli/flags.js';
import { confirm } from '../../cli/prompt.js';
import { removeRepository } from '../../core/agent/manage.js';
import type { Repo } from '../../core/agent/repos.js';
import { UserError } from '../../core/errors.js';

export default class ReposRemove extends BaseCommand<typeof ReposRemove> {
  static override summary = 'Remove a repository, its schedules and its files (a local repo keeps its directory).';
  static override examples = ['<%= config.bin %> repos remove api', '<%= config.bin %> repos remove 3 --force --keep-files'];
  static override args = { repo: Args.string({ required: true, description: 'Repo id or name.' }) };
  static override flags = {
    'keep-files': Flags.boolean({ description: 'Only forget the repo; leave its directory in place.', default: false }),
    force: forceFlag,
  };

  async run(): Promise<Repo> {
    if (!this.flags.force && !this.flags['keep-files']) {
      const ok = await confirm(`Remove repo ${this.args.repo} and delete its files under the workspace?`);
      if (!ok) throw new UserError('Aborted: nothing was removed.', { code: 'aborted' });
    }
    const repo = await removeRepository(this.settings, this.args.repo, { keepFiles: this.flags['keep-files'] });
    this.log(`Removed ${repo.localPath} (id ${repo.id}).`);
    return repo;
  }
}
