import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCrawlWorkers } from '../../src/core/crawl/index.js';
import { createPool } from '../../src/core/db/connect.js';
import { mergePendingEntries, QUIET_MS } from '../../src/core/search/pending.js';
import { searchSnippets } from '../../src/core/search/search.js';
import { settleWaitingSearchIndexes } from '../../src/core/search/settle.js';
import { crawlToEnd, FAST_WORKER } from '../crawl/helpers/crawl.js';
import { docPage, TestSite } from '../crawl/helpers/site.js';
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

const queuedSnippets = async () => Number((await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM search_terms_queue')).rows[0]!.n);

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

  it("merges the sections' index too (migration 040: an index per unit kind)", async () => {
    await addPage(db.pool, source, 'https://pending.example/sections.html', [], {
      title: 'Channel sections',
      markdown: '# Channel sections\n\n## Buffered channels\n\nA buffered channel holds messages until a reader takes them.',
      sections: true,
    });
    const pending = async (index: string) => (await db.pool.query<{ pages: number }>(`SELECT gin_clean_pending_list($1::regclass)::int AS pages`, [index])).rows[0]!.pages;
    expect(await mergePendingEntries(db.pool)).toBeGreaterThan(0);
    expect(await pending('snippets_search_sections')).toBe(0);
    // And the word-pair indexes a quoted phrase reads (migration 041).
    expect(await pending('snippets_search_pairs_sections')).toBe(0);
    expect((await searchSnippets(db.pool, { query: 'buffered channel reader' })).items[0]).toMatchObject({ kind: 'section' });
  });

  it('merges them once the writer has stored nothing for a while', async () => {
    await page(2);
    await new Promise((r) => setTimeout(r, QUIET_MS / 2));
    await page(3);
    await new Promise((r) => setTimeout(r, QUIET_MS + 500));
    expect(await mergePendingEntries(db.pool)).toBe(0);
    expect((await searchSnippets(db.pool, { query: 'open_channel' })).total).toBe(3);
  });

  it('merges what a writer left waiting when it stops, and folds its words into the lexicon, before its pool closes', async () => {
    const writer = createPool(db.info, { max: 2 });
    try {
      // The second page's lexicon fold waits a second behind the first's (lexicon.ts).
      await addPage(writer, source, 'https://pending.example/stopping.html', [{ title: 'Closing a channel', description: 'Closed channels refuse sends.', code: 'close_channel(ch)' }]);
      await addPage(writer, source, 'https://pending.example/draining.html', [{ title: 'Draining a channel', description: 'Drained channels are empty.', code: 'drain_channel(ch)' }]);
      expect(await queuedSnippets()).toBeGreaterThan(0);
      await settleWaitingSearchIndexes(writer);
    } finally {
      await writer.end();
    }
    expect(await queuedSnippets()).toBe(0);
    expect(await mergePendingEntries(db.pool)).toBe(0);
  });

  it("merges a crawl's pages before its completion is announced, not a quiet period later", async () => {
    await mergePendingEntries(db.pool);
    const site = await TestSite.start();
    const workers = await startCrawlWorkers(db, db.config, FAST_WORKER);
    try {
      site.set('/', { body: docPage({ title: 'Channels', links: ['/send', '/receive'], code: 'ch = make_channel()' }) });
      site.set('/send', { body: docPage({ title: 'Sending', code: 'ch.send(message)' }) });
      site.set('/receive', { body: docPage({ title: 'Receiving', code: 'message = ch.receive()' }) });
      const job = await crawlToEnd(db, db.config, { name: 'pending-crawl', start_urls: [site.url('/')], max_depth: 1 });
      expect(job.status).toBe('completed');
      expect(job.pages_crawled).toBe(3);
      // waitForJob returns on the completion event (or its 200 ms poll), well inside QUIET_MS of the last page
      // and inside the second the lexicon trails the writes.
      expect(await queuedSnippets()).toBe(0);
      expect(await mergePendingEntries(db.pool)).toBe(0);
    } finally {
      await workers.stop();
      await site.close();
    }
  });
});
