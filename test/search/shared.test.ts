import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchesBusy, searchSnippetsShared } from '../../src/core/search/shared.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
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
