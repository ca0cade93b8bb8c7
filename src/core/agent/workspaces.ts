import { z } from 'zod';
import { listRepos } from './repos.js';
import type { RepoContext } from './repos.js';

export const AgentWorkspace = z.object({
  kind: z.enum(['assistant', 'repo', 'worktree', 'schedule-run']),
  name: z.string(),
  path: z.string(),
  repoId: z.number().nullable(),
  runId: z.number().optional(),
  /** True when sandboxed commands can run there (inside repos/ or schedule-worktrees/). */
  inSandboxRoots: z.boolean(),
});

export const AgentWorkspaces = z
  .object({
    root: z.string(),
    roots: z.object({ repos: z.string(), scheduleWorktrees: z.string() }).describe('The two folders mounted into the sandbox'),
    workspaces: z.array(AgentWorkspace),
  })
  .meta({ id: 'AgentWorkspaces' });
export type AgentWorkspaces = z.infer<typeof AgentWorkspaces>;

/**
 * The folders agents work in: the assistant workspace, each ready repo and worktree, and the worktrees of
 * scheduled runs in progress. Local repos are symlinks under repos/ whose targets are outside the
 * sandbox, so they are marked as not reachable there.
 */
export async function listAgentWorkspaces(ctx: RepoContext): Promise<AgentWorkspaces> {
  const ws = ctx.workspace;
  const workspaces: AgentWorkspaces['workspaces'] = [{ kind: 'assistant', name: 'assistant', path: ws.assistantDir, repoId: null, inSandboxRoots: false }];
  for (const repo of await listRepos(ctx)) {
    if (repo.cloneStatus !== 'ready') continue;
    workspaces.push({
      kind: repo.isWorktree ? 'worktree' : 'repo',
      name: repo.localPath,
      path: repo.fullPath,
      repoId: repo.id,
      inSandboxRoots: !(repo.isLocal && !repo.isWorktree),
    });
  }
  const { rows } = await ctx.pool.query<{ id: number; repo_id: number; worktree_path: string }>(
    `SELECT id, repo_id, worktree_path FROM agent_schedule_runs WHERE status = 'running' AND worktree_path IS NOT NULL ORDER BY id`,
  );
  for (const run of rows) {
    workspaces.push({ kind: 'schedule-run', name: `run ${run.id}`, path: run.worktree_path, repoId: run.repo_id, runId: run.id, inSandboxRoots: true });
  }
  return { root: ws.root, roots: { repos: ws.reposDir, scheduleWorktrees: ws.scheduleWorktreesDir }, workspaces };
}
