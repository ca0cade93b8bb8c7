import pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Doorbell } from '../../src/core/crawl/doorbell.js';
import { createEnqueue, ensurePageQueue } from '../../src/core/crawl/queue.js';
import { PAGES_QUEUED, WAKE_CHANNEL } from '../../src/core/crawl/wake.js';
import { createBoss } from '../../src/core/queue/boss.js';
import { withTransaction } from '../../src/core/db/transaction.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

describe('Doorbell', () => {
  it('keeps a ring that came while nobody waited for the next wait', async () => {
    const bell = new Doorbell();
    bell.ring();
    const started = performance.now();
    await bell.wait(5_000);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('keeps only one: a ring that woke a waiter is spent, and so is a kept one', async () => {
    const bell = new Doorbell();
    const woken = bell.wait(5_000);
    bell.ring();
    await woken;
    bell.ring();
    bell.ring();
    await bell.wait(5_000);
    let timedOut = false;
    await Promise.race([bell.wait(50).then(() => (timedOut = true)), new Promise((r) => setTimeout(r, 1_000))]);
    expect(timedOut).toBe(true);
  });
});

describe('queueing pages wakes the workers', () => {
  let db: TestDatabase;
  let boss: PgBoss;
  let listener: pg.Client;
  const notices: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    boss = createBoss(db.info, { max: 2 });
    boss.on('error', () => undefined);
    await boss.start();
    await ensurePageQueue(boss);
    listener = new pg.Client(db.info.config);
    await listener.connect();
    listener.on('notification', (m) => {
      if (m.channel === WAKE_CHANNEL) notices.push(m.payload ?? '');
    });
    await listener.query(`LISTEN ${WAKE_CHANNEL}`);
  });
  afterAll(async () => {
    await listener?.end();
    await boss?.stop({ graceful: false, close: true });
    await db?.drop();
  });

  const heard = async (): Promise<string[]> => {
    // A round trip on the listening session delivers anything already sent to it.
    await listener.query('SELECT 1');
    return notices.splice(0);
  };

  it('announces queued pages at once, and only when the transaction queueing them commits', async () => {
    const enqueue = createEnqueue(boss);
    const jobId = '00000000-0000-4000-8000-000000000001';
    await enqueue(db.pool, jobId, [{ url: 'http://127.0.0.1/a', depth: 0 }]);
    expect(await heard()).toEqual([PAGES_QUEUED]);

    await withTransaction(db.pool, async (client) => {
      await enqueue(client, jobId, [{ url: 'http://127.0.0.1/b', depth: 1 }]);
      expect(await heard()).toEqual([]);
    });
    expect(await heard()).toEqual([PAGES_QUEUED]);

    await expect(
      withTransaction(db.pool, async (client) => {
        await enqueue(client, jobId, [{ url: 'http://127.0.0.1/c', depth: 1 }]);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await enqueue(db.pool, jobId, []);
    expect(await heard()).toEqual([]);
  });
});
