import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { addRepositoryWorktree } from '../../../core/agent/manage.js';
import type { Repo } from '../../../core/agent/repos.js';

export default class ReposWorktreeAdd extends BaseCommand<typeof ReposWorktreeAdd> {
  static override summary = 'Create a git worktree of a repository on a branch, as its own repo under repos/.';
  static override description = 'Checks out the branch if it exists locally, tracks origin/<branch> if that exists, and creates it from HEAD otherwise.';
  static override examples = ['<%= config.bin %> repos worktree add api feature/login', '<%= config.bin %> repos worktree add 3 fix-123 --name api-fix'];
  static override args = {
    repo: Args.string({ required: true, description: 'Repo id or name.' }),
    branch: Args.string({ required: true, description: 'Branch to check out or create.' }),
  };
  static override flags = { name: Flags.string({ description: 'Directory name under repos/ (default: <repo>-<branch>).' }) };

  async run(): Promise<Repo> {
    const repo = await addRepositoryWorktree(this.settings, {
      repo: this.args.repo,
      branch: this.args.branch,
      ...(this.flags.name === undefined ? {} : { name: this.flags.name }),
    });
    this.log(`Created worktree ${repo.localPath} (id ${repo.id}) on ${repo.branch} at ${repo.fullPath}.`);
    for (const warning of repo.warnings ?? []) this.logToStderr(`Warning: ${warning}`);
    return repo;
  }
}
