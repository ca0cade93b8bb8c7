import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { confirm } from '../../cli/prompt.js';
import { addRepository, repositoryOutsideWorkspace } from '../../core/agent/manage.js';
import type { Repo } from '../../core/agent/repos.js';
import { UserError } from '../../core/errors.js';

export default class ReposAdd extends BaseCommand<typeof ReposAdd> {
  static override summary = 'Add a repository to the agent workspace: clone a git URL or register a local directory.';
  static override description =
    'A git URL (https://, ssh://, git://, file:// or user@host:path) is cloned into $WORKSPACE_PATH/repos by a queue job; by default the command waits for it. ' +
    'A local directory is registered as a local repo: a symlink under repos/. The sandbox microVM does not follow that link, so with sandbox enforcement on, agent commands there are refused; ' +
    '--clone clones a local git repository into repos/ instead (on a terminal, you are asked).';
  static override examples = [
    '<%= config.bin %> repos add https://github.com/acme/api.git',
    '<%= config.bin %> repos add git@github.com:acme/api.git --branch develop --name api-dev',
    '<%= config.bin %> repos add ~/src/my-project',
    '<%= config.bin %> repos add ~/src/my-project --clone',
  ];
  static override args = { source: Args.string({ required: true, description: 'Git URL or local directory.' }) };
  static override flags = {
    branch: Flags.string({ char: 'b', description: 'Branch to clone (default: the remote HEAD).' }),
    name: Flags.string({ description: 'Directory name under repos/ (default: from the URL or path).' }),
    wait: Flags.boolean({ description: 'Wait for the clone to finish.', default: true, allowNo: true }),
    clone: Flags.boolean({ description: 'Clone a local git repository into the workspace instead of linking to it, so sandboxed agent commands can work in it.', default: false }),
  };

  async run(): Promise<Repo> {
    const repo = await addRepository(
      this.settings,
      {
        source: this.args.source,
        clone: this.flags.clone || (await this.offerClone()),
        ...(this.flags.branch === undefined ? {} : { branch: this.flags.branch }),
        ...(this.flags.name === undefined ? {} : { name: this.flags.name }),
      },
      { wait: this.flags.wait },
    );
    if (repo.cloneStatus === 'error') {
      throw new UserError(`Clone of ${repo.repoUrl} failed: ${repo.cloneError ?? 'unknown error'}`, {
        hint: `Fix the URL or credentials, then \`docdex repos remove ${repo.id}\` and add it again.`,
        code: 'clone_failed',
      });
    }
    const what = repo.isLocal ? 'Registered local repo' : repo.cloneStatus === 'ready' ? 'Cloned' : 'Cloning';
    this.log(`${what} ${repo.localPath} (id ${repo.id}) at ${repo.fullPath}${repo.defaultBranch ? ` on ${repo.defaultBranch}` : ''}.`);
    for (const warning of repo.warnings ?? []) this.logToStderr(`Warning: ${warning}`);
    return repo;
  }

  /** On a terminal, a local git repository outside the workspace: ask whether to clone it in instead of linking to it. */
  private async offerClone(): Promise<boolean> {
    if (this.flags.clone || !this.isTty || !process.stdin.isTTY) return false;
    const outside = await repositoryOutsideWorkspace(this.settings, this.args.source);
    if (!outside?.gitRepo) return false;
    return confirm(`${outside.real} is outside the workspace, where sandboxed agent commands cannot reach it. Clone it into the workspace instead of linking to it?`);
  }
}
