import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveMgrRequest } from '../../src/core/agent/mgr-allowlist.js';
import { readSettings, setSandboxPreferences } from '../../src/core/agent/settings.js';
import { recordSandboxStamp } from '../../src/core/agent-server/state.js';
import { sandboxSettings } from '../../src/core/sandbox/settings.js';
import { changeSandboxSwitches, readSandboxSwitches } from '../../src/core/sandbox/switch.js';
import { missingSandboxCapabilities } from '../sandbox/vm-host.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startAgentDaemon } from './helpers.js';
import type { AgentDaemon } from './helpers.js';

/**
 * Issue #51: the manager settings a user turns and an agent cannot (sandbox switches, git identity, speech
 * services) over HTTP, against the real daemon and database; and the statuses and messages around them.
 * The CLI and the real microVM drive the same switches in test/sandbox/switches-microvm.test.ts.
 */

const REST_TOKEN = 'rest-token-manager-settings-0123456789';
let db: TestDatabase;
let daemon: AgentDaemon;

beforeAll(async () => {
  db = await createTestDatabase();
  daemon = await startAgentDaemon(db, { services: false });
});
afterAll(async () => {
  await daemon?.close();
  await db?.drop();
});

const settings = (method: string, route: string, body?: unknown) => daemon.call(method, `/api/settings${route}`, { token: null, ...(body === undefined ? {} : { body }) });

/** The agent server row as a live supervising daemon leaves it, with the stamp of the child it started. */
async function serverRunning(enforced: boolean): Promise<void> {
  await db.pool.query(`UPDATE agent_server_state SET status = 'running', supervisor = 'test:1', heartbeat_at = now() WHERE singleton`);
  await recordSandboxStamp(db.pool, enforced);
}

describe('the sandbox switches (GET, PUT /api/settings/sandbox)', () => {
  it('starts off, and says the setting applies when the agent server starts', async () => {
    const res = await settings('GET', '/sandbox');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ enabled: false, gitCredentials: false, gitIdentity: {}, agentServer: { status: 'stopped', enforced: null }, takesEffect: 'on-start' });
  });

  it('turns credential forwarding on and off without a host check, and refuses bad bodies with 400', async () => {
    expect((await settings('PUT', '/sandbox', { gitCredentials: true })).body).toMatchObject({ enabled: false, gitCredentials: true });
    expect((await settings('PUT', '/sandbox', { gitCredentials: false })).body).not.toHaveProperty('host');
    for (const body of [{ enabled: 'yes' }, { sandbox: true }, [], { enabled: true, extra: 1 }]) {
      const res = await settings('PUT', '/sandbox', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('bad_request');
    }
  });

  it.skipIf(missingSandboxCapabilities({ built: true }).length > 0)('turns enforcement on after checking the host, and off again', async () => {
    const on = await settings('PUT', '/sandbox', { enabled: true });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ enabled: true, takesEffect: 'on-start', host: { supported: true, problems: [] } });
    expect((await settings('PUT', '/sandbox', { enabled: false })).body).toMatchObject({ enabled: false });
  });

  it('refuses to turn enforcement on where the microVM cannot run, and changes nothing', async () => {
    const before = await readSettings(db.pool);
    await expect(changeSandboxSwitches(db.pool, sandboxSettings(daemon.config), { enabled: true, gitCredentials: true }, { host: { searchPath: '', platform: 'darwin' } })).rejects.toMatchObject({
      code: 'sandbox_host_unsupported',
      message: expect.stringMatching(/^Sandbox enforcement stays off: this host cannot run the microVM \(the microVM needs a Linux host; missing qemu-system-x86_64/),
      hint: expect.stringContaining('apt-get install'),
    });
    expect((await readSettings(db.pool)).preferences.sandbox).toEqual(before.preferences.sandbox);
  });

  it('keeps the running server on the stamp it started with: a setting change waits for a restart', async () => {
    await serverRunning(false);
    try {
      expect((await readSandboxSwitches(db.pool)).takesEffect).toBe('now');
      await setSandboxPreferences(db.pool, 'default', { enabled: true });
      expect((await settings('GET', '/sandbox')).body).toMatchObject({ enabled: true, agentServer: { status: 'running', enforced: false }, takesEffect: 'on-restart' });
      await recordSandboxStamp(db.pool, true);
      expect((await settings('GET', '/sandbox')).body).toMatchObject({ agentServer: { enforced: true }, takesEffect: 'now' });
      expect((await settings('PUT', '/sandbox', { enabled: false })).body).toMatchObject({ enabled: false, agentServer: { enforced: true }, takesEffect: 'on-restart' });
    } finally {
      await db.pool.query(`UPDATE agent_server_state SET status = 'stopped', supervisor = NULL WHERE singleton`);
    }
  });
});

describe('the git identity (GET, PUT, DELETE /api/settings/git-identity)', () => {
  it('sets, shows and clears it; the internal settings show it read-only', async () => {
    expect((await settings('GET', '/git-identity')).body).toEqual({ name: null, email: null });
    expect((await settings('PUT', '/git-identity', { name: '  Ada Lovelace ', email: 'ada@example.com' })).body).toEqual({ name: 'Ada Lovelace', email: 'ada@example.com' });
    expect((await daemon.call('GET', '/api/internal/settings')).body.preferences.gitIdentity).toEqual({ name: 'Ada Lovelace', email: 'ada@example.com' });
    expect((await settings('GET', '/sandbox')).body.gitIdentity).toEqual({ name: 'Ada Lovelace', email: 'ada@example.com' });
    expect((await settings('DELETE', '/git-identity')).body).toEqual({ name: null, email: null });
    expect((await daemon.call('GET', '/api/internal/settings')).body.preferences.gitIdentity).toEqual({});
  });

  it('refuses an identity git could not use with 400', async () => {
    for (const body of [
      { name: 'A', email: 'no-at-sign' },
      { name: '', email: 'a@b' },
      { name: 'A\nB', email: 'a@b' },
      { name: 'A', email: 'a b@c' },
      { name: 'A' },
      { name: 'A', email: 'a@b', extra: 1 },
    ]) {
      const res = await settings('PUT', '/git-identity', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('bad_request');
    }
  });
});

describe("out of the agent's reach", () => {
  it('keeps PATCH /api/internal/settings refusing sandbox and gitIdentity', async () => {
    const sandbox = await daemon.call('PATCH', '/api/internal/settings', { body: { sandbox: { enabled: false } } });
    expect(sandbox.status).toBe(400);
    expect(sandbox.body.error).toMatch(/Unknown preference key "sandbox"/);
    expect((await daemon.call('PATCH', '/api/internal/settings', { body: { gitIdentity: { name: 'x', email: 'x@y' } } })).status).toBe(400);
  });

  it('gives the mgr tool no path to the settings routes', () => {
    for (const [method, route] of [
      ['PUT', '/../settings/sandbox'],
      ['PUT', '/settings/sandbox'],
      ['PATCH', '/settings/../../settings/sandbox'],
      ['PUT', '/settings/git-identity'],
      ['PUT', '/settings/speech/tts'],
      ['PUT', 'http://127.0.0.1:7654/api/settings/sandbox'],
    ] as const) {
      expect(resolveMgrRequest(method, route).ok, `${method} ${route}`).toBe(false);
    }
  });

  it('does not open the settings routes to the manager token when REST auth is on', async () => {
    const secured = await startAgentDaemon(db, { services: false, env: { API_AUTH: 'true', MCP_AUTH_TOKEN: REST_TOKEN } });
    try {
      secured.token = daemon.token;
      for (const token of [null, secured.token]) expect((await secured.call('PUT', '/api/settings/sandbox', { token, body: { gitCredentials: true } })).status).toBe(401);
      expect((await secured.call('PUT', '/api/settings/sandbox', { token: REST_TOKEN, body: { gitCredentials: false } })).status).toBe(200);
    } finally {
      await secured.close();
    }
  });
});

describe('speech services (PUT, DELETE /api/settings/speech/:kind)', () => {
  it('says where tts is set up, lets the user set it up, and then lets PATCH change it', async () => {
    const refused = await daemon.call('PATCH', '/api/internal/settings', { body: { tts: { enabled: true } } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toContain('`docdex manager speech set tts`');
    expect(refused.body.error).toContain('PUT /api/settings/speech/tts');

    const configured = await settings('PUT', '/speech/tts', { provider: 'openai', model: 'tts-1', apiKey: 'sk-speech-secret' });
    expect(configured.status).toBe(200);
    expect(configured.body).toMatchObject({ enabled: false, configured: true, provider: 'openai', model: 'tts-1' });
    expect(JSON.stringify(configured.body)).not.toContain('sk-speech-secret');
    expect((await daemon.call('PATCH', '/api/internal/settings', { body: { tts: { enabled: true, voice: 'alloy' } } })).body.preferences.tts).toMatchObject({
      enabled: true,
      voice: 'alloy',
      configured: true,
    });
    expect(JSON.stringify((await daemon.call('GET', '/api/internal/settings')).body)).not.toContain('sk-speech-secret');

    for (const body of [{ provider: 'openai' }, { provider: 'x', endpoint: 'ftp://x/y' }, { provider: '', apiKey: 'k' }, { provider: 'x', apiKey: 'k', extra: 1 }]) {
      expect((await settings('PUT', '/speech/tts', body)).status, JSON.stringify(body)).toBe(400);
    }
    expect((await settings('PUT', '/speech/video', { provider: 'x', apiKey: 'k' })).status).toBe(400);
    expect((await settings('DELETE', '/speech/tts')).body).toMatchObject({ configured: false });
  });
});

describe('OpenAPI', () => {
  it('documents the new settings routes, and 400 (not 422) for bad input on the agent routes', async () => {
    const spec = (await daemon.call('GET', '/openapi.json', { token: null })).body;
    for (const route of ['/api/settings/sandbox', '/api/settings/git-identity', '/api/settings/speech/{kind}']) expect(spec.paths, route).toHaveProperty([route]);
    for (const [route, method] of [
      ['/api/settings/skills', 'post'],
      ['/api/settings/skills/{name}', 'put'],
      ['/api/settings/push/subscribe', 'post'],
      ['/api/settings/sandbox', 'put'],
    ] as const) {
      const responses = spec.paths[route][method].responses as Record<string, unknown>;
      expect(responses, `${method} ${route}`).toHaveProperty(['400']);
      expect(responses, `${method} ${route}`).not.toHaveProperty(['422']);
    }
  });
});
