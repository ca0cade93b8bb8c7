import type { Config } from '../config.js';
import { openDatabase } from '../db/connect.js';
import type { Database } from '../db/connect.js';
import { createBoss } from '../queue/boss.js';
import { AGENT_QUEUES, ensureAgentQueues } from './queue.js';
import { addRepo, addWorktree, externalLocalSource, findRepo, listReposOrdered, removeRepo, runClone, waitForClone } from './repos.js';
import type { AddRepoInput, AddWorktreeInput, ExternalLocalSource, Repo, RepoContext } from './repos.js';
import { DEFAULT_USER_ID, configureSpeech, readSettings, setGitIdentity } from './settings.js';
import type { GitIdentity, Preferences, SpeechKind, SpeechService } from './settings.js';
import { createSkill, deleteSkill, listSkills, readSkill, skillPlace, updateSkill } from './skills.js';
import type { Skill, SkillFile, SkillScope, SkillUpdate } from './skills.js';
import { ensureManagerToken, rotateManagerToken } from './token.js';
import type { ManagerToken } from './token.js';
import { workspaceLayout } from './workspace.js';

/**
 * One function per CLI command: each opens the database, does its one job, and closes it again. The
 * commands stay thin; the HTTP routes call the underlying functions with the daemon's pool instead.
 */

async function withContext<T>(config: Config, fn: (ctx: RepoContext, db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase(config, { max: 3, applicationName: 'docdex-agent-cli' });
  try {
    return await fn({ pool: db.pool, workspace: workspaceLayout(config) }, db);
  } finally {
    await db.close();
  }
}

/**
 * `docdex repos add`. With `wait`, the command also works the clone queue until its repo is done, so a
 * clone finishes without a running daemon (with one, whichever process takes the job does it).
 */
export async function addRepository(config: Config, input: AddRepoInput, options: { wait?: boolean } = {}): Promise<Repo> {
  return withContext(config, async (ctx, db) => {
    const boss = createBoss(db.info, { max: 2, instanceName: 'docdex-repos-add' });
    boss.on('error', () => undefined);
    await boss.start();
    try {
      await ensureAgentQueues(boss);
      const repo = await addRepo({ ...ctx, boss }, input);
      if (!options.wait || repo.cloneStatus !== 'cloning') return repo;
      await boss.work<{ repoId: number }>(AGENT_QUEUES.clone, { pollingIntervalSeconds: 0.5 }, async ([job]) => {
        if (job) await runClone(ctx, job.data.repoId);
      });
      return await waitForClone(ctx, repo.id);
    } finally {
      await boss.stop({ graceful: true, close: true, timeout: 5_000 });
    }
  });
}

/** For `docdex repos add` on a terminal: a local directory outside the workspace, which it offers to clone in instead. */
export async function repositoryOutsideWorkspace(config: Config, source: string): Promise<ExternalLocalSource | undefined> {
  return externalLocalSource(workspaceLayout(config), source);
}

export async function listRepositories(config: Config): Promise<Repo[]> {
  return withContext(config, (ctx) => listReposOrdered(ctx));
}

export async function removeRepository(config: Config, idOrName: string, options: { keepFiles?: boolean } = {}): Promise<Repo> {
  return withContext(config, (ctx) => removeRepo(ctx, idOrName, options));
}

export async function addRepositoryWorktree(config: Config, input: AddWorktreeInput): Promise<Repo> {
  return withContext(config, (ctx) => addWorktree(ctx, input));
}

export interface SkillTarget {
  scope: SkillScope;
  /** Repo id or name, for project scope. */
  repo?: string;
}

async function place(ctx: RepoContext, target: SkillTarget) {
  const repoId = target.repo === undefined ? undefined : (await findRepo(ctx, target.repo)).id;
  return skillPlace(ctx, target.scope, repoId);
}

/** `docdex skills list`: every skill, or one scope, or one repo's project skills (plus global ones unless scope says otherwise). */
export async function listSkillFiles(config: Config, filter: { scope?: SkillScope; repo?: string } = {}): Promise<Skill[]> {
  return withContext(config, async (ctx) => {
    const repoId = filter.repo === undefined ? undefined : (await findRepo(ctx, filter.repo)).id;
    const skills = await listSkills(ctx, repoId === undefined ? {} : { repoId });
    return filter.scope === undefined ? skills : skills.filter((s) => s.scope === filter.scope);
  });
}

export async function showSkill(config: Config, name: string, target: SkillTarget): Promise<Skill> {
  return withContext(config, async (ctx) => readSkill(await place(ctx, target), name));
}

export async function createSkillFile(config: Config, skill: SkillFile, target: SkillTarget): Promise<Skill> {
  return withContext(config, async (ctx) => createSkill(await place(ctx, target), skill));
}

export async function editSkillFile(config: Config, name: string, patch: SkillUpdate, target: SkillTarget): Promise<Skill> {
  return withContext(config, async (ctx) => updateSkill(await place(ctx, target), name, patch));
}

export async function deleteSkillFile(config: Config, name: string, target: SkillTarget): Promise<Skill> {
  return withContext(config, async (ctx) => deleteSkill(await place(ctx, target), name));
}

/** `docdex manager token [--rotate]`. */
export async function managerToken(config: Config, options: { rotate?: boolean } = {}): Promise<ManagerToken> {
  return withContext(config, (ctx) => (options.rotate ? rotateManagerToken(ctx.pool) : ensureManagerToken(ctx.pool)));
}

/** `docdex manager git-identity set|clear`: the identity forwarded into the sandbox (`null` clears it). */
export async function saveGitIdentity(config: Config, identity: GitIdentity | null): Promise<Partial<GitIdentity>> {
  return withContext(config, async (ctx) => (await setGitIdentity(ctx.pool, DEFAULT_USER_ID, identity)).preferences.gitIdentity);
}

/** `docdex manager git-identity show`. */
export async function readGitIdentity(config: Config): Promise<Partial<GitIdentity>> {
  return withContext(config, async (ctx) => (await readSettings(ctx.pool)).preferences.gitIdentity);
}

/** `docdex manager speech set|clear`: a speech service with its secrets (`null` removes it); returns it without them. */
export async function saveSpeechService(config: Config, kind: SpeechKind, service: SpeechService | null): Promise<Preferences['tts']> {
  return withContext(config, async (ctx) => (await configureSpeech(ctx.pool, DEFAULT_USER_ID, kind, service)).preferences[kind]);
}
