import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergePendingEntries, QUIET_MS } from '../../src/core/search/pending.js';
import { searchSnippets } from '../../src/core/search/search.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { addPage, createSource } from './fixtures.js';
import type { FixtureSource } from './fixtures.js';

/** The search indexes' pending lists are merged once writers go quiet (src/core/search/pending.ts). */

let db: TestDatabase;
let source: FixtureSource;

beforeAll(async () => {
  db = await createTestDatabase();
  source = await createSource(db.pool, 'pending');
});
afterAll(async () => {
  await db.drop();
});

const page = (n: number) =>
  addPage(db.pool, source, `https://pending.example/p${n}.html`, [
    { title: `Opening a channel ${n}`, description: 'Channels carry messages between tasks.', code: `channel_${n} = open_channel(capacity=${n})` },
  ]);

describe('search index pending lists', () => {
  it('keeps a stored page in the pending lists, where searches find it, until they are merged', async () => {
    await page(1);
    expect((await searchSnippets(db.pool, { query: 'open_channel' })).total).toBe(1);
    expect(await mergePendingEntries(db.pool)).toBeGreaterThan(0);
    expect(await mergePendingEntries(db.pool)).toBe(0);
    expect((await searchSnippets(db.pool, { query: 'open_channel' })).total).toBe(1);
  });

  it('merges them once the writer has stored nothing for a while', async () => {
    await page(2);
    await new Promise((r) => setTimeout(r, QUIET_MS / 2));
    await page(3);
    await new Promise((r) => setTimeout(r, QUIET_MS + 500));
    expect(await mergePendingEntries(db.pool)).toBe(0);
    expect((await searchSnippets(db.pool, { query: 'open_channel' })).total).toBe(3);
  });
});
