import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/core/db/connect.js';
import { limitSearches, refuseWaitingSearches, SearchCancelledError, searchesBusy, searchSnippetsShared } from '../../src/core/search/shared.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { backendsWaitingOnLocks, untilWaitingOnLocks, withTableLocked } from '../helpers/locks.js';
import { addPage, createSource } from './fixtures.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  const source = await createSource(db.pool, 'shared');
  await addPage(db.pool, source, 'https://shared.example/a.html', [{ title: 'Opening sockets', code: 'sock = socket.create_connection(addr)' }]);
});
afterAll(async () => {
  await db.drop();
});

describe('searchSnippetsShared', () => {
  it('answers identical concurrent searches with one search, and different ones separately', async () => {
    const [a, b, c] = await Promise.all([
      searchSnippetsShared(db.pool, { query: 'socket connection' }),
      searchSnippetsShared(db.pool, { query: 'socket connection' }),
      searchSnippetsShared(db.pool, { query: 'socket connection', limit: 5 }),
    ]);
    expect(a).toBe(b);
    expect(c).not.toBe(a);
    expect(c.items.map((i) => i.id)).toEqual(a.items.map((i) => i.id));
    expect(a.items[0]?.title).toBe('Opening sockets');
  });

  it('keeps searches of different source sets apart', async () => {
    const { rows } = await db.pool.query<{ id: string }>('SELECT id FROM sources');
    const [all, none] = await Promise.all([
      searchSnippetsShared(db.pool, { query: 'socket connection', sourceIds: rows.map((r) => r.id) }),
      searchSnippetsShared(db.pool, { query: 'socket connection', sourceIds: [] }),
    ]);
    expect(all.items[0]?.title).toBe('Opening sockets');
    expect(none.items).toEqual([]);
  });

  it('runs a search again once the previous identical one has finished', async () => {
    const first = await searchSnippetsShared(db.pool, { query: 'socket' });
    // A new answer object is a new search: nothing is cached beyond the search in flight.
    const second = await searchSnippetsShared(db.pool, { query: 'socket' });
    expect(second).not.toBe(first);
    expect(second).toEqual(first);
  });

  it('passes a failure to every waiter and does not keep it', async () => {
    const results = await Promise.allSettled([searchSnippetsShared(db.pool, { query: 'x', limit: 0 }), searchSnippetsShared(db.pool, { query: 'x', limit: 0 })]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    await expect(searchSnippetsShared(db.pool, { query: 'socket', limit: 1 })).resolves.toMatchObject({ limit: 1 });
  });

  it('reports itself busy while a search runs and shortly after, for the crawl to give way to', async () => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(searchesBusy()).toBe(false);
    const search = searchSnippetsShared(db.pool, { query: 'socket', limit: 2 });
    expect(searchesBusy()).toBe(true);
    await search;
    expect(searchesBusy()).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(searchesBusy()).toBe(false);
  });
});

describe('limitSearches', () => {
  const APP = 'docdex-test-limited-searches';

  async function limitedPool(concurrency: number): Promise<{ pool: pg.Pool; searchesRun: () => number }> {
    const pool = createPool(db.info, { max: 10, applicationName: APP });
    limitSearches(pool, concurrency);
    // Each search takes one connection from its pool for all of its statements (searchSnippets).
    let acquired = 0;
    pool.on('acquire', () => acquired++);
    return { pool, searchesRun: () => acquired };
  }

  it('runs at most the limit at once; the others wait in this process', async () => {
    const { pool } = await limitedPool(2);
    try {
      const queries = ['socket', 'connection', 'create', 'opening', 'sock'];
      const answers = await withTableLocked(db.pool, 'snippets', async (release) => {
        const searches = queries.map((query) => searchSnippetsShared(pool, { query }));
        await untilWaitingOnLocks(db.pool, APP, 2);
        // Given time, the three others still wait their turn here, not in PostgreSQL.
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(await backendsWaitingOnLocks(db.pool, APP)).toBe(2);
        await release();
        return Promise.all(searches);
      });
      expect(answers.map((a) => a.total)).toEqual([1, 1, 1, 1, 1]);
    } finally {
      await pool.end();
    }
  });

  it('runs waiting searches in the order they came', async () => {
    const { pool } = await limitedPool(1);
    try {
      const finished: string[] = [];
      const queries = ['socket', 'connection', 'create', 'opening', 'sock'];
      await withTableLocked(db.pool, 'snippets', async (release) => {
        const searches = queries.map((query) => searchSnippetsShared(pool, { query }).then(() => finished.push(query)));
        await untilWaitingOnLocks(db.pool, APP, 1);
        await release();
        await Promise.all(searches);
      });
      expect(finished).toEqual(queries);
    } finally {
      await pool.end();
    }
  });

  it('drops a waiting search whose callers all went away, and keeps one that another caller still waits for', async () => {
    const { pool, searchesRun } = await limitedPool(1);
    try {
      await withTableLocked(db.pool, 'snippets', async (release) => {
        const first = searchSnippetsShared(pool, { query: 'socket' });
        await untilWaitingOnLocks(db.pool, APP, 1);
        const alone = new AbortController();
        const gone = searchSnippetsShared(pool, { query: 'connection' }, alone.signal);
        const leaving = new AbortController();
        const left = searchSnippetsShared(pool, { query: 'create' }, leaving.signal);
        const staying = searchSnippetsShared(pool, { query: 'create' }, new AbortController().signal);
        // A caller that had already given up when it asked.
        await expect(searchSnippetsShared(pool, { query: 'opening' }, AbortSignal.abort())).rejects.toBeInstanceOf(SearchCancelledError);
        alone.abort();
        leaving.abort();
        await expect(gone).rejects.toBeInstanceOf(SearchCancelledError);
        await expect(left).rejects.toBeInstanceOf(SearchCancelledError);
        // A caller arriving after the cancel gets a search of its own, not the cancelled one.
        const again = searchSnippetsShared(pool, { query: 'connection' });
        await release();
        await expect(first).resolves.toMatchObject({ total: 1 });
        await expect(staying).resolves.toMatchObject({ total: 1 });
        await expect(again).resolves.toMatchObject({ total: 1 });
      });
      // socket, create (once, for both of its callers) and the second connection: the cancelled one never ran.
      expect(searchesRun()).toBe(3);
    } finally {
      await pool.end();
    }
  });

  it('fails the waiting searches when told to (a server closing its pool), and lets the running one finish', async () => {
    const { pool, searchesRun } = await limitedPool(1);
    try {
      await withTableLocked(db.pool, 'snippets', async (release) => {
        const running = searchSnippetsShared(pool, { query: 'socket' });
        await untilWaitingOnLocks(db.pool, APP, 1);
        const waiting = [searchSnippetsShared(pool, { query: 'connection' }), searchSnippetsShared(pool, { query: 'create' }, new AbortController().signal)];
        const closing = new Error('closing');
        refuseWaitingSearches(pool, closing);
        for (const search of waiting) await expect(search).rejects.toBe(closing);
        await release();
        await expect(running).resolves.toMatchObject({ total: 1 });
      });
      expect(searchesRun()).toBe(1);
      // The queue is empty, not stuck: the next search runs.
      await expect(searchSnippetsShared(pool, { query: 'connection' })).resolves.toMatchObject({ total: 1 });
    } finally {
      await pool.end();
    }
  });

  it('refuses a limit below one', async () => {
    const { pool } = await limitedPool(1);
    try {
      expect(() => limitSearches(pool, 0)).toThrow(RangeError);
    } finally {
      await pool.end();
    }
  });
});
