import { BaseCommand } from '../../cli/base-command.js';
import { listRepositories } from '../../core/agent/manage.js';
import type { Repo } from '../../core/agent/repos.js';

export default class ReposList extends BaseCommand<typeof ReposList> {
  static override summary = "List the agent workspace's repositories, in the user's order.";
  static override examples = ['<%= config.bin %> repos list', '<%= config.bin %> repos list --json'];

  async run(): Promise<{ repos: Repo[] }> {
    const repos = await listRepositories(this.settings);
    if (repos.length === 0) this.log('No repos. Add one with `docdex repos add <git-url|path>`.');
    for (const repo of repos) {
      const kind = repo.isWorktree ? `worktree of ${repo.sourcePath} on ${repo.branch}` : repo.isLocal ? 'local' : (repo.repoUrl ?? '');
      this.log(`${String(repo.id).padStart(4)}  ${repo.localPath.padEnd(30)} ${repo.cloneStatus.padEnd(8)} ${kind}`);
      if (repo.cloneError) this.log(`      error: ${repo.cloneError.split('\n').at(-1)}`);
    }
    return { repos };
  }
}
