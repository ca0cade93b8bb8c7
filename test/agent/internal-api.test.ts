import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configureSpeech } from '../../src/core/agent/settings.js';
import { rotateManagerToken } from '../../src/core/agent/token.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { rawRequest, startAgentDaemon, startFakeServer } from './helpers.js';
import type { AgentDaemon } from './helpers.js';

let db: TestDatabase;
const REST_TOKEN = 'rest-token-123-of-at-least-32-characters';
let daemon: AgentDaemon;
let agent: Awaited<ReturnType<typeof startFakeServer>>;
/** What the fake agent server answers to PATCH /global/config and POST /instance/dispose. */
let agentAnswer: (req: { method: string; url: string; body: string }) => { status: number; body?: unknown } = () => ({ status: 200, body: true });

beforeAll(async () => {
  db = await createTestDatabase();
  agent = await startFakeServer((req) => agentAnswer(req));
  daemon = await startAgentDaemon(db, { services: false, env: { AGENT_PORT: String(agent.port) } });
});
afterAll(async () => {
  await daemon?.close();
  await agent?.close();
  await db?.drop();
});

/** Every route of the internal API with a request that would otherwise be valid. */
const ROUTES: Array<[string, string, unknown?]> = [
  ['POST', '/api/internal/notifications/send', { title: 't', body: 'b' }],
  ['GET', '/api/internal/settings'],
  ['PATCH', '/api/internal/settings', { theme: 'dark' }],
  ['GET', '/api/internal/agent-config'],
  ['PUT', '/api/internal/agent-config', { content: {} }],
  ['POST', '/api/internal/assistant/reload'],
  ['GET', '/api/internal/repos'],
  ['GET', '/api/internal/repos/1/git-info'],
  ['GET', '/api/internal/agent-workspaces'],
  ['GET', '/api/internal/schedules/all'],
  ['GET', '/api/internal/schedules/all/runs'],
  ['GET', '/api/internal/repos/1/schedules'],
  ['POST', '/api/internal/repos/1/schedules', { name: 'n', prompt: 'p', intervalMinutes: 5 }],
  ['GET', '/api/internal/repos/1/schedules/1'],
  ['PATCH', '/api/internal/repos/1/schedules/1', { enabled: false }],
  ['DELETE', '/api/internal/repos/1/schedules/1'],
  ['POST', '/api/internal/repos/1/schedules/1/run'],
  ['GET', '/api/internal/repos/1/schedules/1/runs'],
  ['DELETE', '/api/internal/repos/1/schedules/1/runs'],
  ['GET', '/api/internal/repos/1/schedules/1/runs/1'],
  ['DELETE', '/api/internal/repos/1/schedules/1/runs/1'],
  ['POST', '/api/internal/repos/1/schedules/1/runs/1/cancel'],
  ['GET', '/api/internal/no-such-route'],
];

describe('internal API authentication', () => {
  it('answers 401 with the error body and WWW-Authenticate on every route without a token or with a wrong one', async () => {
    for (const [method, route, body] of ROUTES) {
      for (const token of [null, 'wrong-token', `${daemon.token}x`, daemon.token.slice(0, -1)]) {
        const res = await daemon.call(method, route, { body, token });
        expect(res.status, `${method} ${route} token=${token}`).toBe(401);
        expect(res.body).toEqual({ error: expect.stringContaining('bearer token'), code: 'unauthorized', details: [] });
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm=/);
      }
      const basic = await daemon.call(method, route, { body, token: null, headers: { authorization: `Basic ${Buffer.from(`x:${daemon.token}`).toString('base64')}` } });
      expect(basic.status).toBe(401);
    }
  });

  it('accepts the token, and a rotated token replaces it at once', async () => {
    expect((await daemon.call('GET', '/api/internal/settings')).status).toBe(200);
    const rotated = await rotateManagerToken(db.pool);
    expect(rotated.token).not.toBe(daemon.token);
    expect(Buffer.from(rotated.token, 'base64url')).toHaveLength(32);
    expect((await daemon.call('GET', '/api/internal/settings')).status).toBe(401);
    daemon.token = rotated.token;
    expect((await daemon.call('GET', '/api/internal/settings')).status).toBe(200);
    // Unknown internal routes are 404 once authenticated.
    expect((await daemon.call('GET', '/api/internal/no-such-route')).body).toMatchObject({ code: 'not_found' });
  });

  it('keeps GET /api/settings/manager-token closed without a REST token, even on loopback with API auth off, and says which token opens it', async () => {
    for (const token of [null, daemon.token]) {
      const res = await daemon.call('GET', '/api/settings/manager-token', { token });
      expect(res.status).toBe(401);
      expect(JSON.stringify(res.body)).not.toContain(daemon.token);
      // The refusal names what is needed, and that the manager token is not it (issue #51).
      expect(res.body.error).toContain('needs a full REST/MCP token (an MCP_AUTH_TOKENS entry without :read)');
      expect(res.body.error).toContain('the manager token itself is not accepted');
      expect(res.body.error).toContain('`docdex manager token`');
    }
  });
});

describe('GET and PATCH /settings', () => {
  it('returns the defaults with updatedAt, per user', async () => {
    const res = await daemon.call('GET', '/api/internal/settings?userId=fresh-user');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      preferences: {
        theme: 'system',
        mode: 'build',
        autoScroll: true,
        expandDiffs: false,
        expandToolCalls: false,
        showReasoning: false,
        simpleChatMode: false,
        keyboardShortcuts: {},
        customCommands: [],
        notifications: { enabled: false },
        repoSortMode: 'recent',
        gitCredentials: [],
        gitIdentity: {},
        tts: { enabled: false, configured: false },
        stt: { enabled: false, configured: false },
        sandbox: { enabled: false, gitCredentials: false },
        defaultGitCredentialId: null,
      },
      updatedAt: 0,
    });
    expect((await daemon.call('GET', '/api/internal/settings?userId=bad%20user')).status).toBe(400);
  });

  const ALLOWED: Array<[string, unknown, unknown?]> = [
    ['theme', 'dark'],
    ['mode', 'plan'],
    ['defaultModel', 'anthropic/claude-sonnet-4-5'],
    ['defaultAgent', 'build'],
    ['autoScroll', false],
    ['expandDiffs', true],
    ['expandToolCalls', true],
    ['showReasoning', true],
    ['simpleChatMode', true],
    ['leaderKey', 'ctrl+x'],
    ['directShortcuts', ['ctrl+k']],
    ['keyboardShortcuts', { 'ctrl+p': 'palette' }],
    ['customCommands', [{ name: 'review', description: 'Review the diff', promptTemplate: 'Review $ARGUMENTS' }]],
    ['notifications', { enabled: true, sound: 'chime' }],
    ['repoOrder', [3, 1, 2]],
    ['repoSortMode', 'name'],
  ];

  it.each(ALLOWED)('accepts the allowed key %s and stores it per user', async (key, value) => {
    const before = (await daemon.call('GET', '/api/internal/settings?userId=patcher')).body.updatedAt as number;
    const res = await daemon.call('PATCH', '/api/internal/settings?userId=patcher', { body: { [key]: value } });
    expect(res.status).toBe(200);
    expect(res.body.preferences[key]).toEqual(value);
    expect(res.body.updatedAt).toBeGreaterThan(before);
    const again = await daemon.call('GET', '/api/internal/settings?userId=patcher');
    expect(again.body.preferences[key]).toEqual(value);
    expect((await daemon.call('GET', '/api/internal/settings?userId=other')).body.preferences[key]).not.toEqual(value);
  });

  it('accepts tts and stt only once configured, never returns their secrets, and rejects their secret keys', async () => {
    for (const kind of ['tts', 'stt'] as const) {
      const res = await daemon.call('PATCH', '/api/internal/settings?userId=speech', { body: { [kind]: { enabled: true } } });
      expect(res.status, kind).toBe(400);
      expect(res.body.error).toContain(`${kind} is not configured`);
      await configureSpeech(db.pool, 'speech', kind, { provider: 'openai', apiKey: `sk-secret-${kind}`, endpoint: 'https://speech.example/v1' });
    }
    const tts = await daemon.call('PATCH', '/api/internal/settings?userId=speech', {
      body: { tts: { enabled: true, provider: 'openai', autoPlay: true, voice: 'alloy', model: 'tts-1', speed: 1.25 } },
    });
    expect(tts.status).toBe(200);
    expect(tts.body.preferences.tts).toEqual({ enabled: true, provider: 'openai', autoPlay: true, voice: 'alloy', model: 'tts-1', speed: 1.25, configured: true });
    const stt = await daemon.call('PATCH', '/api/internal/settings?userId=speech', { body: { stt: { enabled: true, provider: 'openai', model: 'whisper-1', language: 'de' } } });
    expect(stt.status).toBe(200);
    expect(stt.body.preferences.stt).toEqual({ enabled: true, provider: 'openai', model: 'whisper-1', language: 'de', configured: true });
    const text = JSON.stringify((await daemon.call('GET', '/api/internal/settings?userId=speech')).body);
    expect(text).not.toContain('sk-secret');
    expect(text).not.toContain('speech.example');
  });

  const REJECTED: Array<[string, unknown]> = [
    ['gitCredentials', [{ host: 'github.com', token: 'x' }]],
    ['gitIdentity', { name: 'n', email: 'e@example.com' }],
    ['tts.apiKey', 'sk'],
    ['tts.endpoint', 'https://evil.example'],
    ['stt.apiKey', 'sk'],
    ['stt.endpoint', 'https://evil.example'],
    ['lastKnownGoodConfig', {}],
  ];

  it.each(REJECTED)('rejects the restricted key %s with 400 naming it', async (key, value) => {
    const [outer, inner] = key.split('.');
    const body = inner === undefined ? { [outer!]: value } : { [outer!]: { [inner]: value } };
    const res = await daemon.call('PATCH', '/api/internal/settings?userId=speech', { body });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'bad_request', error: expect.stringContaining(`"${key}"`) });
  });

  it('rejects unknown keys, bad values and non-object bodies with 400, changing nothing', async () => {
    const before = (await daemon.call('GET', '/api/internal/settings?userId=patcher')).body;
    for (const body of [{ nope: 1 }, { theme: 'dark', sandbox: { enabled: true } }, { updatedAt: 5 }, { tts: { volume: 3 } }]) {
      const res = await daemon.call('PATCH', '/api/internal/settings?userId=patcher', { body });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/Unknown preference key "(nope|sandbox|updatedAt|tts\.volume)"/);
    }
    for (const body of [{ theme: 'pink' }, { autoScroll: 'yes' }, { repoOrder: [1.5] }, { customCommands: [{ name: 'x' }] }, { repoSortMode: null }]) {
      const res = await daemon.call('PATCH', '/api/internal/settings?userId=patcher', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('bad_request');
    }
    for (const body of ['[1,2]', 'null', '"text"', '{not json']) {
      expect((await daemon.call('PATCH', '/api/internal/settings?userId=patcher', { body })).status).toBe(400);
    }
    expect((await daemon.call('GET', '/api/internal/settings?userId=patcher')).body).toEqual(before);
  });

  it('clears optional keys with null and merges notifications', async () => {
    await daemon.call('PATCH', '/api/internal/settings?userId=clear', { body: { defaultModel: 'a/b', notifications: { enabled: true, sound: 'x' } } });
    const res = await daemon.call('PATCH', '/api/internal/settings?userId=clear', { body: { defaultModel: null, notifications: { sound: 'y' } } });
    expect(res.status).toBe(200);
    expect(res.body.preferences.defaultModel).toBeUndefined();
    expect(res.body.preferences.notifications).toEqual({ enabled: true, sound: 'y' });
  });
});

describe('GET and PUT /agent-config', () => {
  const configFile = () => path.join(daemon.workspace.agentConfigDir, 'opencode.jsonc');

  it('answers 404 when there is no file', async () => {
    const res = await daemon.call('GET', '/api/internal/agent-config');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });

  it('rejects invalid bodies and configurations with 400 and validationIssues', async () => {
    for (const body of [{}, { content: [] }, { content: 'x' }, { content: {}, extra: 1 }]) {
      const res = await daemon.call('PUT', '/api/internal/agent-config', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const bad = await daemon.call('PUT', '/api/internal/agent-config', {
      body: { content: { model: 'no-provider', share: 'sometimes', mcp: { x: { type: 'remote', url: 'not a url' } }, agent: { build: { temperature: 7 } } } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_config');
    expect(bad.body.validationIssues).toEqual(
      expect.arrayContaining([
        { path: 'model', message: expect.stringContaining('provider/model') },
        { path: 'share', message: expect.any(String) },
        { path: 'agent.build.temperature', message: expect.any(String) },
      ]),
    );
    expect(existsSync(configFile())).toBe(false);
  });

  it('writes a new file, keeps comments and unknown keys, and reports restartRequired for agent/plugin/skills/provider', async () => {
    const first = await daemon.call('PUT', '/api/internal/agent-config', {
      body: {
        content: {
          $schema: 'https://opencode.ai/config.json',
          model: 'anthropic/claude-sonnet-4-5',
          provider: { local: { npm: '@ai-sdk/openai-compatible', options: { baseURL: 'http://127.0.0.1:9/v1' } } },
        },
      },
    });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ path: configFile(), isValid: true, restartRequired: true, content: { model: 'anthropic/claude-sonnet-4-5' } });
    // The user adds comments and a key docdex does not know.
    writeFileSync(
      configFile(),
      `{\n  // my schema\n  "$schema": "https://opencode.ai/config.json",\n  /* the model I like */\n  "model": "anthropic/claude-sonnet-4-5",\n  "provider": { "local": { "npm": "@ai-sdk/openai-compatible", "options": { "baseURL": "http://127.0.0.1:9/v1" } } },\n  "futureKey": { "x": 1 }, // kept\n}\n`,
    );
    const got = await daemon.call('GET', '/api/internal/agent-config');
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ isValid: true, content: { futureKey: { x: 1 } } });
    expect(got.body.rawContent).toContain('// my schema');
    expect(got.body.updatedAt).toBeGreaterThan(Date.now() - 60_000);

    for (const [key, value] of [
      ['agent', { review: { description: 'Reviews', mode: 'subagent' } }],
      ['plugin', ['my-plugin']],
      ['skills', { paths: ['x'] }],
      ['provider', { other: { npm: '@ai-sdk/openai-compatible' } }],
    ] as const) {
      const current = (await daemon.call('GET', '/api/internal/agent-config')).body.content;
      const res = await daemon.call('PUT', '/api/internal/agent-config', { body: { content: { ...current, [key]: value } } });
      expect(res.status, key).toBe(200);
      expect(res.body.restartRequired, key).toBe(true);
      expect(res.body.rawContent).toContain('/* the model I like */');
      expect(res.body.rawContent).toContain('// kept');
    }
    expect(agent.requests).toHaveLength(0);
  });

  it('patches other changes live, reports removedFields, and keeps a last-known-good copy', async () => {
    const current = (await daemon.call('GET', '/api/internal/agent-config')).body;
    agentAnswer = (req) => (req.url === '/global/config' ? { status: 200, body: { ...JSON.parse(req.body), theme: undefined, model: 'anthropic/claude-sonnet-4-5' } } : { status: 200, body: true });
    const res = await daemon.call('PUT', '/api/internal/agent-config', { body: { content: { ...current.content, theme: 'tokyonight', share: 'disabled' } } });
    expect(res.status).toBe(200);
    expect(res.body.restartRequired).toBeUndefined();
    expect(res.body.appliedLive).toBe(true);
    expect(res.body.removedFields).toEqual(['theme']);
    const patch = agent.requests.at(-1)!;
    expect(patch.method).toBe('PATCH');
    expect(patch.url).toBe('/global/config');
    expect(JSON.parse(patch.body)).toEqual({ share: 'disabled', theme: 'tokyonight' });
    expect(res.body.rawContent).toContain('// kept');
    expect(readFileSync(`${configFile()}.last-known-good`, 'utf8')).toBe(current.rawContent);

    // A removed key is sent as null, which opencode deletes.
    const { theme: _t, ...withoutTheme } = res.body.content;
    const removal = await daemon.call('PUT', '/api/internal/agent-config', { body: { content: withoutTheme } });
    expect(removal.body).toMatchObject({ appliedLive: true });
    expect(agent.requests.at(-1)).toMatchObject({ method: 'PATCH', url: '/global/config' });
    expect(JSON.parse(agent.requests.at(-1)!.body)).toEqual({ theme: null });

    // An unchanged file touches nothing upstream.
    const count = agent.requests.length;
    expect((await daemon.call('PUT', '/api/internal/agent-config', { body: { content: withoutTheme } })).status).toBe(200);
    expect(agent.requests).toHaveLength(count);

    // The agent server failing does not fail the write.
    agentAnswer = () => ({ status: 500, body: { error: 'boom' } });
    const failing = await daemon.call('PUT', '/api/internal/agent-config', { body: { content: { ...withoutTheme, theme: 'x' } } });
    expect(failing.status).toBe(200);
    expect(failing.body).toMatchObject({ appliedLive: false, liveError: expect.stringContaining('500') });
    agentAnswer = () => ({ status: 200, body: true });
  });

  it('reports a broken file as invalid and keeps the last-known-good copy of the valid one', async () => {
    const lastKnownGood = readFileSync(`${configFile()}.last-known-good`, 'utf8');
    writeFileSync(configFile(), '{ "model": ');
    const got = await daemon.call('GET', '/api/internal/agent-config');
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ isValid: false, rawContent: '{ "model": ', validationIssues: expect.arrayContaining([expect.objectContaining({ message: expect.stringContaining('syntax') })]) });
    const put = await daemon.call('PUT', '/api/internal/agent-config', { body: { content: { model: 'a/b' } } });
    expect(put.status).toBe(200);
    // The broken file is not "known good": the copy stays the last valid file docdex replaced.
    expect(readFileSync(`${configFile()}.last-known-good`, 'utf8')).toBe(lastKnownGood);
  });

  it('answers 500 when the file cannot be read', async () => {
    const file = configFile();
    const saved = readFileSync(file, 'utf8');
    rmSync(file);
    mkdirSync(file);
    try {
      const res = await daemon.call('GET', '/api/internal/agent-config');
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: 'Internal server error.', code: 'internal_error', details: [] });
    } finally {
      rmSync(file, { recursive: true });
      writeFileSync(file, saved);
    }
  });

  it('answers 500 when the file cannot be written', async () => {
    const dir = daemon.workspace.agentConfigDir;
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(path.dirname(dir), { recursive: true });
    writeFileSync(dir, 'not a directory');
    const res = await daemon.call('PUT', '/api/internal/agent-config', { body: { content: { theme: 'x' } } });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'Internal server error.', code: 'internal_error', details: [] });
    rmSync(dir, { force: true });
  });
});

describe('POST /assistant/reload', () => {
  it('disposes the instance, answers 502 when the agent server fails, and limits to 5 per minute with Retry-After', async () => {
    agentAnswer = () => ({ status: 200, body: true });
    const ok = await daemon.call('POST', '/api/internal/assistant/reload');
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ success: true });
    expect(agent.requests.at(-1)).toMatchObject({ method: 'POST', url: '/instance/dispose' });
    agentAnswer = () => ({ status: 500, body: 'upstream broke' });
    const failed = await daemon.call('POST', '/api/internal/assistant/reload');
    expect(failed.status).toBe(502);
    expect(failed.body).toMatchObject({ code: 'bad_gateway', error: expect.stringContaining('500') });
    agentAnswer = () => ({ status: 200, body: true });
    for (let i = 0; i < 3; i++) expect((await daemon.call('POST', '/api/internal/assistant/reload')).status).toBe(200);
    const limited = await daemon.call('POST', '/api/internal/assistant/reload');
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(55);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Requests without a valid token are 401, and are not counted against anyone.
    expect((await daemon.call('POST', '/api/internal/assistant/reload', { token: null })).status).toBe(401);
  });

  it('answers 502 when no agent server is running', async () => {
    const down = await startAgentDaemon(db, { services: false, env: { AGENT_PORT: '9' } });
    try {
      await rotateManagerToken(db.pool).then((t) => {
        down.token = t.token;
        daemon.token = t.token;
      });
      const res = await down.call('POST', '/api/internal/assistant/reload');
      expect(res.status).toBe(502);
      expect(res.body.error).toContain('unreachable');
    } finally {
      await down.close();
    }
  });
});

describe('GET /repos', () => {
  it('lists the exact spec fields in the user order, and answers 500 on a database failure', async () => {
    const at = (minutes: number) => new Date(Date.now() - minutes * 60_000);
    const insert = async (localPath: string, extra: Record<string, unknown> = {}) => {
      const row: Record<string, unknown> = { local_path: localPath, clone_status: 'ready', cloned_at: at(100), ...extra };
      const cols = Object.keys(row);
      const values = Object.values(row);
      const { rows } = await db.pool.query<{ id: number }>(`INSERT INTO agent_repos (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING id`, values);
      return rows[0]!.id;
    };
    const zeta = await insert('zeta', { repo_url: 'https://example.com/zeta.git', default_branch: 'main', last_accessed_at: at(1) });
    const alpha = await insert('alpha', { cloned_at: at(50), default_branch: 'main', last_pulled: at(10) });
    const mid = await insert('mid', { is_local: true, cloned_at: at(5) });
    const wt = await insert('alpha-feature', { is_worktree: true, source_path: '/x/alpha', branch: 'feature', cloned_at: at(200) });
    const order = async (userId: string) => ((await daemon.call('GET', `/api/internal/repos?userId=${userId}`)).body.repos as Array<{ id: number }>).map((r) => r.id);

    expect(await order('repo-user')).toEqual([zeta, mid, alpha, wt]);
    await daemon.call('PATCH', '/api/internal/settings?userId=repo-user', { body: { repoSortMode: 'name' } });
    expect(await order('repo-user')).toEqual([alpha, wt, mid, zeta]);
    await daemon.call('PATCH', '/api/internal/settings?userId=repo-user', { body: { repoSortMode: 'manual' } });
    expect(await order('repo-user')).toEqual([zeta, alpha, mid, wt]);
    await daemon.call('PATCH', '/api/internal/settings?userId=repo-user', { body: { repoOrder: [wt, 999, mid], repoSortMode: 'name' } });
    expect(await order('repo-user')).toEqual([wt, mid, alpha, zeta]);

    const res = await daemon.call('GET', '/api/internal/repos?userId=repo-user');
    const byId = Object.fromEntries((res.body.repos as Array<{ id: number }>).map((r) => [r.id, r])) as Record<number, Record<string, unknown>>;
    expect(Object.keys(byId[zeta]!).sort()).toEqual(['clonedAt', 'cloneStatus', 'defaultBranch', 'fullPath', 'id', 'lastAccessedAt', 'localPath', 'repoUrl'].sort());
    expect(byId[zeta]).toMatchObject({ localPath: 'zeta', fullPath: path.join(daemon.workspace.reposDir, 'zeta'), cloneStatus: 'ready', repoUrl: 'https://example.com/zeta.git' });
    expect(byId[alpha]).toHaveProperty('lastPulled');
    expect(byId[mid]).toMatchObject({ isLocal: true });
    expect(byId[mid]).not.toHaveProperty('repoUrl');
    expect(byId[wt]).toMatchObject({ isWorktree: true, sourcePath: '/x/alpha', branch: 'feature' });

    const spaces = await daemon.call('GET', '/api/internal/agent-workspaces');
    expect(spaces.status).toBe(200);
    expect(spaces.body.roots).toEqual({ repos: daemon.workspace.reposDir, scheduleWorktrees: daemon.workspace.scheduleWorktreesDir });
    expect(spaces.body.workspaces).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'assistant', path: daemon.workspace.root }),
        expect.objectContaining({ kind: 'repo', repoId: zeta, inSandboxRoots: true }),
        expect.objectContaining({ kind: 'repo', repoId: mid, inSandboxRoots: false }),
        expect.objectContaining({ kind: 'worktree', repoId: wt }),
      ]),
    );

    await db.pool.query('ALTER TABLE agent_repos RENAME TO agent_repos_away');
    try {
      const broken = await daemon.call('GET', '/api/internal/repos');
      expect(broken.status).toBe(500);
      expect(broken.body).toEqual({ error: 'Internal server error.', code: 'internal_error', details: [] });
    } finally {
      await db.pool.query('ALTER TABLE agent_repos_away RENAME TO agent_repos');
    }
    await db.pool.query('DELETE FROM agent_repos');
  });

  it('answers 400 for bad ids and 404 for unknown repos on git-info', async () => {
    expect((await daemon.call('GET', '/api/internal/repos/abc/git-info')).status).toBe(400);
    expect((await daemon.call('GET', '/api/internal/repos/0/git-info')).status).toBe(400);
    const missing = await daemon.call('GET', '/api/internal/repos/4242/git-info');
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('not_found');
  });
});

describe('OpenAPI', () => {
  it('documents the internal and settings routes', async () => {
    const spec = (await daemon.call('GET', '/openapi.json', { token: null })).body;
    for (const route of [
      '/api/internal/notifications/send',
      '/api/internal/settings',
      '/api/internal/agent-config',
      '/api/internal/assistant/reload',
      '/api/internal/repos',
      '/api/internal/repos/{repoId}/git-info',
      '/api/internal/agent-workspaces',
      '/api/internal/schedules/all',
      '/api/internal/schedules/all/runs',
      '/api/internal/repos/{repoId}/schedules/{scheduleId}/runs/{runId}/cancel',
      '/api/settings/skills',
      '/api/settings/skills/{name}',
      '/api/settings/manager-token',
      '/api/settings/push/subscribe',
      '/api/settings/push/unsubscribe',
      '/api/settings/push/vapid-public-key',
    ]) {
      expect(spec.paths, route).toHaveProperty([route]);
    }
    expect(spec.components.schemas).toHaveProperty('AgentPreferences');
    expect(spec.components.schemas).toHaveProperty('RepoRecord');
  });
});

describe('with REST authentication on', () => {
  it('guards /api/settings with the REST tokens and /api/internal with the manager token only', async () => {
    const secured = await startAgentDaemon(db, { services: false, env: { API_AUTH: 'true', MCP_AUTH_TOKEN: REST_TOKEN } });
    try {
      secured.token = daemon.token;
      expect((await secured.call('GET', '/api/settings/manager-token', { token: null })).status).toBe(401);
      expect((await secured.call('GET', '/api/settings/manager-token', { token: secured.token })).status).toBe(401);
      const token = await secured.call('GET', '/api/settings/manager-token', { token: REST_TOKEN });
      expect(token.status).toBe(200);
      expect(token.body.token).toBe(secured.token);
      expect((await secured.call('GET', '/api/settings/skills', { token: REST_TOKEN })).status).toBe(200);

      expect((await secured.call('GET', '/api/internal/settings')).status).toBe(200);
      expect((await secured.call('GET', '/api/internal/settings', { token: REST_TOKEN })).status).toBe(401);
      expect((await secured.call('GET', '/api/internal/settings', { token: null })).status).toBe(401);
      // The internal prefix is no way around REST auth for other routes.
      for (const raw of ['/api/internal/../settings/manager-token', '/api/internal/..%2F..%2Fapi/settings/manager-token', '/api/internal%2F../api/settings/manager-token']) {
        const res = await rawRequest(secured.base, 'GET', raw, { authorization: `Bearer ${secured.token}` });
        expect(res.status, raw).not.toBe(200);
        expect(res.body).not.toContain(secured.token);
      }
    } finally {
      await secured.close();
    }
  });
});
