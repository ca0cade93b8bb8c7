import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCrawlWorkers } from '../../src/core/crawl/index.js';
import type { CrawlWorkers } from '../../src/core/crawl/index.js';
import type { WorkerEvent } from '../../src/core/crawl/worker.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { crawlToEnd, FAST_WORKER } from './helpers/crawl.js';
import { docPage, TestSite } from './helpers/site.js';

let db: TestDatabase;
let site: TestSite;

beforeAll(async () => {
  db = await createTestDatabase();
  site = await TestSite.start({ '/': { body: docPage({ title: 'Home', code: 'print("home")' }) } });
});

afterAll(async () => {
  await site?.close();
  await db?.drop();
});

/** Backends of the worker's presence session (how other workers and `crawl health` see it alive). */
async function presenceSessions(workerId: string): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`, [`docdex-worker:${workerId}`]);
  return rows[0]!.n;
}

async function until(check: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('worker presence', () => {
  it('reconnects a lost presence session, adopts crawls again, and ends the session when stopped', async () => {
    const events: WorkerEvent[] = [];
    const workers: CrawlWorkers = await startCrawlWorkers(db, db.config, { ...FAST_WORKER, onEvent: (e) => events.push(e) });
    try {
      expect(await presenceSessions(workers.id)).toBe(1);
      await db.pool.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`, [`docdex-worker:${workers.id}`]);
      await until(() => events.some((e) => e.type === 'presence-lost'));
      await until(async () => (await presenceSessions(workers.id)) === 1);

      const job = await crawlToEnd(db, db.config, { name: 'after-reconnect', start_urls: [site.url('/')], max_depth: 0 });
      expect(job.status).toBe('completed');
      expect(events).toContainEqual({ type: 'adopted', jobId: job.job_id });
    } finally {
      await workers.stop();
    }
    expect(await presenceSessions(workers.id)).toBe(0);
    expect(events.at(-1)).toEqual({ type: 'stopped', workerId: workers.id });
    expect(events.filter((e) => e.type === 'presence-lost')).toHaveLength(1);
  });
});
