import { existsSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { execa } from 'execa';
import webpush from 'web-push';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRepository } from '../../src/core/agent/manage.js';
import { readSettings } from '../../src/core/agent/settings.js';
import { readManagerToken } from '../../src/core/agent/token.js';
import { messageText, OpencodeClient } from '../../src/core/agent-server/client.js';
import { startAgentServer } from '../../src/core/agent-server/control.js';
import { addGitCredential } from '../../src/core/agent-server/git-credentials.js';
import { readAgentServerState } from '../../src/core/agent-server/state.js';
import { agentServerUrl } from '../../src/core/agent-server/layout.js';
import { agentManagerServices } from '../../src/core/agent-server/service.js';
import { attachPlan, listAgentSessions } from '../../src/core/agent-server/sessions.js';
import { loadConfig } from '../../src/core/config.js';
import type { Config } from '../../src/core/config.js';
import { agentRoutes } from '../../src/daemon/routes/agent.js';
import { agentServerRoutes } from '../../src/daemon/routes/agent-server.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { deviceKeys, filesContaining, freePort, removeDir, startFakePush, startStubModel, stubModelConfig, tempDir, waitUntil, writeAgentConfig } from './helpers.js';
import type { FakePush, StubModel } from './helpers.js';

/** An HTTP(S) proxy that refuses everything and remembers where opencode tried to go. */
async function startTripwire(): Promise<{ url: string; attempts: string[]; close(): Promise<void> }> {
  const attempts: string[] = [];
  const server = http.createServer((req, res) => {
    attempts.push(`${req.method} ${req.url}`);
    res.writeHead(403).end();
  });
  server.on('connect', (req, socket) => {
    socket.on('error', () => undefined);
    attempts.push(`CONNECT ${req.url}`);
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, attempts, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('the agent server with the mgr tool, driven by a stub model (real opencode)', () => {
  let db: TestDatabase;
  let workspace: string;
  let config: Config;
  let stub: StubModel;
  let push: FakePush;
  let tripwire: Awaited<ReturnType<typeof startTripwire>>;
  let daemon: Awaited<ReturnType<typeof startTestDaemon>>;
  let agent: OpencodeClient;
  let token: string;
  let gitDir: string;
  const GH_SECRET = 'ghp_docdexTestSecretValue42';

  const internal = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(`${daemon.base}/api/internal${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  /** A scheduled run once it has finished. */
  const finishedRun = (repoId: number, scheduleId: number, runId: number, what: string) =>
    waitUntil(
      async () => {
        const r = await internal('GET', `/repos/${repoId}/schedules/${scheduleId}/runs/${runId}`);
        return ['completed', 'failed', 'cancelled'].includes(r.body.status) ? r.body : undefined;
      },
      180_000,
      what,
    );

  /** One prompt in a fresh session; the stub answers `RESULT <tool output>` after a tool call. */
  const ask = async (text: string, directory = workspace) => {
    const session = await agent.createSession({ directory });
    return messageText(await agent.prompt(session.id, { directory, text }));
  };
  const mgr = (args: Record<string, unknown>) => ask(`Please do this: @@mgr ${JSON.stringify(args)}`);

  beforeAll(async () => {
    db = await createTestDatabase();
    workspace = tempDir('docdex-agent-ws-');
    gitDir = tempDir('docdex-agent-git-');
    [stub, push, tripwire] = await Promise.all([startStubModel(), startFakePush(), startTripwire()]);
    const vapid = webpush.generateVAPIDKeys();
    const apiPort = await freePort();
    config = loadConfig({
      ...db.env,
      WORKSPACE_PATH: workspace,
      API_PORT: String(apiPort),
      AGENT_PORT: String(await freePort()),
      VAPID_PUBLIC_KEY: vapid.publicKey,
      VAPID_PRIVATE_KEY: vapid.privateKey,
      VAPID_SUBJECT: 'mailto:test@example.com',
    });
    writeAgentConfig(workspace, stubModelConfig(stub.url));
    // Present before the agent server starts, so mgr-cli-env.js loads it with its first fetch.
    await addGitCredential(db.pool, { host: 'github.com', username: 'x-access-token', token: GH_SECRET, isDefault: true });
    daemon = await startTestDaemon(config, {
      port: apiPort,
      routes: [...agentRoutes, ...agentServerRoutes],
      // What `docdex serve` runs, with opencode kept off the internet (a tripwire proxy records any try).
      services: agentManagerServices(
        config,
        { host: '127.0.0.1', port: apiPort },
        {
          offline: true,
          pollMs: 300,
          env: { HTTP_PROXY: tripwire.url, HTTPS_PROXY: tripwire.url, http_proxy: tripwire.url, https_proxy: tripwire.url, NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' },
        },
      ),
    });
    token = (await readManagerToken(db.pool))!;
    await startAgentServer(config, { timeoutMs: 120_000, pollMs: 200 });
    agent = new OpencodeClient({ baseUrl: agentServerUrl(config), timeoutMs: 120_000 });
  }, 240_000);

  afterAll(async () => {
    await daemon?.close();
    await Promise.all([stub?.close(), push?.close(), tripwire?.close()]);
    await db?.drop();
    removeDir(workspace);
    removeDir(gitDir);
  });

  it('answers an allowed GET /settings with the settings JSON', async () => {
    const answer = await mgr({ action: 'request', method: 'GET', path: '/settings' });
    expect(answer.startsWith('RESULT ')).toBe(true);
    const settings = JSON.parse(answer.slice('RESULT '.length)) as { preferences: { theme: string; repoSortMode: string }; updatedAt: number };
    expect(settings.preferences).toMatchObject({ theme: 'system', repoSortMode: 'recent' });
    // The model was offered the tool, under its own name.
    expect(stub.requests.some((r) => r.tools.some((t) => t.function.name === 'mgr'))).toBe(true);
  });

  it('changes the database with PATCH /settings', async () => {
    const answer = await mgr({ action: 'request', method: 'PATCH', path: '/settings', body: { theme: 'dark', repoSortMode: 'name' } });
    expect(answer).toContain('"theme":"dark"');
    expect((await readSettings(db.pool)).preferences).toMatchObject({ theme: 'dark', repoSortMode: 'name' });
  });

  it('rejects /notifications/send through request, and ../ traversal, before any call', async () => {
    const before = push.received.length;
    const excluded = await mgr({ action: 'request', method: 'POST', path: '/notifications/send', body: { title: 't', body: 'b' } });
    expect(excluded).toMatch(/mgr rejected the call: \/notifications\/send is not available through the mgr tool/);
    for (const route of ['/repos/../settings', '/../settings/manager-token', '/repos/%2e%2e/notifications/send', 'http://127.0.0.1/api/internal/settings']) {
      expect(await mgr({ action: 'request', method: 'GET', path: route })).toMatch(/mgr rejected the call: /);
    }
    expect(push.received.length).toBe(before);
  });

  it('delivers send_notification to the push service of every registered device', async () => {
    const subscribe = await fetch(`${daemon.base}/api/settings/push/subscribe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ endpoint: `${push.url}/push/device-1`, keys: deviceKeys() }),
    });
    expect(subscribe.status).toBe(201);
    const answer = await mgr({ action: 'send_notification', title: 'Nightly build', body: 'All 42 tests passed', priority: 'high' });
    expect(JSON.parse(answer.slice('RESULT '.length))).toEqual({ delivered: 1, expired: 0, failed: 0, noSubscriptions: false });
    expect(push.received).toHaveLength(1);
    expect(push.received[0]).toMatchObject({ url: '/push/device-1' });
    expect(push.received[0]!.headers.urgency).toBe('high');
    expect(push.received[0]!.bytes).toBeGreaterThan(0);
  });

  it('reloads the real agent server through POST /assistant/reload', async () => {
    expect(await internal('POST', '/assistant/reload')).toEqual({ status: 200, body: { success: true } });
    expect((await agent.health()).healthy).toBe(true);
  });

  it('shows skills written through docdex in GET /skill', async () => {
    const create = await fetch(`${daemon.base}/api/settings/skills`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'release-notes', description: 'Write release notes: from the changelog', body: '# Release notes\nUse CHANGELOG.md.', scope: 'global' }),
    });
    expect(create.status).toBe(201);
    // opencode scans skills when it creates an instance: the spec's reload makes the edit visible.
    expect((await internal('POST', '/assistant/reload')).status).toBe(200);
    const names = (await agent.skills(workspace)).map((s) => s.name);
    expect(names).toContain('release-notes');
    // The shipped skills of the assistant workspace are project skills there.
    expect(names).toEqual(expect.arrayContaining(['schedule-management', 'notifications', 'manager-settings', 'repo-management']));
  });

  it('runs a schedule end to end: worktree, session, prompt, recorded response and log, clean-up', async () => {
    const work = path.join(gitDir, 'work');
    const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' };
    await execa('git', ['init', '--quiet', '--initial-branch=main', work]);
    await execa('sh', ['-c', 'echo hello > README.md && git add README.md && git commit --quiet -m first'], { cwd: work, env });
    await execa('git', ['clone', '--quiet', '--bare', work, path.join(gitDir, 'origin.git')]);
    const repo = await addRepository(config, { source: `file://${path.join(gitDir, 'origin.git')}`, name: 'demo' }, { wait: true });
    expect(repo.cloneStatus).toBe('ready');

    const created = await internal('POST', `/repos/${repo.id}/schedules`, {
      name: 'list repos',
      prompt: 'Check the repos: @@mgr {"action":"request","method":"GET","path":"/repos"}',
      intervalMinutes: 1440,
    });
    expect(created.status).toBe(201);
    const started = await internal('POST', `/repos/${repo.id}/schedules/${created.body.id}/run`);
    expect([200, 201, 202]).toContain(started.status);
    const run = await finishedRun(repo.id, created.body.id, started.body.id, 'the scheduled run');
    expect(run.error).toBeNull();
    expect(run.status).toBe('completed');
    expect(run.sessionId).toMatch(/^ses/);
    expect(run.response).toMatch(/^RESULT \{"repos":\[/);
    expect(run.response).toContain('"localPath":"demo"');
    expect(run.log).toMatch(/worktree .*schedule-worktrees/);
    expect(run.log).toMatch(/tool mgr completed/);
    expect(run.worktreePath.startsWith(path.join(workspace, 'schedule-worktrees'))).toBe(true);
    expect(existsSync(run.worktreePath)).toBe(false);
    // The session really ran in the worktree.
    const session = (await agent.listSessions()).find((s) => s.id === run.sessionId);
    expect(session?.directory).toBe(run.worktreePath);
  }, 240_000);

  it('names the session of a scheduled run that failed after its session started (issue #51)', async () => {
    const repo = (await internal('GET', '/repos')).body.repos.find((r: { localPath: string }) => r.localPath === 'demo');
    expect(repo).toBeDefined();
    const created = await internal('POST', `/repos/${repo.id}/schedules`, { name: 'no such model', prompt: 'hello', model: 'stub/no-such-model', intervalMinutes: 1440 });
    expect(created.status).toBe(201);
    const started = await internal('POST', `/repos/${repo.id}/schedules/${created.body.id}/run`);
    const run = await finishedRun(repo.id, created.body.id, started.body.id, 'the failing scheduled run');
    expect(run.status).toBe('failed');
    const named = /session (ses\S+) in /.exec(run.log)?.[1];
    expect(named).toMatch(/^ses/);
    expect(run.sessionId).toBe(named);
    expect((await agent.listSessions()).some((s) => s.id === run.sessionId)).toBe(true);
  }, 240_000);

  it('keeps the internal token out of agent shells and out of every file in the workspace', async () => {
    const session = await agent.createSession({ directory: workspace });
    const result = await agent.shell(session.id, { agent: 'build', command: 'env; echo "gh=[${GH_TOKEN-unset}] github=[${GITHUB_TOKEN-unset}]"' });
    const output = result.parts.map((p) => p.state?.output ?? '').join('\n');
    expect(output).toContain(`HOME=${workspace}`);
    expect(output).not.toContain(token);
    expect(output).not.toContain('MGR_INTERNAL_TOKEN');
    // The hosting CLI token is the agent server's (host side), blanked for agent commands.
    expect(output).not.toContain(GH_SECRET);
    expect(output).toContain('gh=[] github=[]');

    // Nor in the agent server's own environment, which every host process of the user can read (issue #51).
    const { pid } = await readAgentServerState(db.pool);
    expect(pid).toBeGreaterThan(0);
    const environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
    expect(environ).toContain('MGR_INTERNAL_API_URL=');
    expect(environ).not.toContain(token);
    expect(environ).not.toMatch(/(^|\0)MGR_INTERNAL_TOKEN=/);

    expect(filesContaining(path.join(workspace, 'repos'), token)).toEqual([]);
    expect(filesContaining(path.join(workspace, 'schedule-worktrees'), token)).toEqual([]);
    expect(filesContaining(workspace, token)).toEqual([]);
    expect(filesContaining(workspace, GH_SECRET)).toEqual([]);
    expect(readdirSync(path.join(workspace, '.config', 'opencode', 'plugin')).sort()).toEqual(['docdex', 'mgr-cli-env.js', 'mgr-manager.js']);
  });

  it('serves the hosting CLI environment to the agent host only, with the manager token', async () => {
    const anonymous = await fetch(`${daemon.base}/api/internal/git-credentials/cli-env`);
    expect(anonymous.status).toBe(401);
    const wrong = await fetch(`${daemon.base}/api/internal/git-credentials/cli-env`, { headers: { authorization: 'Bearer wrong' } });
    expect(wrong.status).toBe(401);
    const ok = await internal('GET', '/git-credentials/cli-env');
    expect(ok).toMatchObject({ status: 200, body: { host: 'github.com', env: { GH_TOKEN: GH_SECRET, GITHUB_TOKEN: GH_SECRET } } });
    const list = await fetch(`${daemon.base}/api/settings/git-credentials`);
    expect(await list.text()).not.toContain(GH_SECRET);
    // And no agent can reach it through mgr.
    expect(await mgr({ action: 'request', method: 'GET', path: '/git-credentials/cli-env' })).toMatch(/not available through the mgr tool/);
  });

  it('lists the sessions for `docdex agent sessions` and plans `docdex agent attach` without the token', async () => {
    const session = await agent.createSession({ directory: workspace, title: 'listed by docdex' });
    const sessions = await listAgentSessions(config);
    expect(sessions.find((s) => s.id === session.id)).toMatchObject({ title: 'listed by docdex', directory: workspace });
    const plan = await attachPlan(config, { session: session.id });
    expect(plan.args).toEqual(['attach', agentServerUrl(config), '--session', session.id]);
    expect(plan.env.HOME).toBe(workspace);
    expect(Object.keys(plan.env).some((k) => k.startsWith('MGR_'))).toBe(false);
    expect(Object.values(plan.env)).not.toContain(token);
  });

  it('never reached for the internet', () => {
    expect(tripwire.attempts).toEqual([]);
  });
});
