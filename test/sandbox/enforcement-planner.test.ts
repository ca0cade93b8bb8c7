import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addGitCredential } from '../../src/core/agent-server/git-credentials.js';
import { setSandboxPreferences } from '../../src/core/agent/settings.js';
import { ensureManagerToken } from '../../src/core/agent/token.js';
import { loadConfig } from '../../src/core/config.js';
import { setSandboxRepoGitCredentials } from '../../src/core/sandbox/repo-settings.js';
import { sandboxRoots } from '../../src/core/sandbox/settings.js';
import { UNAVAILABLE_PREFIX, outsideRootsMessage } from '../../src/core/sandbox/unavailable.js';
import { createSandboxPlannerRoutes } from '../../src/daemon/routes/sandbox-planner.js';
import type { DaemonHandle } from '../../src/daemon/server.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';

/**
 * POST /api/internal/sandbox/shell against the real daemon and database. The VM step is an injected
 * function here (the real VM is exercised in enforcement-microvm.test.ts): it records that the planner asks
 * for a VM exactly when it plans into it, and its failure is the boot failure the message must carry.
 */

describe('the sandbox planner route', () => {
  let db: TestDatabase;
  let daemon: DaemonHandle & { base: string };
  let ws: string;
  let outside: string;
  let token: string;
  let vmCalls = 0;
  let vmFailure: string | undefined;
  let repoId: number;
  let otherRepoId: number;

  beforeAll(async () => {
    db = await createTestDatabase();
    ws = await mkdtemp(path.join(os.tmpdir(), 'docdex-plan-'));
    outside = await mkdtemp(path.join(os.tmpdir(), 'docdex-plan-outside-'));
    for (const dir of ['repos/app/src', 'repos/other', 'schedule-worktrees/run-7/sub']) await mkdir(path.join(ws, dir), { recursive: true });
    await symlink(outside, path.join(ws, 'repos', 'linked'));
    const config = loadConfig({ ...db.env, WORKSPACE_PATH: ws });
    daemon = await startTestDaemon(config, {
      routes: [
        createSandboxPlannerRoutes({
          ensureVm: async () => {
            vmCalls++;
            if (vmFailure !== undefined) throw new Error(vmFailure);
          },
        }),
      ],
    });
    token = (await ensureManagerToken(db.pool)).token;
    const repos = await db.pool.query<{ id: number }>(`INSERT INTO agent_repos (local_path, clone_status) VALUES ('app', 'ready'), ('other', 'ready') RETURNING id`);
    repoId = repos.rows[0]!.id;
    otherRepoId = repos.rows[1]!.id;
    const schedule = await db.pool.query<{ id: number }>(`INSERT INTO agent_schedules (repo_id, name, prompt, interval_minutes) VALUES ($1, 's', 'p', 60) RETURNING id`, [repoId]);
    await db.pool.query(`INSERT INTO agent_schedule_runs (schedule_id, repo_id, status, trigger, worktree_path) VALUES ($1, $2, 'running', 'manual', $3)`, [
      schedule.rows[0]!.id,
      repoId,
      path.join(ws, 'schedule-worktrees', 'run-7'),
    ]);
  });

  afterAll(async () => {
    await daemon?.close();
    await db?.drop();
    await rm(ws, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  beforeEach(async () => {
    vmCalls = 0;
    vmFailure = undefined;
    await db.pool.query('DELETE FROM agent_git_credentials');
    await db.pool.query('DELETE FROM agent_repo_settings');
    await db.pool.query('DELETE FROM agent_settings');
  });

  async function plan(body: unknown, auth: string | null = token): Promise<{ status: number; body: any }> {
    const res = await fetch(`${daemon.base}/api/internal/sandbox/shell`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(auth === null ? {} : { authorization: `Bearer ${auth}` }) },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  }

  it('answers 401 without the manager token or with a wrong one, before looking at the body', async () => {
    const cwd = path.join(ws, 'repos', 'app');
    expect((await plan({ cwd, callID: 'c1' }, null)).status).toBe(401);
    expect((await plan({ cwd, callID: 'c1' }, `${token}x`)).status).toBe(401);
    expect((await plan({ nonsense: true }, 'wrong')).status).toBe(401);
    expect(vmCalls).toBe(0);
  });

  it('answers 400 for a malformed body', async () => {
    expect((await plan({ cwd: 'relative/dir', callID: 'c1' })).status).toBe(400);
    expect((await plan({ cwd: path.join(ws, 'repos'), callID: 'c1', extra: 1 })).status).toBe(400);
    expect((await plan({ callID: 'c1' })).status).toBe(400);
    // Refused by the body scanner before parsing (an unknown field above; nesting and a lone surrogate here): 400 too.
    expect((await plan({ cwd: path.join(ws, 'repos'), callID: JSON.parse('['.repeat(100) + ']'.repeat(100)) as unknown })).status).toBe(400);
    const surrogate = await plan({ cwd: 'a\ud800b', callID: 'c1' });
    expect(surrogate).toMatchObject({ status: 400, body: { code: 'bad_request' } });
  });

  it('keeps a spawn without a call id (pseudo-terminal) on the host and boots nothing', async () => {
    const res = await plan({ cwd: path.join(ws, 'repos', 'app') });
    expect(res).toEqual({ status: 200, body: { action: 'host', env: {} } });
    expect(vmCalls).toBe(0);
  });

  it('plans a session shell inside a root into the VM at the same path', async () => {
    const cwd = path.join(ws, 'repos', 'app', 'src');
    const res = await plan({ cwd, callID: 'call_1', sessionID: 'ses_1' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ action: 'sandbox', env: { MGR_SANDBOX_WORKDIR: cwd }, workdir: cwd });
    expect(vmCalls).toBe(1);
    const worktree = path.join(ws, 'schedule-worktrees', 'run-7', 'sub');
    expect((await plan({ cwd: worktree, callID: 'call_2' })).body.env).toEqual({ MGR_SANDBOX_WORKDIR: worktree });
  });

  it('refuses a directory outside the roots with the exact message naming both roots, without booting', async () => {
    const res = await plan({ cwd: outside, callID: 'call_1' });
    const message = outsideRootsMessage(outside, sandboxRoots(ws));
    expect(message).toBe(`${UNAVAILABLE_PREFIX}: the working directory ${outside} is outside the project roots ${ws}/repos and ${ws}/schedule-worktrees`);
    expect(res.body).toEqual({ action: 'refuse', env: { MGR_SANDBOX_REFUSE: message }, message });
    // A repository symlinked into repos/ from elsewhere stays outside.
    const linked = path.join(ws, 'repos', 'linked');
    expect((await plan({ cwd: linked, callID: 'call_2' })).body.env.MGR_SANDBOX_REFUSE).toBe(outsideRootsMessage(linked, sandboxRoots(ws), outside));
    expect(vmCalls).toBe(0);
  });

  it('refuses a directory that does not exist', async () => {
    const res = await plan({ cwd: path.join(ws, 'repos', 'gone'), callID: 'call_1' });
    expect(res.body.action).toBe('refuse');
    expect(res.body.env.MGR_SANDBOX_REFUSE).toMatch(new RegExp(`^${UNAVAILABLE_PREFIX}: the working directory .* does not exist$`));
  });

  it('turns a VM that cannot be booted or attested into the fail-closed message', async () => {
    vmFailure = 'the VM did not boot within 1000 ms';
    const res = await plan({ cwd: path.join(ws, 'repos', 'app'), callID: 'call_1' });
    expect(res.body).toEqual({
      action: 'refuse',
      env: { MGR_SANDBOX_REFUSE: `${UNAVAILABLE_PREFIX}: the VM did not boot within 1000 ms` },
      message: `${UNAVAILABLE_PREFIX}: the VM did not boot within 1000 ms`,
    });
    vmFailure = `${UNAVAILABLE_PREFIX}: attestation failed: image differs`;
    expect((await plan({ cwd: path.join(ws, 'repos', 'app'), callID: 'call_1' })).body.message).toBe(`${UNAVAILABLE_PREFIX}: attestation failed: image differs`);
  });

  describe('git credential forwarding', () => {
    const cwd = () => path.join(ws, 'repos', 'app');
    const basic = (user: string, tokenValue: string) => `Authorization: Basic ${Buffer.from(`${user}:${tokenValue}`).toString('base64')}`;

    it('is off by default: nothing but the working directory is sent', async () => {
      await addGitCredential(db.pool, { host: 'github.com', token: 'ghp_secret' });
      expect((await plan({ cwd: cwd(), callID: 'c' })).body.env).toEqual({ MGR_SANDBOX_WORKDIR: cwd() });
    });

    it('sends one extraheader per host, the identity and the hosting CLI tokens when the global switch is on', async () => {
      await setSandboxPreferences(db.pool, 'default', { gitCredentials: true });
      await db.pool.query(`INSERT INTO agent_settings (user_id, preferences) VALUES ('default', '{}') ON CONFLICT DO NOTHING`);
      await db.pool.query(`UPDATE agent_settings SET preferences = preferences || '{"gitIdentity": {"name": "Ada", "email": "ada@example.com"}}'::jsonb WHERE user_id = 'default'`);
      await addGitCredential(db.pool, { host: 'github.com', token: 'unbound' });
      await addGitCredential(db.pool, { host: 'github.com', token: 'bound', username: 'bot', repoId });
      await addGitCredential(db.pool, { host: 'gitlab.example.com', token: 'gl', isDefault: true });
      await addGitCredential(db.pool, { host: 'private.example.com', token: 'other-repo', repoId: otherRepoId });
      const res = await plan({ cwd: cwd(), callID: 'c' });
      expect(res.body.forwardedHosts).toEqual(['github.com', 'gitlab.example.com']);
      expect(res.body.env).toEqual({
        MGR_SANDBOX_WORKDIR: cwd(),
        MGR_SANDBOX_ENV_GIT_CONFIG_COUNT: '2',
        MGR_SANDBOX_ENV_GIT_CONFIG_KEY_0: 'http.https://github.com/.extraheader',
        // The credential bound to this repo wins over the unbound one of its host.
        MGR_SANDBOX_ENV_GIT_CONFIG_VALUE_0: basic('bot', 'bound'),
        MGR_SANDBOX_ENV_GIT_CONFIG_KEY_1: 'http.https://gitlab.example.com/.extraheader',
        MGR_SANDBOX_ENV_GIT_CONFIG_VALUE_1: basic('x-access-token', 'gl'),
        MGR_SANDBOX_ENV_GIT_AUTHOR_NAME: 'Ada',
        MGR_SANDBOX_ENV_GIT_COMMITTER_NAME: 'Ada',
        MGR_SANDBOX_ENV_GIT_AUTHOR_EMAIL: 'ada@example.com',
        MGR_SANDBOX_ENV_GIT_COMMITTER_EMAIL: 'ada@example.com',
        MGR_SANDBOX_ENV_GH_TOKEN: 'bound',
        MGR_SANDBOX_ENV_GITHUB_TOKEN: 'bound',
      });
      expect(JSON.stringify(res.body)).not.toContain('other-repo');
      expect(JSON.stringify(res.body)).not.toContain(token);
    });

    it('lets repo_settings.sandboxGitCredentials override the global switch in either direction, per command', async () => {
      await addGitCredential(db.pool, { host: 'github.com', token: 't' });
      await setSandboxRepoGitCredentials(db.pool, repoId, true);
      expect((await plan({ cwd: cwd(), callID: 'c' })).body.env.MGR_SANDBOX_ENV_GIT_CONFIG_COUNT).toBe('1');
      await setSandboxPreferences(db.pool, 'default', { gitCredentials: true });
      await setSandboxRepoGitCredentials(db.pool, repoId, false);
      expect((await plan({ cwd: cwd(), callID: 'c' })).body.env).toEqual({ MGR_SANDBOX_WORKDIR: cwd() });
      // Another repo without an override follows the global switch; a schedule worktree follows its repo.
      expect((await plan({ cwd: path.join(ws, 'repos', 'other'), callID: 'c' })).body.env.MGR_SANDBOX_ENV_GIT_CONFIG_COUNT).toBe('1');
      expect((await plan({ cwd: path.join(ws, 'schedule-worktrees', 'run-7'), callID: 'c' })).body.env.MGR_SANDBOX_ENV_GIT_CONFIG_COUNT).toBeUndefined();
      await setSandboxRepoGitCredentials(db.pool, repoId, null);
      expect((await plan({ cwd: cwd(), callID: 'c' })).body.env.MGR_SANDBOX_ENV_GIT_CONFIG_COUNT).toBe('1');
    });

    it('forwards at most 16 hosts', async () => {
      await setSandboxPreferences(db.pool, 'default', { gitCredentials: true });
      for (let i = 0; i < 18; i++) await addGitCredential(db.pool, { host: `h${String(i).padStart(2, '0')}.example.com`, token: `t${i}` });
      const res = await plan({ cwd: cwd(), callID: 'c' });
      expect(res.body.env.MGR_SANDBOX_ENV_GIT_CONFIG_COUNT).toBe('16');
      expect(res.body.forwardedHosts).toHaveLength(16);
      expect(res.body.env.MGR_SANDBOX_ENV_GIT_CONFIG_KEY_15).toBe('http.https://h15.example.com/.extraheader');
      expect(Object.keys(res.body.env).some((k) => k.endsWith('_16'))).toBe(false);
    });
  });
});
