import { createECDH, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import webpush from 'web-push';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rotateManagerToken } from '../../src/core/agent/token.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startAgentDaemon, startFakeServer } from './helpers.js';
import type { AgentDaemon } from './helpers.js';

let db: TestDatabase;
let daemon: AgentDaemon;
let push: Awaited<ReturnType<typeof startFakeServer>>;
const vapid = webpush.generateVAPIDKeys();
const env = { VAPID_PUBLIC_KEY: vapid.publicKey, VAPID_PRIVATE_KEY: vapid.privateKey, VAPID_SUBJECT: 'mailto:ops@example.com' };

/** A browser-like subscription: a real P-256 public key and a 16-byte auth secret. */
function deviceKeys() {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') };
}

beforeAll(async () => {
  db = await createTestDatabase();
  push = await startFakeServer((req) => {
    const status = Number(/\/push\/(\d{3})/.exec(req.url)?.[1] ?? 201);
    return { status, body: status >= 400 ? { reason: `status ${status}` } : undefined };
  });
  daemon = await startAgentDaemon(db, { services: false, env });
});
afterAll(async () => {
  await daemon?.close();
  await push?.close();
  await db?.drop();
});

async function useFreshToken(): Promise<void> {
  daemon.token = (await rotateManagerToken(db.pool)).token;
}

describe('push subscriptions', () => {
  it('serves the VAPID public key and registers, refreshes, lists and removes devices', async () => {
    expect((await daemon.call('GET', '/api/settings/push/vapid-public-key', { token: null })).body).toEqual({ publicKey: vapid.publicKey });
    const body = { endpoint: `${push.url}/push/201/device-a`, keys: deviceKeys(), userAgent: 'test browser' };
    const created = await daemon.call('POST', '/api/settings/push/subscribe', { body, token: null });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ endpoint: body.endpoint, userId: 'default', userAgent: 'test browser' });
    expect(created.body).not.toHaveProperty('p256dh');
    const again = await daemon.call('POST', '/api/settings/push/subscribe', { body: { ...body, keys: deviceKeys() }, token: null });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(created.body.id);
    const listed = await daemon.call('GET', '/api/settings/push/subscriptions', { token: null });
    expect(listed.body.subscriptions).toHaveLength(1);
    expect(JSON.stringify(listed.body)).not.toContain(body.keys.auth);
    expect((await daemon.call('POST', '/api/settings/push/unsubscribe', { body: { endpoint: body.endpoint }, token: null })).body).toEqual({ removed: true });
    expect((await daemon.call('POST', '/api/settings/push/unsubscribe', { body: { endpoint: body.endpoint }, token: null })).body).toEqual({ removed: false });
  });

  it('refuses endpoints that are not https (except a host in CRAWL_ALLOW_HOSTS) and malformed keys', async () => {
    for (const endpoint of ['http://push.example.com/x', 'ftp://127.0.0.1/x', 'not a url']) {
      expect((await daemon.call('POST', '/api/settings/push/subscribe', { body: { endpoint, keys: deviceKeys() }, token: null })).status).toBe(400);
    }
    expect((await daemon.call('POST', '/api/settings/push/subscribe', { body: { endpoint: `${push.url}/push/201/x`, keys: { p256dh: 'short', auth: 'x' } }, token: null })).status).toBe(400);
  });
});

describe('push endpoints obey the outbound policy', () => {
  it('refuses internal and loopback endpoints at subscribe time with 400, before any connection', async () => {
    const internal = [
      'https://127.0.0.2/push',
      'https://[::1]/push',
      'https://[::ffff:127.0.0.2]/push',
      'https://2130706434/push',
      'https://10.0.0.1/push',
      'https://169.254.169.254/latest',
      'https://100.64.0.1/push',
      'https://[fc00::1]/push',
      'https://[fe80::1]/push',
    ];
    for (const endpoint of internal) {
      const res = await daemon.call('POST', '/api/settings/push/subscribe', { body: { endpoint, keys: deviceKeys() }, token: null });
      expect(res.status, endpoint).toBe(400);
      expect(res.body.error, endpoint).toMatch(/^Invalid push endpoint: refused: /);
    }
    const listed = (await daemon.call('GET', '/api/settings/push/subscriptions', { token: null })).body.subscriptions as Array<{ endpoint: string }>;
    expect(listed.filter((s) => internal.includes(s.endpoint))).toEqual([]);
  });

  it('checks again at send time: a stored endpoint on an unlisted loopback address gets no connection', async () => {
    let connections = 0;
    const hidden = http.createServer((_req, res) => res.writeHead(201).end());
    hidden.on('connection', () => connections++);
    await new Promise<void>((r) => hidden.listen(0, '127.0.0.2', r));
    try {
      const endpoint = `http://127.0.0.2:${(hidden.address() as AddressInfo).port}/push/201/hidden`;
      // As a row subscribed before the policy existed would be.
      const keys = deviceKeys();
      await db.pool.query('INSERT INTO push_subscriptions (user_id, endpoint, p256dh, auth) VALUES ($1, $2, $3, $4)', ['hidden-user', endpoint, keys.p256dh, keys.auth]);
      await useFreshToken();
      const res = await daemon.call('POST', '/api/internal/notifications/send?userId=hidden-user', { body: { title: 't', body: 'b' } });
      expect(res.body).toEqual({ delivered: 0, expired: 0, failed: 1, noSubscriptions: false });
      const row = (await db.pool.query('SELECT last_error FROM push_subscriptions WHERE endpoint = $1', [endpoint])).rows[0];
      expect(row.last_error).toMatch(/refused: 127\.0\.0\.2 is a loopback address/);
      expect(connections).toBe(0);
    } finally {
      await new Promise<void>((r) => hidden.close(() => r()));
    }
  });
});

describe('POST /notifications/send', () => {
  it('delivers to 201, removes 404 and 410 subscriptions as expired, and counts 500 as failed', async () => {
    await useFreshToken();
    for (const status of [201, 404, 410, 500]) {
      await daemon.call('POST', '/api/settings/push/subscribe', { body: { endpoint: `${push.url}/push/${status}/d`, keys: deviceKeys(), userId: 'phone-user' }, token: null });
    }
    const before = push.requests.length;
    const res = await daemon.call('POST', '/api/internal/notifications/send?userId=phone-user', {
      body: { title: 'Nightly run failed', body: '3 tests fail', url: 'https://example.com/runs/1', tag: 'run-1', priority: 'high' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ delivered: 1, expired: 2, failed: 1, noSubscriptions: false });
    const sent = push.requests.slice(before);
    expect(sent).toHaveLength(4);
    for (const req of sent) {
      expect(req.method).toBe('POST');
      expect(req.headers['content-encoding']).toBe('aes128gcm');
      expect(req.headers.authorization).toMatch(/^vapid t=.+, k=/);
      expect(req.headers.urgency).toBe('high');
      expect(Number(req.headers.ttl)).toBeGreaterThan(0);
      // The payload is encrypted for the device: the title must not travel in clear text.
      expect(req.body).not.toContain('Nightly');
    }
    const left = (await daemon.call('GET', '/api/settings/push/subscriptions?userId=phone-user', { token: null })).body.subscriptions as Array<{
      endpoint: string;
      lastError: string | null;
      lastSuccessAt: number | null;
    }>;
    expect(left.map((s) => new URL(s.endpoint).pathname).sort()).toEqual(['/push/201/d', '/push/500/d']);
    expect(left.find((s) => s.endpoint.includes('/500/'))!.lastError).toContain('500');
    expect(left.find((s) => s.endpoint.includes('/201/'))!.lastSuccessAt).toEqual(expect.any(Number));
  });

  it('reports noSubscriptions for a user without devices, and uses the default user', async () => {
    await useFreshToken();
    const res = await daemon.call('POST', '/api/internal/notifications/send?userId=nobody', { body: { title: 't', body: 'b' } });
    expect(res.body).toEqual({ delivered: 0, expired: 0, failed: 0, noSubscriptions: true });
    const defaultUser = await daemon.call('POST', '/api/internal/notifications/send', { body: { title: 't', body: 'b' } });
    expect(defaultUser.body.noSubscriptions).toBe(true);
  });

  it('enforces the spec limits with 400 and accepts values at the limits', async () => {
    await useFreshToken();
    const bad = [
      {},
      { title: '', body: 'b' },
      { title: 't' },
      { title: 'x'.repeat(121), body: 'b' },
      { title: 't', body: 'x'.repeat(501) },
      { title: 't', body: 'b', url: '' },
      { title: 't', body: 'b', url: 'x'.repeat(501) },
      { title: 't', body: 'b', tag: 'x'.repeat(81) },
      { title: 't', body: 'b', priority: 'urgent' },
      { title: 't', body: 'b', extra: true },
    ];
    for (const body of bad) {
      const res = await daemon.call('POST', '/api/internal/notifications/send?userId=nobody', { body });
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.code).toBe('bad_request');
    }
    const edge = await daemon.call('POST', '/api/internal/notifications/send?userId=nobody', {
      body: { title: 'x'.repeat(120), body: 'x'.repeat(500), url: 'x'.repeat(500), tag: 'x'.repeat(80), priority: 'normal' },
    });
    expect(edge.status).toBe(200);
  });

  it('counts only requests that pass validation toward the quota (issue #51)', async () => {
    await useFreshToken();
    // Twelve malformed requests, more than the whole quota: each is a 400 and uses none of it.
    for (let i = 0; i < 12; i++) {
      const res = await daemon.call('POST', '/api/internal/notifications/send?userId=nobody', { body: { title: '', body: `b${i}` } });
      expect(res.status).toBe(400);
      expect(res.headers.get('x-ratelimit-remaining')).toBeNull();
    }
    for (let i = 0; i < 10; i++) {
      const res = await daemon.call('POST', '/api/internal/notifications/send?userId=nobody', { body: { title: 't', body: `b${i}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(9 - i));
    }
    expect((await daemon.call('POST', '/api/internal/notifications/send?userId=nobody', { body: { title: 't', body: 'b' } })).status).toBe(429);
  });

  it('allows 10 per minute per token, answers 429 with Retry-After, and keeps counting across a daemon restart', async () => {
    await useFreshToken();
    for (let i = 0; i < 10; i++) {
      expect((await daemon.call('POST', '/api/internal/notifications/send?userId=nobody', { body: { title: 't', body: `b${i}` } })).status).toBe(200);
    }
    const limited = await daemon.call('POST', '/api/internal/notifications/send?userId=nobody', { body: { title: 't', body: 'b' } });
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ code: 'rate_limited', details: [] });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(55);
    expect(retryAfter).toBeLessThanOrEqual(60);

    // Another token has its own budget.
    const limitedToken = daemon.token;
    await useFreshToken();
    expect((await daemon.call('POST', '/api/internal/notifications/send?userId=nobody', { body: { title: 't', body: 'b' } })).status).toBe(200);

    // A rebuilt daemon on the same database still counts the old token's requests.
    await db.pool.query('UPDATE agent_manager_token SET token = $1', [limitedToken]);
    await daemon.close();
    daemon = await startAgentDaemon(db, { services: false, env });
    daemon.token = limitedToken;
    const still = await daemon.call('POST', '/api/internal/notifications/send?userId=nobody', { body: { title: 't', body: 'b' } });
    expect(still.status).toBe(429);
    const after = Number(still.headers.get('retry-after'));
    expect(after).toBeGreaterThanOrEqual(1);
    expect(after).toBeLessThanOrEqual(retryAfter);

    // Once the oldest accepted request is older than the window, a slot frees up again.
    await db.pool.query(`UPDATE agent_rate_limit_hits SET at = at - interval '61 seconds' WHERE bucket LIKE 'notifications/send %'`);
    expect((await daemon.call('POST', '/api/internal/notifications/send?userId=nobody', { body: { title: 't', body: 'b' } })).status).toBe(200);
  });
});

describe('without VAPID keys', () => {
  it('answers 503 for sending, the public key and subscribing', async () => {
    const bare = await startAgentDaemon(db, { services: false });
    try {
      bare.token = daemon.token;
      await useFreshToken();
      bare.token = daemon.token;
      const res = await bare.call('POST', '/api/internal/notifications/send', { body: { title: 't', body: 'b' } });
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ code: 'unavailable', error: expect.stringContaining('VAPID_PUBLIC_KEY') });
      expect((await bare.call('GET', '/api/settings/push/vapid-public-key', { token: null })).status).toBe(503);
      expect((await bare.call('POST', '/api/settings/push/subscribe', { body: { endpoint: `${push.url}/push/201/z`, keys: deviceKeys() }, token: null })).status).toBe(503);
    } finally {
      await bare.close();
    }
  });
});
