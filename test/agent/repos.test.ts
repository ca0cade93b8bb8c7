import { existsSync, lstatSync, mkdtempSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRepository, addRepositoryWorktree, listRepositories, removeRepository } from '../../src/core/agent/manage.js';
import { isGitUrl, repoDirName } from '../../src/core/agent/repos.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { makeBareRepo, startAgentDaemon, waitFor } from './helpers.js';
import type { AgentDaemon } from './helpers.js';

let db: TestDatabase;
let daemon: AgentDaemon;
let origin: Awaited<ReturnType<typeof makeBareRepo>>;

beforeAll(async () => {
  db = await createTestDatabase();
  origin = await makeBareRepo();
  daemon = await startAgentDaemon(db);
});
afterAll(async () => {
  await daemon?.close();
  origin?.cleanup();
  await db?.drop();
});

describe('repo sources', () => {
  it('tells git URLs from local paths and derives directory names', () => {
    for (const url of ['https://github.com/acme/api.git', 'ssh://git@host/x.git', 'git://host/x', 'file:///srv/x.git', 'git@github.com:acme/api.git']) expect(isGitUrl(url), url).toBe(true);
    for (const local of ['/home/me/src/api', './api', 'api', 'C:\\src\\api', '~/api']) expect(isGitUrl(local), local).toBe(false);
    expect(repoDirName('https://github.com/acme/api.git')).toBe('api');
    expect(repoDirName('git@github.com:acme/My Repo.git')).toBe('My-Repo');
    expect(repoDirName('/srv/..')).toBe('repo');
    expect(repoDirName('file:///srv/.hidden/')).toBe('hidden');
  });
});

describe('clones', () => {
  it('clones a local bare repository through the daemon worker: cloning, then ready', async () => {
    const repo = await addRepository(daemon.config, { source: `file://${origin.bare}` }, { wait: false });
    expect(repo).toMatchObject({ cloneStatus: 'cloning', localPath: 'origin', repoUrl: `file://${origin.bare}` });
    const ready = await waitFor(async () => {
      const repos = (await daemon.call('GET', '/api/internal/repos')).body.repos as Array<{ id: number; cloneStatus: string }>;
      const found = repos.find((r) => r.id === repo.id);
      return found && found.cloneStatus !== 'cloning' ? found : undefined;
    });
    expect(ready).toMatchObject({ cloneStatus: 'ready', defaultBranch: 'main', fullPath: path.join(daemon.workspace.reposDir, 'origin') });
    expect(existsSync(path.join(daemon.workspace.reposDir, 'origin', 'README.md'))).toBe(true);

    const info = await daemon.call('GET', `/api/internal/repos/${repo.id}/git-info`);
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({
      repoId: repo.id,
      cloneStatus: 'ready',
      branch: 'main',
      head: expect.stringMatching(/^[0-9a-f]{40}$/),
      upstream: 'origin/main',
      ahead: 0,
      behind: 0,
      dirty: false,
      remotes: [{ name: 'origin', url: `file://${origin.bare}` }],
      lastCommit: { subject: 'first commit', author: 't', sha: expect.stringMatching(/^[0-9a-f]{40}$/), date: expect.any(Number) },
    });
    writeFileSync(path.join(daemon.workspace.reposDir, 'origin', 'new.txt'), 'x');
    const dirty = (await daemon.call('GET', `/api/internal/repos/${repo.id}/git-info`)).body;
    expect(dirty).toMatchObject({ dirty: true, untrackedFiles: 1, changedFiles: 0 });
  });

  it('waits for its own clone from the command line, clones a bare repo given by path, with --branch, and picks a free name', async () => {
    const repo = await addRepository(daemon.config, { source: origin.bare, branch: 'dev' }, { wait: true });
    expect(repo).toMatchObject({ cloneStatus: 'ready', localPath: 'origin-2', defaultBranch: 'dev', repoUrl: origin.bare });
    expect(repo.isLocal).toBeUndefined();
    expect(lstatSync(repo.fullPath).isDirectory()).toBe(true);
  });

  it('records a failed clone as error with the git message, and leaves no directory', async () => {
    const missing = path.join(os.tmpdir(), `docdex-no-such-repo-${Date.now()}.git`);
    const repo = await addRepository(daemon.config, { source: `file://${missing}`, name: 'broken' }, { wait: true });
    expect(repo.cloneStatus).toBe('error');
    expect(repo.cloneError).toMatch(/does not appear to be a git repository|does not exist|not found/i);
    expect(existsSync(path.join(daemon.workspace.reposDir, 'broken'))).toBe(false);
    const listed = (await daemon.call('GET', '/api/internal/repos')).body.repos.find((r: { id: number }) => r.id === repo.id);
    expect(listed).toMatchObject({ cloneStatus: 'error' });
    expect(listed).not.toHaveProperty('cloneError');
    const info = (await daemon.call('GET', `/api/internal/repos/${repo.id}/git-info`)).body;
    expect(info).toMatchObject({ cloneStatus: 'error', cloneError: repo.cloneError, branch: null });
  });

  it('refuses URLs with passwords, bad branches and taken names', async () => {
    await expect(addRepository(daemon.config, { source: 'https://user:secret@example.com/x.git' })).rejects.toThrow(/password/);
    await expect(addRepository(daemon.config, { source: `file://${origin.bare}`, branch: '--upload-pack=touch /tmp/pwned' })).rejects.toThrow(/Invalid branch/);
    await expect(addRepository(daemon.config, { source: `file://${origin.bare}`, name: 'origin' })).rejects.toThrow(/already exists/);
    await expect(addRepository(daemon.config, { source: `file://${origin.bare}`, name: '../escape' })).rejects.toThrow(/Invalid repo name/);
    await expect(addRepository(daemon.config, { source: '/definitely/not/here' })).rejects.toThrow(/neither a git URL nor an existing directory/);
  });
});

describe('local repos, worktrees and removal', () => {
  it('registers a local directory as isLocal through a symlink, and removing it keeps the directory', async () => {
    const local = mkdtempSync(path.join(os.tmpdir(), 'docdex-local-'));
    try {
      const repo = await addRepository(daemon.config, { source: local, name: 'mine' });
      expect(repo).toMatchObject({ isLocal: true, cloneStatus: 'ready', localPath: 'mine' });
      expect(repo).not.toHaveProperty('repoUrl');
      // The link leads out of the microVM's roots: said at registration, with the resolved path (issue #51).
      expect(repo.warnings).toEqual([expect.stringContaining(`repos/mine is a link to ${local}, outside the workspace.`)]);
      expect(repo.warnings![0]).toContain(`move or copy it into ${daemon.workspace.reposDir}`);
      const link = path.join(daemon.workspace.reposDir, 'mine');
      expect(lstatSync(link).isSymbolicLink()).toBe(true);
      expect(readlinkSync(link)).toBe(local);
      await removeRepository(daemon.config, 'mine');
      expect(existsSync(link)).toBe(false);
      expect(existsSync(local)).toBe(true);
    } finally {
      rmSync(local, { recursive: true, force: true });
    }
  });

  it('offers to clone a local git repository in, clones it with clone: true, and warns about worktrees of a linked one (issue #51)', async () => {
    const local = mkdtempSync(path.join(os.tmpdir(), 'docdex-local-git-'));
    try {
      await execa('git', ['clone', '--quiet', origin.bare, local]);
      const linked = await addRepository(daemon.config, { source: local, name: 'linked' });
      expect(linked.warnings).toEqual([expect.stringContaining(`clone it in instead: \`docdex repos add ${local} --clone\``)]);
      const worktree = await addRepositoryWorktree(daemon.config, { repo: 'linked', branch: 'wt' });
      expect(worktree.warnings).toEqual([expect.stringContaining(`The worktree's git data stays in ${path.join(local, '.git', 'worktrees')}, outside the workspace`)]);

      const cloned = await addRepository(daemon.config, { source: local, name: 'cloned', clone: true }, { wait: true });
      expect(cloned).toMatchObject({ cloneStatus: 'ready', localPath: 'cloned', repoUrl: `file://${local}` });
      expect(cloned.warnings).toBeUndefined();
      expect(lstatSync(cloned.fullPath).isDirectory()).toBe(true);
      expect((await addRepositoryWorktree(daemon.config, { repo: 'cloned', branch: 'wt2' })).warnings).toBeUndefined();

      const plain = mkdtempSync(path.join(os.tmpdir(), 'docdex-local-plain-'));
      await expect(addRepository(daemon.config, { source: plain, clone: true })).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining('is not a git repository') });
      rmSync(plain, { recursive: true, force: true });
      for (const name of ['linked-wt', 'linked', 'cloned-wt2', 'cloned']) await removeRepository(daemon.config, name);
    } finally {
      rmSync(local, { recursive: true, force: true });
    }
  });

  it('makes worktrees (existing remote branch and new branch), refuses removing their source, and removes them', async () => {
    const tracked = await addRepositoryWorktree(daemon.config, { repo: 'origin', branch: 'dev' });
    expect(tracked).toMatchObject({ isWorktree: true, branch: 'dev', sourcePath: path.join(daemon.workspace.reposDir, 'origin'), localPath: 'origin-dev', cloneStatus: 'ready' });
    const created = await addRepositoryWorktree(daemon.config, { repo: 'origin', branch: 'feature/x' });
    expect(created).toMatchObject({ branch: 'feature/x', localPath: 'origin-feature-x' });
    const info = (await daemon.call('GET', `/api/internal/repos/${created.id}/git-info`)).body;
    expect(info.branch).toBe('feature/x');
    await expect(addRepositoryWorktree(daemon.config, { repo: tracked.id, branch: 'y' })).rejects.toThrow(/original repo/);

    await expect(removeRepository(daemon.config, 'origin')).rejects.toThrow(/has worktrees/);
    await removeRepository(daemon.config, String(tracked.id));
    await removeRepository(daemon.config, 'origin-feature-x');
    expect(existsSync(tracked.fullPath)).toBe(false);
    await removeRepository(daemon.config, 'origin');
    expect(existsSync(path.join(daemon.workspace.reposDir, 'origin'))).toBe(false);
    expect((await listRepositories(daemon.config)).map((r) => r.localPath).sort()).toEqual(['broken', 'origin-2']);
    await expect(removeRepository(daemon.config, 'origin')).rejects.toThrow(/No repo named/);
  });
});
