import { readFileSync } from 'node:fs';
import { execa } from 'execa';
import type { ResultPromise } from 'execa';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cancelCrawl, crawlHealth, getCrawlJob, liveWorkers, resumeCrawl, startCrawl, startCrawlWorkers } from '../../src/core/crawl/index.js';
import type { CrawlWorkers } from '../../src/core/crawl/index.js';
import { deleteSource } from '../../src/core/sources/manage.js';
import { BIN } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { documentPaths, FAST_WORKER, frontier, snippetCount, waitJob } from './helpers/crawl.js';
import { docPage, isSiteFile, TestSite } from './helpers/site.js';

let db: TestDatabase;
const sites: TestSite[] = [];
const cleanups: Array<() => Promise<unknown>> = [];
// Workers of the current test; stopped after it whatever happened, so a failure cannot leak a live worker into
// the next test's worker counts.
const running: CrawlWorkers[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});

afterEach(async () => {
  for (const w of running.splice(0)) await w.stop().catch(() => undefined);
});

afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  for (const s of sites) await s.close();
  await db?.drop();
});

async function workers(options = FAST_WORKER): Promise<CrawlWorkers> {
  const w = await startCrawlWorkers(db, db.config, options);
  running.push(w);
  return w;
}

/** A hub page linking `n` leaf pages, each answered after `delayMs`. */
async function hubSite(n: number, delayMs: number): Promise<{ site: TestSite; paths: string[] }> {
  const paths = Array.from({ length: n }, (_, i) => `/p${i}`);
  const routes: Record<string, { body: string; delayMs?: number }> = { '/': { body: docPage({ title: 'hub', links: paths }) } };
  for (const p of paths) routes[p] = { body: docPage({ title: `leaf ${p}` }), delayMs };
  const site = await TestSite.start(routes);
  sites.push(site);
  return { site, paths: ['/', ...paths] };
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 20_000, stepMs = 50): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/** Page jobs of the crawl waiting in pg-boss's queue. */
async function queuedPageJobs(jobId: string): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'docdex-crawl-page' AND group_id = $1 AND state IN ('created', 'retry')`, [jobId]);
  return rows[0]!.n;
}

async function doneCount(jobId: string): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM crawl_frontier WHERE job_id = $1 AND status = 'done'`, [jobId]);
  return rows[0]!.n;
}

describe('concurrency', () => {
  it('never has more than max_concurrent_crawls pages in flight, across two workers', async () => {
    const a = await workers({ ...FAST_WORKER, concurrency: 5 });
    const b = await workers({ ...FAST_WORKER, concurrency: 5 });
    const { site, paths } = await hubSite(16, 150);
    const job = await startCrawl(db, db.config, { name: 'cap', start_urls: [site.url('/')], max_concurrent_crawls: 2 });
    const final = await waitJob(db, job.job_id);
    expect(final.status).toBe('completed');
    expect(final.pages_crawled).toBe(paths.length);
    expect(site.maxInFlight).toBe(2);
    await a.stop();
    await b.stop();
  });

  it('lets two workers crawl one job together, storing every page once', async () => {
    const a = await workers({ ...FAST_WORKER, concurrency: 3 });
    const b = await workers({ ...FAST_WORKER, concurrency: 3 });
    const { site, paths } = await hubSite(30, 60);
    const job = await startCrawl(db, db.config, { name: 'two-workers', start_urls: [site.url('/')], max_concurrent_crawls: 6 });
    const final = await waitJob(db, job.job_id);
    expect(final.status).toBe('completed');
    const rows = await frontier(db.pool, job.job_id);
    const byWorker = new Map<string, number>();
    for (const r of rows) byWorker.set(r.worker_id!, (byWorker.get(r.worker_id!) ?? 0) + 1);
    expect([...byWorker.keys()].sort()).toEqual([a.id, b.id].sort());
    expect(await documentPaths(db.pool, final.source_id)).toEqual([...paths].sort());
    for (const p of paths) expect(site.count(p)).toBe(1);
    expect(await snippetCount(db.pool, final.source_id)).toBe(paths.length);
    await a.stop();
    await b.stop();
  });
});

describe('frontier statistics', () => {
  it('refreshes them as a job finds pages, so its frontier rows are found by key, not by reading the whole job', async () => {
    const analyzed = async () => (await db.pool.query<{ n: number }>(`SELECT analyze_count::int AS n FROM pg_stat_user_tables WHERE relname = 'crawl_frontier'`)).rows[0]!.n;
    const before = await analyzed();
    await workers({ ...FAST_WORKER, concurrency: 2 });
    // A page gives at most 1,000 links (MAX_LINKS_PER_PAGE), so five hubs of 1,000 leaves each: the refresh at
    // 4,000 pages found then sees a frontier where reading by key is clearly cheaper than reading the job.
    const hubs = ['/', '/h1', '/h2', '/h3', '/h4'];
    const routes: Record<string, { body: string; delayMs?: number }> = {};
    hubs.forEach((hub, h) => {
      const leaves = Array.from({ length: 1000 }, (_, i) => `/p${h * 1000 + i}`);
      routes[hub] = { body: docPage({ title: `hub ${h}`, links: leaves }) };
      for (const leaf of leaves) routes[leaf] = { body: docPage({ title: `leaf ${leaf}` }), delayMs: 2000 };
    });
    const site = await TestSite.start(routes);
    sites.push(site);
    const job = await startCrawl(db, db.config, { name: 'big-frontier', start_urls: hubs.map((h) => site.url(h)), max_concurrent_crawls: 2 });
    try {
      await waitUntil(async () => (await getCrawlJob(db.pool, job.job_id)).pages_found >= 5000, 60_000);
      // The controller refreshes them at its next tick (ANALYZE; autovacuum's own runs count elsewhere).
      await waitUntil(async () => (await analyzed()) > before, 5000);
      // The statement that lowers the depth of a page's already-known links (expandLinks).
      const known = Array.from({ length: 20 }, (_, i) => site.url(`/p${i * 100}`));
      const plan = async () =>
        JSON.stringify(
          (
            await db.pool.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) UPDATE crawl_frontier SET depth = 0, updated_at = now() WHERE job_id = $1 AND url = ANY($2::text[]) AND depth > 0`, [
              job.job_id,
              known,
            ])
          ).rows[0]!['QUERY PLAN'],
        );
      // The refresh at 4,000 found may land a tick after the last hub is stored.
      await waitUntil(async () => (await plan()).includes('"Index Name":"crawl_frontier_pkey"'), 10_000).catch(() => undefined);
      expect(await plan()).toContain('"Index Name":"crawl_frontier_pkey"');
    } finally {
      await cancelCrawl(db.pool, job.job_id);
    }
  });
});

describe('cancel and resume', () => {
  it('cancel stops every worker within one page fetch; resume finishes without refetching or duplicating', async () => {
    const w = await workers({ ...FAST_WORKER, concurrency: 4 });
    const { site, paths } = await hubSite(30, 150);
    const job = await startCrawl(db, db.config, { name: 'cancel-resume', start_urls: [site.url('/')], max_concurrent_crawls: 3 });
    await waitUntil(async () => (await doneCount(job.job_id)) >= 5);
    const cancelled = await cancelCrawl(db.pool, job.job_id);
    const requestsAtCancel = site.log.length;
    expect(cancelled.status).toBe('cancelled');
    // Pages in flight are aborted and handed back: no claim stays open, and no new request starts.
    // A page claimed just before the cancel committed may still reach the server ("within one page
    // fetch"), so at most one request per concurrency slot arrives after it; none after the claims close.
    await waitUntil(async () => (await frontier(db.pool, job.job_id)).every((r) => r.status !== 'fetching'), 3000);
    const requestsSettled = site.log.length;
    expect(requestsSettled - requestsAtCancel).toBeLessThanOrEqual(3);
    await new Promise((r) => setTimeout(r, 500));
    expect(site.log.length).toBe(requestsSettled);
    const before = await frontier(db.pool, job.job_id);
    const doneBefore = before.filter((r) => r.status === 'done').map((r) => new URL(r.url).pathname);
    expect(doneBefore.length).toBeGreaterThanOrEqual(5);
    expect(before.some((r) => r.status === 'pending')).toBe(true);
    expect((await getCrawlJob(db.pool, job.job_id)).status).toBe('cancelled');
    await expect(cancelCrawl(db.pool, job.job_id)).rejects.toMatchObject({ code: 'conflict' });

    const resumed = await resumeCrawl(db, db.config, job.job_id);
    // Queued for adoption; the running worker may already have taken it.
    expect(['queued', 'running']).toContain(resumed.status);
    const final = await waitJob(db, job.job_id);
    expect(final.status).toBe('completed');
    expect(final.pages_crawled).toBe(paths.length);
    expect(await documentPaths(db.pool, final.source_id)).toEqual([...paths].sort());
    expect(await snippetCount(db.pool, final.source_id)).toBe(paths.length);
    for (const p of doneBefore) expect(site.count(p), p).toBe(1);
    await expect(resumeCrawl(db, db.config, job.job_id)).rejects.toMatchObject({ code: 'conflict' });
    await w.stop();
  });

  it('cancel takes the queued pages out of the queue even with no worker to drop them; resume queues them again', async () => {
    const w = await workers({ ...FAST_WORKER, concurrency: 2 });
    const { site, paths } = await hubSite(20, 100);
    const job = await startCrawl(db, db.config, { name: 'cancel-idle', start_urls: [site.url('/')], max_concurrent_crawls: 2 });
    await waitUntil(async () => (await doneCount(job.job_id)) >= 2 && (await queuedPageJobs(job.job_id)) > 10);
    await w.stop();
    expect(await queuedPageJobs(job.job_id)).toBeGreaterThan(10);
    await cancelCrawl(db.pool, job.job_id);
    expect(await queuedPageJobs(job.job_id)).toBe(0);
    expect((await crawlHealth(db)).queue.queued).toBe(0);
    await resumeCrawl(db, db.config, job.job_id);
    await workers({ ...FAST_WORKER, concurrency: 2 });
    const final = await waitJob(db, job.job_id);
    expect(final.status).toBe('completed');
    expect(final.pages_crawled).toBe(paths.length);
  });

  it('deleting the source of a running crawl takes its queued pages out of the queue, and its pages in flight end quietly', async () => {
    const errors: Error[] = [];
    await workers({ ...FAST_WORKER, concurrency: 2, onError: (e) => errors.push(e) });
    const { site } = await hubSite(30, 150);
    const job = await startCrawl(db, db.config, { name: 'delete-mid-crawl', start_urls: [site.url('/')], max_concurrent_crawls: 2 });
    await waitUntil(async () => (await doneCount(job.job_id)) >= 2 && (await queuedPageJobs(job.job_id)) > 10);
    const deleted = await deleteSource(db.pool, 'delete-mid-crawl');
    expect(deleted.crawl_jobs).toBe(1);
    // Pages in flight when the source went may still queue nothing: the leaves link nowhere.
    expect(await queuedPageJobs(job.job_id)).toBe(0);
    // Those pages answer within 150 ms; storing them finds the source gone, which is no error of the worker's.
    await new Promise((r) => setTimeout(r, 600));
    expect(errors.map((e) => e.message)).toEqual([]);
  });

  it('survives kill -9 of a real `docdex worker` mid-crawl: resume stores every page exactly once', async () => {
    const { site, paths } = await hubSite(40, 100);
    const child: ResultPromise = execa(process.execPath, [BIN, 'worker', '--concurrency', '3'], { env: db.env, extendEnv: false, reject: false, stdin: 'ignore' });
    cleanups.push(async () => {
      child.kill('SIGKILL');
      await child;
    });
    await waitUntil(async () => (await liveWorkers(db.pool)).length === 1, 30_000);
    const job = await startCrawl(db, db.config, { name: 'kill9', start_urls: [site.url('/')], max_concurrent_crawls: 3 });
    await waitUntil(async () => (await doneCount(job.job_id)) >= 8, 30_000);
    child.kill('SIGKILL');
    await child;
    await waitUntil(async () => (await liveWorkers(db.pool)).length === 0, 5000);
    const atKill = await frontier(db.pool, job.job_id);
    const doneAtKill = atKill.filter((r) => r.status === 'done').map((r) => new URL(r.url).pathname);
    // Killed mid-page: claims of the dead worker are still open.
    expect(atKill.some((r) => r.status === 'fetching')).toBe(true);
    expect((await getCrawlJob(db.pool, job.job_id)).status).toBe('running');
    const health = await crawlHealth(db);
    expect(health.stalled.map((s) => s.job_id)).toContain(job.job_id);

    const requestsAtKill = site.log.filter((r) => !isSiteFile(r.path)).length;
    await resumeCrawl(db, db.config, job.job_id);
    const w = await workers({ ...FAST_WORKER, concurrency: 3 });
    const final = await waitJob(db, job.job_id);
    expect(final.status).toBe('completed');
    expect(await documentPaths(db.pool, final.source_id)).toEqual([...paths].sort());
    expect(await snippetCount(db.pool, final.source_id)).toBe(paths.length);
    const docs = await db.pool.query<{ n: number; distinct_urls: number }>('SELECT count(*)::int AS n, count(DISTINCT url)::int AS distinct_urls FROM documents WHERE source_id = $1', [
      final.source_id,
    ]);
    expect(docs.rows[0]).toEqual({ n: paths.length, distinct_urls: paths.length });
    const occurrences = await db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM snippet_occurrences o JOIN snippets s ON s.id = o.snippet_id WHERE s.source_id = $1 AND s.kind = 'snippet'",
      [final.source_id],
    );
    expect(occurrences.rows[0]!.n).toBe(paths.length);
    // Pages finished before the kill were not fetched again; at most the three in flight were.
    for (const p of doneAtKill) expect(site.count(p), p).toBe(1);
    const pageRequests = site.log.filter((r) => !isSiteFile(r.path)).length;
    expect(pageRequests - (paths.length - doneAtKill.length)).toBeLessThanOrEqual(doneAtKill.length + 3);
    expect(requestsAtKill).toBeGreaterThanOrEqual(doneAtKill.length);
    await w.stop();
  });
});

describe('worker shutdown', () => {
  it('SIGTERM stops a real `docdex worker` gracefully: pages in flight finish, another worker completes the job', async () => {
    const { site, paths } = await hubSite(24, 150);
    const child: ResultPromise = execa(process.execPath, [BIN, 'worker', '--concurrency', '3'], { env: db.env, extendEnv: false, reject: false, stdin: 'ignore' });
    cleanups.push(async () => {
      child.kill('SIGKILL');
      await child;
    });
    await waitUntil(async () => (await liveWorkers(db.pool)).length === 1, 30_000);
    // bin/run.js restarted it in place with its memory settings (a smaller young generation, an old generation
    // grown by half its live size, two malloc arenas), and only once.
    const cmdline = readFileSync(`/proc/${child.pid!}/cmdline`, 'utf8').split('\0');
    expect(cmdline.filter((a) => a.startsWith('--max-semi-space-size'))).toEqual(['--max-semi-space-size=8']);
    expect(cmdline.filter((a) => a.startsWith('--heap-growing-percent'))).toEqual(['--heap-growing-percent=50']);
    expect(readFileSync(`/proc/${child.pid!}/environ`, 'utf8').split('\0')).toContain('MALLOC_ARENA_MAX=2');
    const job = await startCrawl(db, db.config, { name: 'sigterm', start_urls: [site.url('/')], max_concurrent_crawls: 3 });
    await waitUntil(async () => (await doneCount(job.job_id)) >= 5, 30_000);
    const stopping = Date.now();
    child.kill('SIGTERM');
    const result = await child;
    expect(result.exitCode).toBe(0);
    expect(Date.now() - stopping).toBeLessThan(8000);
    const after = await frontier(db.pool, job.job_id);
    expect(after.filter((r) => r.status === 'fetching')).toEqual([]);
    // Its controller handed the job back instead of leaving it to a dead session.
    expect((await db.pool.query('SELECT controller_worker_id FROM crawl_jobs WHERE id = $1', [job.job_id])).rows[0]).toEqual({ controller_worker_id: null });

    await workers({ ...FAST_WORKER, concurrency: 3 });
    const final = await waitJob(db, job.job_id);
    expect(final.status).toBe('completed');
    expect(await documentPaths(db.pool, final.source_id)).toEqual([...paths].sort());
    // Graceful: nothing in flight was abandoned, so no page was fetched twice.
    for (const p of paths) expect(site.count(p), p).toBe(1);
  });
});

describe('health', () => {
  it('reports live workers, queue depth and jobs with nobody to run them', async () => {
    const { site } = await hubSite(2, 0);
    const job = await startCrawl(db, db.config, { name: 'health', start_urls: [site.url('/')] });
    const idle = await crawlHealth(db);
    expect(idle.workers.live).toBe(0);
    expect(idle.stalled.find((s) => s.job_id === job.job_id)?.reason).toMatch(/no worker/);
    expect(idle.healthy).toBe(false);
    const w = await workers();
    const live = await crawlHealth(db);
    expect(live.workers.live).toBe(1);
    expect(live.workers.list[0]!.worker_id).toBe(w.id);
    expect(live.queue).toMatchObject({ queued: expect.any(Number), active: expect.any(Number) });
    expect((await waitJob(db, job.job_id)).status).toBe('completed');
    expect((await crawlHealth(db)).healthy).toBe(true);
    await w.stop();
  });
});
