import type { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeJobIds, createBoss } from '../../src/core/queue/boss.js';
import { bossJobTableExists, countAllJobs, countJobsByState, deleteQueuedJobsInGroups, liveJobDataValues } from '../../src/core/queue/jobs-table.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

/** The one module that reads pg-boss's job table, against a real pg-boss on a real database. */

let db: TestDatabase;
let boss: PgBoss;
const QUEUE = 'test-jobs-table';

beforeAll(async () => {
  db = await createTestDatabase();
  boss = createBoss(db.info, { max: 2 });
  boss.on('error', () => undefined);
  await boss.start();
  await boss.createQueue(QUEUE);
});
afterAll(async () => {
  await boss?.stop({ graceful: false, close: true });
  await db?.drop();
});

describe('pg-boss job table access', () => {
  it('counts, finds the active jobs, and deletes queued jobs by group', async () => {
    expect(await bossJobTableExists(db.pool)).toBe(true);
    const running = await boss.send(QUEUE, { n: 1 }, { group: { id: 'a' } });
    const [fetched] = await boss.fetch(QUEUE);
    expect(fetched?.id).toBe(running);
    const queuedA = await boss.send(QUEUE, { n: 2 }, { group: { id: 'a' } });
    await boss.send(QUEUE, { n: 3 }, { group: { id: 'b' } });

    expect(await countJobsByState(db.pool, QUEUE)).toEqual({ queued: 2, active: 1, retry: 0, failed: 0 });
    expect(await countAllJobs(db.pool)).toMatchObject({ depth: 2, active: 1 });
    const active = await activeJobIds(boss, QUEUE, [running!, queuedA!, 'not-a-job-id', '00000000-0000-0000-0000-000000000000']);
    expect([...active]).toEqual([running]);

    // Only group a's queued job goes; its active job and group b's job stay.
    expect(await deleteQueuedJobsInGroups(db.pool, QUEUE, ['a'])).toBe(1);
    expect(await countJobsByState(db.pool, QUEUE)).toEqual({ queued: 1, active: 1, retry: 0, failed: 0 });
    expect(await deleteQueuedJobsInGroups(db.pool, QUEUE, [])).toBe(0);
  });

  it('lists a data field of the live jobs in some groups, not of finished jobs or other groups', async () => {
    const queue = 'test-jobs-table-live';
    await boss.createQueue(queue);
    await boss.send(queue, { documentId: '1' }, { group: { id: 'g' } });
    await boss.send(queue, { documentId: '2' }, { group: { id: 'g' } });
    await boss.send(queue, { documentId: '3' }, { group: { id: 'other' } });
    await boss.send(queue, { other: 'x' }, { group: { id: 'g' } });
    const [first] = await boss.fetch(queue);
    // The first fetched is live while active, and gone from the list once completed.
    expect([...(await liveJobDataValues(db.pool, queue, ['g'], 'documentId'))].sort()).toEqual(['1', '2']);
    await boss.complete(queue, first!.id);
    const done = (first!.data as { documentId?: string }).documentId;
    const live = await liveJobDataValues(db.pool, queue, ['g'], 'documentId');
    expect(live.has(done!)).toBe(false);
    expect(live.size).toBe(1);
    expect((await liveJobDataValues(db.pool, queue, [], 'documentId')).size).toBe(0);
  });

  it('reads nothing and deletes nothing where pg-boss never ran', async () => {
    const bare = await createTestDatabase();
    try {
      await bare.pool.query('DROP SCHEMA IF EXISTS pgboss CASCADE');
      expect(await bossJobTableExists(bare.pool)).toBe(false);
      expect(await countJobsByState(bare.pool, QUEUE)).toEqual({ queued: 0, active: 0, retry: 0, failed: 0 });
      expect(await deleteQueuedJobsInGroups(bare.pool, QUEUE, ['a'])).toBe(0);
      expect((await liveJobDataValues(bare.pool, QUEUE, ['a'], 'documentId')).size).toBe(0);
    } finally {
      await bare.drop();
    }
  });
});
