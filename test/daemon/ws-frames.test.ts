import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { ServerMessage } from '../../src/daemon/ws-protocol.js';

/**
 * /ws frames are outside input: `null` once threw in the message handler and ended `docdex serve`. Every frame
 * gets exactly one answer (an error frame for anything that is not a client message) on a connection that
 * stays open.
 */

let db: TestDatabase;
let daemon: Awaited<ReturnType<typeof startTestDaemon>>;

beforeAll(async () => {
  db = await createTestDatabase();
  daemon = await startTestDaemon(db.config, { routes: docsIndexRoutes });
});

afterAll(async () => {
  await daemon?.close();
  await db?.drop();
});

interface Conversation {
  ws: WebSocket;
  /** The next frame the server sends (heartbeats skipped). */
  next(): Promise<Record<string, unknown>>;
  closed: () => boolean;
}

async function connect(): Promise<Conversation> {
  const ws = new WebSocket(`${daemon.base.replace('http', 'ws')}/ws`);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const queue: Array<Record<string, unknown>> = [];
  const waiting: Array<(m: Record<string, unknown>) => void> = [];
  let closed = false;
  ws.on('message', (m) => {
    const frame = JSON.parse(String(m)) as Record<string, unknown>;
    if (frame.type === 'heartbeat') return;
    const waiter = waiting.shift();
    if (waiter) waiter(frame);
    else queue.push(frame);
  });
  ws.on('close', () => {
    closed = true;
    for (const w of waiting.splice(0)) w({ type: 'closed' });
  });
  return {
    ws,
    closed: () => closed,
    next: () => {
      const queued = queue.shift();
      if (queued) return Promise.resolve(queued);
      if (closed) return Promise.resolve({ type: 'closed' });
      return new Promise((resolve) => waiting.push(resolve));
    },
  };
}

describe('WebSocket client frames', () => {
  it('answers each bad frame with an error frame and keeps the connection', async () => {
    const c = await connect();
    const bad: Array<[string | Buffer, string]> = [
      ['null', 'invalid_message'],
      ['1', 'invalid_message'],
      ['"subscribe"', 'invalid_message'],
      ['[]', 'invalid_message'],
      ['{}', 'invalid_message'],
      ['{"type":"nope"}', 'invalid_message'],
      ['{"type":"subscribe","job_id":5}', 'invalid_message'],
      ['{"type":"subscribe","job_id":null}', 'invalid_message'],
      ['{"type":"subscribe","all":"yes"}', 'invalid_message'],
      ['{"type":"subscribe","__proto__":{"all":true}}', 'invalid_message'],
      ['not json', 'invalid_json'],
      ['', 'invalid_json'],
      [`${'['.repeat(3000)}${']'.repeat(3000)}`, 'frame_too_large'],
      ['x'.repeat(60 * 1024), 'frame_too_large'],
      [Buffer.from([0, 1, 2, 255]), 'binary_frame'],
    ];
    for (const [frame, code] of bad) {
      c.ws.send(frame, { binary: Buffer.isBuffer(frame) });
      const answer = await c.next();
      expect(answer, String(frame).slice(0, 40)).toMatchObject({ type: 'error', code, error: expect.stringContaining('subscribe') });
      expect(ServerMessage.safeParse(answer).error).toBeUndefined();
    }
    c.ws.send(JSON.stringify({ type: 'subscribe', job_id: 'job-1' }));
    expect(await c.next()).toEqual({ type: 'subscribed', all: false, job_ids: ['job-1'] });
    c.ws.send(JSON.stringify({ type: 'ping' }));
    expect(await c.next()).toEqual({ type: 'pong' });
    expect(c.closed()).toBe(false);
    c.ws.close();
    expect((await fetch(`${daemon.base}/health`)).status).toBe(200);
  });

  it('survives any frame: the connection still answers a subscribe and /health is 200', async () => {
    const c = await connect();
    const frame = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null'),
      fc
        .record({ type: fc.constantFrom('subscribe', 'unsubscribe', 'ping', 'x'), job_id: fc.jsonValue({ maxDepth: 1 }), all: fc.jsonValue({ maxDepth: 1 }) }, { requiredKeys: ['type'] })
        .map((v) => JSON.stringify(v)),
      fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
      fc.nat({ max: 20_000 }).map((depth) => '['.repeat(depth)),
    );
    await fc.assert(
      fc.asyncProperty(frame, async (f) => {
        c.ws.send(f, { binary: Buffer.isBuffer(f) });
        const answer = await c.next();
        expect(['error', 'subscribed', 'pong']).toContain(answer.type);
        c.ws.send(JSON.stringify({ type: 'subscribe', all: true }));
        expect(await c.next()).toMatchObject({ type: 'subscribed', all: true });
      }),
      { numRuns: 300 },
    );
    c.ws.close();
    expect((await fetch(`${daemon.base}/health`)).status).toBe(200);
  });
});
