import type pg from 'pg';

/**
 * repo_settings of the sandbox (table agent_repo_settings). The spec has the planner honour
 * `sandboxGitCredentials` while no interface or API writes it, so only manager-side code calls the setter.
 */

export interface SandboxRepoSettings {
  /** null: follow preferences.sandbox.gitCredentials. */
  sandboxGitCredentials: boolean | null;
}

export async function readSandboxRepoSettings(pool: pg.Pool, repoId: number): Promise<SandboxRepoSettings> {
  const { rows } = await pool.query<{ sandbox_git_credentials: boolean | null }>('SELECT sandbox_git_credentials FROM agent_repo_settings WHERE repo_id = $1', [repoId]);
  return { sandboxGitCredentials: rows[0]?.sandbox_git_credentials ?? null };
}

export async function setSandboxRepoGitCredentials(pool: pg.Pool, repoId: number, value: boolean | null): Promise<SandboxRepoSettings> {
  await pool.query(
    `INSERT INTO agent_repo_settings (repo_id, sandbox_git_credentials) VALUES ($1, $2)
     ON CONFLICT (repo_id) DO UPDATE SET sandbox_git_credentials = excluded.sandbox_git_credentials, updated_at = now()`,
    [repoId, value],
  );
  return { sandboxGitCredentials: value };
}

/**
 * The repo a guest working directory belongs to: the first path segment below the repos root is the repo's
 * local_path; below the schedule-worktrees root it is the worktree of a scheduled run, which names its repo.
 */
export async function repoIdForWorkdir(pool: pg.Pool, roots: readonly [string, string], workdir: string): Promise<number | undefined> {
  const [reposRoot, worktreesRoot] = roots;
  const first = (root: string): string | undefined => {
    if (workdir !== root && !workdir.startsWith(`${root}/`)) return undefined;
    const segment = workdir.slice(root.length + 1).split('/')[0];
    return segment === undefined || segment === '' ? undefined : segment;
  };
  const repoName = first(reposRoot);
  if (repoName !== undefined) {
    const { rows } = await pool.query<{ id: number }>('SELECT id FROM agent_repos WHERE local_path = $1', [repoName]);
    return rows[0]?.id;
  }
  const worktree = first(worktreesRoot);
  if (worktree !== undefined) {
    const dir = `${worktreesRoot}/${worktree}`;
    const { rows } = await pool.query<{ repo_id: number }>(`SELECT repo_id FROM agent_schedule_runs WHERE worktree_path = $1 OR worktree_path LIKE $2 ORDER BY id DESC LIMIT 1`, [
      dir,
      `${dir.replaceAll('\\', '\\\\').replaceAll('%', '\\%').replaceAll('_', '\\_')}/%`,
    ]);
    return rows[0]?.repo_id;
  }
  return undefined;
}
