import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addGitCredential,
  hostingCliEnv,
  listGitCredentials,
  loadGitCredentials,
  normaliseHost,
  pickCredential,
  removeGitCredential,
  setDefaultGitCredential,
} from '../../src/core/agent-server/git-credentials.js';
import { readManagerToken, ensureManagerToken } from '../../src/core/agent/token.js';
import { loadConfig } from '../../src/core/config.js';
import { agentServerRoutes } from '../../src/daemon/routes/agent-server.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { removeDir, tempDir } from './helpers.js';

describe('git credentials', () => {
  let db: TestDatabase;
  let repoA: number;
  let repoB: number;

  beforeAll(async () => {
    db = await createTestDatabase();
    const { rows } = await db.pool.query<{ id: number }>(`INSERT INTO agent_repos (local_path, clone_status) VALUES ('a', 'ready'), ('b', 'ready') RETURNING id`);
    [repoA, repoB] = rows.map((r) => r.id) as [number, number];
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('shows credentials read-only in the settings, without tokens, with the default named', async () => {
    const scratch = await createTestDatabase();
    try {
      const { readSettings } = await import('../../src/core/agent/settings.js');
      expect((await readSettings(scratch.pool)).preferences).toMatchObject({ gitCredentials: [], defaultGitCredentialId: null });
      const made = await addGitCredential(scratch.pool, { host: 'github.com', username: 'octo', token: 'ghp_secret_value', isDefault: true });
      const shown = await readSettings(scratch.pool);
      expect(shown.preferences.gitCredentials).toEqual([{ id: made.id, host: 'github.com', username: 'octo', isDefault: true, hasToken: true }]);
      expect(shown.preferences.defaultGitCredentialId).toBe(made.id);
      expect(JSON.stringify(shown)).not.toContain('ghp_secret_value');
    } finally {
      await scratch.drop();
    }
  });

  it('normalises hosts and refuses what is not one', async () => {
    expect(normaliseHost('https://GitHub.com/org/repo')).toBe('github.com');
    expect(normaliseHost('git.example.com:8443')).toBe('git.example.com:8443');
    for (const bad of ['', 'a b', 'exa_mple.com', '-x.com', 'x..com']) expect(normaliseHost(bad)).toBeUndefined();
    await expect(addGitCredential(db.pool, { host: 'not a host', token: 't' })).rejects.toThrow(/is not a host name/);
    await expect(addGitCredential(db.pool, { host: 'github.com', token: 'has space' })).rejects.toThrow(/whitespace/);
    await expect(addGitCredential(db.pool, { host: 'github.com', token: 't', repoId: 99999 })).rejects.toThrow(/No repo with id 99999/);
  });

  it('stores tokens without ever listing them, with one default and repo bindings', async () => {
    const first = await addGitCredential(db.pool, { host: 'https://github.com', token: 'tok-first', username: 'x-access-token' });
    const second = await addGitCredential(db.pool, { host: 'github.com', token: 'tok-default', isDefault: true });
    const bound = await addGitCredential(db.pool, { host: 'github.com', token: 'tok-bound-a', repoId: repoA, label: 'deploy key for a' });
    const other = await addGitCredential(db.pool, { host: 'gitlab.example.com', token: 'tok-gitlab' });
    expect(first).toMatchObject({ host: 'github.com', username: 'x-access-token', isDefault: false, hasToken: true });
    expect(bound).toMatchObject({ repoId: repoA, repoName: 'a', label: 'deploy key for a' });
    const listed = await listGitCredentials(db.pool);
    expect(listed.map((c) => c.id).sort()).toEqual([first.id, second.id, bound.id, other.id].sort());
    expect(JSON.stringify(listed)).not.toMatch(/tok-/);

    const set = await loadGitCredentials(db.pool);
    expect(set.defaultGitCredentialId).toBe(second.id);
    expect(pickCredential(set, 'github.com', repoA)?.token).toBe('tok-bound-a');
    expect(pickCredential(set, 'github.com', repoB)?.token).toBe('tok-default');
    expect(pickCredential(set, 'github.com')?.token).toBe('tok-default');
    expect(pickCredential(set, 'gitlab.example.com', repoA)?.token).toBe('tok-gitlab');
    expect(pickCredential(set, 'bitbucket.org')).toBeUndefined();

    // A new default replaces the old one; clearing it falls back to the oldest unbound credential.
    await setDefaultGitCredential(db.pool, first.id);
    expect((await listGitCredentials(db.pool)).filter((c) => c.isDefault).map((c) => c.id)).toEqual([first.id]);
    await setDefaultGitCredential(db.pool, null);
    expect(pickCredential(await loadGitCredentials(db.pool), 'github.com', repoB)?.token).toBe('tok-first');

    expect(await hostingCliEnv(db.pool, { repoId: repoA })).toEqual({
      host: 'github.com',
      credentialId: bound.id,
      env: { GH_TOKEN: 'tok-bound-a', GITHUB_TOKEN: 'tok-bound-a' },
      variables: ['GH_TOKEN', 'GITHUB_TOKEN'],
    });

    // A bound credential goes with its repo.
    await db.pool.query('DELETE FROM agent_repos WHERE id = $1', [repoA]);
    expect((await listGitCredentials(db.pool)).some((c) => c.id === bound.id)).toBe(false);
    await removeGitCredential(db.pool, other.id);
    await expect(removeGitCredential(db.pool, other.id)).rejects.toThrow(/No git credential/);
  });

  it('has REST routes that take tokens in and never give them out, and a cli-env route for the manager token only', async () => {
    const workspace = tempDir('docdex-gc-ws-');
    const daemon = await startTestDaemon(loadConfig({ ...db.env, WORKSPACE_PATH: workspace }), { routes: agentServerRoutes });
    try {
      const created = await fetch(`${daemon.base}/api/settings/git-credentials`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ host: 'git.example.com:8443', token: 'tok-rest-secret', isDefault: true }),
      });
      expect(created.status).toBe(201);
      const body = (await created.json()) as { id: string; isDefault: boolean };
      expect(JSON.stringify(body)).not.toContain('tok-rest-secret');
      expect(body.isDefault).toBe(true);
      const listed = await (await fetch(`${daemon.base}/api/settings/git-credentials`)).text();
      expect(listed).toContain(body.id);
      expect(listed).not.toContain('tok-');
      expect((await fetch(`${daemon.base}/api/settings/git-credentials`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"host":"x y","token":"t"}' })).status).toBe(400);
      expect((await fetch(`${daemon.base}/api/settings/git-credentials/gc_doesnotexist1/default`, { method: 'POST' })).status).toBe(404);
      expect((await fetch(`${daemon.base}/api/settings/git-credentials/${body.id}`, { method: 'DELETE' })).status).toBe(200);
      expect((await fetch(`${daemon.base}/api/settings/git-credentials/${body.id}`, { method: 'DELETE' })).status).toBe(404);

      await ensureManagerToken(db.pool);
      const token = (await readManagerToken(db.pool))!;
      const cliEnv = (auth?: string) => fetch(`${daemon.base}/api/internal/git-credentials/cli-env`, auth === undefined ? {} : { headers: { authorization: auth } });
      expect((await cliEnv()).status).toBe(401);
      expect((await cliEnv(`Bearer ${token}x`)).status).toBe(401);
      expect((await cliEnv(`Basic ${token}`)).status).toBe(401);
      const ok = await cliEnv(`Bearer ${token}`);
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ host: 'github.com', credentialId: expect.any(String), env: { GH_TOKEN: 'tok-first', GITHUB_TOKEN: 'tok-first' }, variables: ['GH_TOKEN', 'GITHUB_TOKEN'] });
      const openapi = (await (await fetch(`${daemon.base}/openapi.json`)).json()) as { paths: Record<string, unknown> };
      await SwaggerParser.validate(structuredClone(openapi) as never);
      expect(Object.keys(openapi.paths)).toEqual(expect.arrayContaining(['/api/internal/git-credentials/cli-env', '/api/agent-server', '/api/settings/git-credentials']));
    } finally {
      await daemon.close();
      removeDir(workspace);
    }
  });
});
