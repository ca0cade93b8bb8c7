import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { approveAgentConfigState, canonicalJson, protectedChanges, protectedProjection } from '../../src/core/agent/agent-config-guard.js';
import { setSandboxPreferences } from '../../src/core/agent/settings.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startAgentDaemon, startFakeServer } from './helpers.js';
import { BASE, protectedAttempts } from './protected-config-attempts.js';
import type { AgentDaemon } from './helpers.js';

/**
 * Issue 30, item 5: with sandbox enforcement on, the internal API (the only way the mgr tool reaches the agent
 * configuration) refuses every change to a key that starts host processes or loosens permissions, and a reload
 * that would load configuration the user never approved. The user's own route (/api/settings/agent-config,
 * behind the REST auth) still changes them. All through the real daemon over HTTP with the manager token.
 */

let db: TestDatabase;
let daemon: AgentDaemon;
let agent: Awaited<ReturnType<typeof startFakeServer>>;
/** Nothing runs these commands here (the agent server is a fake); the marker only has to be a path. */
const PROTECTED_ATTEMPTS = protectedAttempts('/nonexistent/docdex-marker');

/** Changes an agent may make with enforcement on. */
const ALLOWED_ATTEMPTS: Array<Record<string, unknown>> = [
  { ...BASE, model: 'openai/gpt-5' },
  { ...BASE, theme: 'tokyonight', username: 'Ada', small_model: 'openai/gpt-5-mini', default_agent: 'build', logLevel: 'WARN' },
  { ...BASE, keybinds: { leader: 'ctrl+x' }, disabled_providers: ['openrouter'], compaction: { auto: true } },
  { ...BASE, agent: { build: { ...BASE.agent.build, model: 'openai/gpt-5', temperature: 0.2, description: 'Builds', prompt: 'Be brief.' } } },
];

const configFile = () => path.join(daemon.workspace.agentConfigDir, 'opencode.jsonc');
const mgrPut = (content: Record<string, unknown>) => daemon.call('PUT', '/api/internal/agent-config', { body: { content } });
const userPut = (content: Record<string, unknown>) => daemon.call('PUT', '/api/settings/agent-config', { body: { content }, token: null });

beforeAll(async () => {
  db = await createTestDatabase();
  agent = await startFakeServer(() => ({ status: 200, body: true }));
  daemon = await startAgentDaemon(db, { services: false, env: { AGENT_PORT: String(agent.port) } });
});
afterAll(async () => {
  await daemon?.close();
  await agent?.close();
  await db?.drop();
});
beforeEach(async () => {
  await setSandboxPreferences(db.pool, 'default', { enabled: false });
  expect((await userPut(BASE)).status).toBe(200);
  agent.requests.length = 0;
});

describe('PUT /api/internal/agent-config with sandbox enforcement on', () => {
  beforeEach(async () => setSandboxPreferences(db.pool, 'default', { enabled: true }));

  it.each(PROTECTED_ATTEMPTS.map(([key, content], i) => [i, key, content] as const))('refuses attempt %i (%s) with 403, writing and patching nothing', async (_i, key, content) => {
    const before = readFileSync(configFile(), 'utf8');
    const res = await mgrPut(content);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('forbidden');
    expect(res.body.error).toContain(`"${key}"`);
    expect(res.body.error).toContain('docdex agent restart');
    expect(res.body.error).toContain('PUT /api/settings/agent-config');
    expect(res.body.details).toEqual(expect.arrayContaining([{ path: key, reason: expect.any(String) }]));
    expect(readFileSync(configFile(), 'utf8')).toBe(before);
    expect(agent.requests).toEqual([]);
  });

  it('accepts changes to models and looks, and patches them live', async () => {
    for (const content of ALLOWED_ATTEMPTS) {
      const res = await mgrPut(content);
      expect(res.status, JSON.stringify(content)).toBe(200);
      expect(res.body.content).toEqual(content);
    }
    expect(agent.requests.some((r) => r.method === 'PATCH' && r.url === '/global/config')).toBe(true);
  });

  it('lets the user change every protected key through /api/settings/agent-config, and the agent keep them unchanged', async () => {
    for (const [key, content] of PROTECTED_ATTEMPTS) {
      const res = await userPut(content);
      expect(res.status, key).toBe(200);
      expect(res.body.content).toEqual(content);
      // Sending back what the user wrote, with an allowed change, is fine; removing it is not.
      expect((await mgrPut({ ...content, model: 'openai/gpt-5' })).status, key).toBe(200);
      expect((await mgrPut(BASE)).status, key).toBe(403);
      expect((await userPut(BASE)).status).toBe(200);
    }
  });
});

describe('PUT /api/internal/agent-config with sandbox enforcement off', () => {
  it('accepts every key as before', async () => {
    for (const [key, content] of PROTECTED_ATTEMPTS) {
      const res = await mgrPut(content);
      expect(res.status, key).toBe(200);
      expect(res.body.content).toEqual(content);
    }
  });
});

describe('POST /api/internal/assistant/reload with sandbox enforcement on', () => {
  const reload = () => daemon.call('POST', '/api/internal/assistant/reload');
  const pluginFile = () => path.join(daemon.workspace.pluginDir, 'evil.js');
  const dispose = () => agent.requests.filter((r) => r.url === '/instance/dispose').length;

  beforeEach(async () => {
    rmSync(pluginFile(), { force: true });
    await approveAgentConfigState(db.pool, daemon.workspace);
    await setSandboxPreferences(db.pool, 'default', { enabled: true });
    // Each test may reload a few times: the rate limit is not what is tested here.
    await db.pool.query('DELETE FROM agent_rate_limit_hits');
  });

  it('reloads when nothing protected changed since the user approved it, also after allowed mgr changes', async () => {
    expect((await reload()).status).toBe(200);
    expect((await mgrPut({ ...BASE, theme: 'tokyonight', agent: { build: { ...BASE.agent.build, prompt: 'Be brief.' } } })).status).toBe(200);
    expect((await reload()).status).toBe(200);
    expect(dispose()).toBe(2);
  });

  it('refuses when the file gained a protected key behind the API (a host file tool), until the user approves', async () => {
    writeFileSync(configFile(), JSON.stringify({ ...BASE, mcp: { evil: { type: 'local', command: ['sh', '-c', 'touch /tmp/pwned'] } } }));
    const res = await reload();
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('forbidden');
    expect(res.body.error).toContain('docdex agent restart');
    expect(res.body.details).toEqual([{ path: configFile(), reason: expect.any(String) }]);
    expect(dispose()).toBe(0);
    // The user saves it through their own route: now it is theirs.
    expect((await userPut(JSON.parse(readFileSync(configFile(), 'utf8')) as Record<string, unknown>)).status).toBe(200);
    expect((await reload()).status).toBe(200);
  });

  it('refuses when a plugin, tool, command, agent file or a second config file appeared, and a user save of the config does not approve it', async () => {
    for (const [file, text] of [
      [pluginFile(), 'export const Evil = async () => ({});'],
      [path.join(daemon.workspace.agentConfigDir, 'tool', 'evil.ts'), 'export default {};'],
      [path.join(daemon.workspace.agentConfigDir, 'command', 'evil.md'), '!`touch /tmp/pwned`'],
      [path.join(daemon.workspace.agentConfigDir, 'agent', 'evil.md'), '---\npermission:\n  bash: allow\n---\n'],
      [path.join(daemon.workspace.agentConfigDir, 'opencode.json'), '{"mcp":{"x":{"type":"local","command":["sh"]}}}'],
      [path.join(daemon.workspace.root, 'opencode.json'), '{"permission":"allow"}'],
    ] as const) {
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, text);
      const res = await reload();
      expect(res.status, file).toBe(403);
      expect(res.body.details, file).toEqual([{ path: file, reason: expect.any(String) }]);
      expect((await userPut(BASE)).status).toBe(200);
      expect((await reload()).status, file).toBe(403);
      rmSync(file);
      await db.pool.query('DELETE FROM agent_rate_limit_hits');
    }
    expect(dispose()).toBe(0);
  });

  it('reloads anything with enforcement off, as before', async () => {
    await setSandboxPreferences(db.pool, 'default', { enabled: false });
    writeFileSync(pluginFile(), 'export const Evil = async () => ({});');
    expect((await reload()).status).toBe(200);
  });
});

describe('the protected-key check (property)', () => {
  const json = fc.jsonValue({ maxDepth: 3 });
  const config = fc.dictionary(fc.oneof(fc.constantFrom('mcp', 'model', 'theme', 'agent', 'permission', 'instructions', 'tools', 'plugin'), fc.string()), json, { maxKeys: 6 });

  it('finds a change exactly when the protected projections differ, whatever the content', () => {
    fc.assert(
      fc.property(config, config, (a, b) => {
        const differ = canonicalJson(protectedProjection(a)) !== canonicalJson(protectedProjection(b));
        expect(protectedChanges(a, b).length > 0).toBe(differ);
        expect(protectedChanges(a, a)).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });

  it('answers any JSON object body to the internal PUT with 200, 400 or 403, never 500', async () => {
    await setSandboxPreferences(db.pool, 'default', { enabled: true });
    await fc.assert(
      fc.asyncProperty(config, async (content) => {
        const res = await mgrPut(content);
        expect([200, 400, 403]).toContain(res.status);
        expect(res.body).toHaveProperty(res.status === 200 ? 'content' : 'code');
      }),
      { numRuns: 40 },
    );
  });
});

describe('the user route with REST authentication on', () => {
  it('needs a REST token: the manager token the mgr tool holds does not open it', async () => {
    const restToken = 'rest-token-for-the-user-0123456789abcdef';
    const secured = await startAgentDaemon(db, { services: false, env: { API_AUTH: 'true', MCP_AUTH_TOKEN: restToken, AGENT_PORT: String(agent.port) } });
    try {
      secured.token = daemon.token;
      const content = PROTECTED_ATTEMPTS[0]![1];
      for (const token of [null, secured.token]) {
        expect((await secured.call('PUT', '/api/settings/agent-config', { body: { content }, token })).status).toBe(401);
        expect((await secured.call('GET', '/api/settings/agent-config', { token })).status).toBe(401);
      }
      const res = await secured.call('PUT', '/api/settings/agent-config', { body: { content }, token: restToken });
      expect(res.status).toBe(200);
      expect(res.body.content).toEqual(content);
    } finally {
      await secured.close();
    }
  });
});
