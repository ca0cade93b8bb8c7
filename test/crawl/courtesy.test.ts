import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { giveWay } from '../../src/core/crawl/courtesy.js';
import { startCrawlWorkers } from '../../src/core/crawl/index.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { crawlToEnd, documentPaths, FAST_WORKER } from './helpers/crawl.js';
import { graphRoutes, TestSite } from './helpers/site.js';

async function timed(work: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

describe('giveWay', () => {
  it('does not rest while the foreground is idle or absent', async () => {
    const signal = new AbortController().signal;
    expect(await timed(() => giveWay(undefined, 500, signal))).toBeLessThan(50);
    expect(await timed(() => giveWay(() => false, 500, signal))).toBeLessThan(50);
  });

  it('rests four times the work while the foreground is busy, at most a second', async () => {
    const signal = new AbortController().signal;
    const rest = await timed(() => giveWay(() => true, 40, signal));
    expect(rest).toBeGreaterThanOrEqual(155);
    expect(rest).toBeLessThan(600);
    const capped = await timed(() => giveWay(() => true, 60_000, signal));
    expect(capped).toBeGreaterThanOrEqual(990);
    expect(capped).toBeLessThan(1800);
  });

  it('ends the rest at once when the page is cancelled or the worker stops', async () => {
    const stop = new AbortController();
    setTimeout(() => stop.abort(new Error('stopping')), 30);
    expect(await timed(() => giveWay(() => true, 60_000, stop.signal))).toBeLessThan(500);
  });
});

describe('a crawl that gives way', () => {
  let db: TestDatabase;
  let site: TestSite;
  beforeAll(async () => {
    db = await createTestDatabase();
    site = await TestSite.start(graphRoutes({ '/': ['/a', '/b', '/c'], '/a': ['/d'], '/b': [], '/c': [], '/d': [] }));
  });
  afterAll(async () => {
    await site?.close();
    await db?.drop();
  });

  it('asks after every page, and still finishes every page while the foreground stays busy', async () => {
    let asked = 0;
    const workers = await startCrawlWorkers(db, db.config, {
      ...FAST_WORKER,
      giveWayTo: () => {
        asked++;
        return true;
      },
    });
    try {
      const job = await crawlToEnd(db, db.config, { name: 'courteous', start_urls: [site.url('/')], max_depth: 2 });
      expect(job.status).toBe('completed');
      expect(await documentPaths(db.pool, job.source_id)).toEqual(['/', '/a', '/b', '/c', '/d']);
      expect(asked).toBe(5);
    } finally {
      await workers.stop();
    }
  });
});
