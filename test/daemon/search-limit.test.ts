import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { addPage, createSource } from '../search/fixtures.js';

let db: TestDatabase;
let daemon: Awaited<ReturnType<typeof startTestDaemon>>;

beforeAll(async () => {
  db = await createTestDatabase();
  const source = await createSource(db.pool, 'limited');
  await addPage(db.pool, source, 'https://limited.example/a.html', [
    { title: 'Opening sockets', code: 'sock = socket.create_connection(addr)' },
    { title: 'Closing sockets', code: 'sock.close()' },
  ]);
  daemon = await startTestDaemon(loadConfig({ ...db.env, SEARCH_CONCURRENCY: '1' }), { routes: docsIndexRoutes });
});
afterAll(async () => {
  await daemon?.close();
  await db?.drop();
});

/** The daemon's searches PostgreSQL is running: here, all blocked on the test's lock. */
async function blockedSearches(): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'docdex-serve' AND wait_event_type = 'Lock'`,
  );
  return rows[0]!.n;
}

describe('SEARCH_CONCURRENCY', () => {
  it('caps the searches the daemon runs at once; a client that leaves while waiting costs nothing and breaks nothing', async () => {
    const locker = await db.pool.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE snippets IN ACCESS EXCLUSIVE MODE');
      const first = fetch(`${daemon.base}/api/search?q=socket`);
      for (let i = 0; i < 200 && (await blockedSearches()) < 1; i++) await new Promise((r) => setTimeout(r, 25));
      // A client that gives up while its search waits its turn.
      const leaving = http.get(`${daemon.base}/api/search?q=close`);
      leaving.on('error', () => undefined);
      const second = fetch(`${daemon.base}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'opening' }) });
      await new Promise((r) => setTimeout(r, 300));
      leaving.destroy();
      expect(await blockedSearches()).toBe(1);
      await locker.query('COMMIT');
      const answers = await Promise.all([first, second]);
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      expect(((await answers[1]!.json()) as { items: Array<{ title: string }> }).items[0]?.title).toBe('Opening sockets');
      // The daemon goes on answering, the abandoned search included.
      const again = await fetch(`${daemon.base}/api/search?q=close`);
      expect(again.status).toBe(200);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      locker.release();
    }
  });
});
