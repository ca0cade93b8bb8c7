import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import pg from 'pg';
import type { Job, PgBoss } from 'pg-boss';
import type { Config } from '../config.js';
import { createExtractionPool } from '../extract-pool/pool.js';
import type { ExtractionPool } from '../extract-pool/pool.js';
import type { ConnectionInfo } from '../db/connect.js';
import { SCHEMA } from '../db/migrate.js';
import type { JobEvent } from '../events/notify.js';
import { createBoss } from '../queue/boss.js';
import { completeIfDone, runController } from './controller.js';
import type { ForegroundBusy } from './courtesy.js';
import { Doorbell } from './doorbell.js';
import { PageFetcher } from './fetch.js';
import type { FetchSettings } from './fetch.js';
import { processPage } from './page.js';
import type { JobInfo, PageContext } from './page.js';
import { createEnqueue, ensurePageQueue, PAGE_QUEUE, PAGES_QUEUED, WAKE_CHANNEL } from './queue.js';
import type { PageJobData } from './queue.js';
import { RobotsStore } from './robots-store.js';
import { createScope } from './scope.js';
import { sleep } from './sleep.js';
import { normalizeUrl } from './url.js';
import { documentStages } from '../pipeline/stages.js';
import type { PostCommitStage } from '../pipeline/stages.js';
import { settleWaitingSearchIndexes } from '../search/settle.js';

/**
 * A crawl worker process (or part of one: `docdex serve`, `crawl start --wait`). It
 * - holds a presence session named docdex-worker:<id>, which is how every other worker and `crawl health`
 *   know it is alive (see crawl_worker_alive), and listens on it for cancellations and wake-ups;
 * - takes page jobs from pg-boss up to its concurrency, fetching as many as it has free slots, right after
 *   a page finishes or a wake-up (pages queued, a new job), else polling with backoff;
 * - adopts jobs that need a controller and runs them.
 * Stopping is graceful: no new work, controllers hand their jobs back, pages in flight get a grace period
 * and are then aborted and given back to the queue.
 */

export interface CrawlWorkerOptions {
  /** Pages in flight in this process, across all jobs. Default: MAX_CONCURRENT_CRAWLS. */
  concurrency?: number;
  /** Run pg-boss maintenance (expiring jobs of dead workers). Long-lived processes only. Default true. */
  supervise?: boolean;
  /** Adopt and control jobs (default true). */
  controllers?: boolean;
  maxControllers?: number;
  fetch?: Partial<FetchSettings>;
  /** Controller tick: progress events, heartbeat, dead-claim sweep. Default 1000 ms. */
  tickMs?: number;
  /** Longest wait between polls of an empty queue. Default 1000 ms. */
  idlePollMs?: number;
  /** How long pages in flight may finish when stopping before they are aborted. Default 10 s. */
  stopGraceMs?: number;
  /** Wait before a page retries a claim refused by the concurrency cap. Default 100 ms. */
  throttleWaitMs?: number;
  /** Ceiling on a robots.txt Crawl-delay, seconds. Default MAX_CRAWL_DELAY_SECONDS (30). */
  maxCrawlDelaySeconds?: number;
  /** Foreground work of this process that pages give way to (see courtesy.ts). Default: none, full speed. */
  giveWayTo?: ForegroundBusy;
  /** Worker threads that extract pages. Default: a pool of this worker's own (EXTRACT_THREADS), closed with it. */
  extraction?: ExtractionPool;
  /** What follows each committed page (core/pipeline/stages.ts). Default: documentStages(config). */
  stages?: readonly PostCommitStage[];
  onError?: (error: Error) => void;
  onEvent?: (event: WorkerEvent) => void;
}

export type WorkerEvent =
  | { type: 'started'; workerId: string; concurrency: number }
  | { type: 'adopted'; jobId: string }
  | { type: 'controller-ended'; jobId: string; reason: 'finished' | 'lost' | 'stopped' }
  | { type: 'job-finished'; jobId: string; status: string }
  | { type: 'presence-lost'; error: string }
  | { type: 'stopped'; workerId: string };

export interface CrawlWorkers {
  id: string;
  stop(): Promise<void>;
}

async function loadJobInfo(pool: pg.Pool, jobId: string): Promise<JobInfo | null> {
  const { rows } = await pool.query<{
    id: string;
    source_id: string;
    max_depth: number;
    max_concurrent: number;
    max_pages: number;
    start_urls: string[];
    domain_filter: string | null;
    url_patterns: string[];
    exclude_patterns: string[];
    allow_loopback: boolean;
  }>(
    'SELECT id, source_id, max_depth, max_concurrent, max_pages, start_urls, domain_filter, url_patterns, exclude_patterns, allow_loopback FROM crawl_jobs WHERE id = $1',
    [jobId],
  );
  const r = rows[0];
  if (!r) return null;
  const startKeys = r.start_urls.map((u) => normalizeUrl(u)).filter((u): u is string => u !== null);
  return {
    id: r.id,
    sourceId: r.source_id,
    maxDepth: r.max_depth,
    maxConcurrent: r.max_concurrent,
    maxPages: r.max_pages,
    scope: createScope({ startUrls: r.start_urls, domainFilter: r.domain_filter, urlPatterns: r.url_patterns, excludePatterns: r.exclude_patterns }),
    startKeys: new Set(startKeys),
    firstStartKey: startKeys[0] ?? '',
    allowLoopback: r.allow_loopback,
  };
}

/** Running crawl jobs with their cap, the pages other live workers are fetching for them, and whether any page waits. */
async function runningCaps(pool: pg.Pool, workerId: string): Promise<Map<string, CrawlCap>> {
  const { rows } = await pool.query<{ id: string; cap: number; others: number; waiting: boolean }>(
    `SELECT j.id, j.max_concurrent AS cap,
            count(DISTINCT f.claim_token) FILTER (WHERE f.worker_id <> $1 AND crawl_worker_alive(f.worker_id))::int AS others,
            EXISTS (SELECT 1 FROM crawl_frontier p WHERE p.job_id = j.id AND p.status = 'pending') AS waiting
       FROM crawl_jobs j LEFT JOIN crawl_frontier f ON f.job_id = j.id AND f.status = 'fetching'
      WHERE j.status = 'running'
      GROUP BY j.id`,
    [workerId],
  );
  return new Map(rows.map((r) => [r.id, { cap: r.cap, others: r.others, waiting: r.waiting }]));
}

interface CrawlCap {
  cap: number;
  others: number;
  /** Some page of the crawl is pending: it wants a slot. */
  waiting: boolean;
}

type Caps = ReadonlyMap<string, CrawlCap>;

/**
 * This process's slots one crawl may use while others want some too: an equal share among the crawls that have
 * pages waiting or in flight here, rounded up. Without it, the first crawl with a high cap took every slot and
 * a second crawl waited for it to finish. A crawl alone gets every slot its own cap allows.
 */
export function fairShare(caps: Caps, localActive: ReadonlyMap<string, number>, slots: number): number {
  let contending = 0;
  for (const [id, c] of caps) if (c.waiting || (localActive.get(id) ?? 0) > 0) contending++;
  return Math.ceil(slots / Math.max(1, contending));
}

function crawlFull(caps: Caps, localActive: ReadonlyMap<string, number>, crawlJobId: string, share = Infinity): boolean {
  const c = caps.get(crawlJobId);
  const local = localActive.get(crawlJobId) ?? 0;
  return c !== undefined && (c.others + local >= c.cap || local >= share);
}

/**
 * The crawls a page-queue fetch skips because their caps are used (live claims of other workers plus this
 * process's pages) or they have their fair share of this process's slots, or null when every running crawl is
 * full and the fetch is not worth making: it could only return pages of crawls that no longer run, and pg-boss
 * reads past every queued page of the full ones to find that out. That was the usual case (20 slots, 3 pages a
 * crawl): with 2,000 pages queued, 3.5 ms of database time after every page. A crawl started since the caps
 * were read waits for their next read: at the first wake-up (a page ending, pages queued, the idle poll) once
 * they are 100 ms old.
 */
export function pageFetchSkips(caps: Caps, localActive: ReadonlyMap<string, number>, share = Infinity): string[] | null {
  const skips = [...caps.keys()].filter((id) => crawlFull(caps, localActive, id, share));
  return skips.length > 0 && skips.length === caps.size ? null : skips;
}

/**
 * The worker's own connections, sized for its concurrency, so crawling never starves the pool of the process
 * it runs in (the daemon's API). They commit asynchronously: a page transaction holds rows every page of its
 * source shares (the source's counters, the search lexicon) until it commits, and waiting for the WAL flush
 * there would be paid once per page, in series. A database crash can lose the last fraction of a second of
 * commits, each whole (page, frontier row, links and claims together), so a resume simply redoes those pages;
 * a worker crash loses nothing.
 */
function createWorkerPool(info: ConnectionInfo, max: number, min: number): pg.Pool {
  const pool = new pg.Pool({
    ...info.config,
    max,
    min,
    application_name: 'docdex-crawl',
    options: `-c search_path=${SCHEMA},public -c synchronous_commit=off`,
    // Statements that do not wait for one another's answers go out together (storePage's BEGIN).
    pipeline: true,
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 10_000,
  });
  pool.on('error', () => undefined);
  return pool;
}

/** Opens `n` connections at once and gives them back to the pool, which keeps them (its `min`). */
async function warmPool(pool: pg.Pool, n: number): Promise<void> {
  const clients = await Promise.all(Array.from({ length: n }, () => pool.connect()));
  for (const client of clients) client.release();
}

export async function startCrawlWorkers(
  db: { pool: pg.Pool; info: ConnectionInfo },
  config: Config,
  options: CrawlWorkerOptions = {},
): Promise<CrawlWorkers> {
  const workerId = randomUUID();
  const concurrency = Math.max(1, options.concurrency ?? config.crawl.maxConcurrent);
  // Pages in flight each hold at most one connection at a time; the rest is for controllers and the queue.
  // A few connections stay open while the worker idles: opening one costs 25 to 35 ms (SCRAM, a new backend,
  // cold caches), and a crawl's first page went through several in a row before its first request.
  const warm = Math.min(concurrency, 3) + 1;
  const pool = createWorkerPool(db.info, concurrency + 6, warm);
  const tickMs = options.tickMs ?? 1000;
  const idlePollMs = options.idlePollMs ?? 1000;
  const stopGraceMs = options.stopGraceMs ?? 10_000;
  const maxControllers = options.controllers === false ? 0 : (options.maxControllers ?? 10);
  const onError = (error: Error) => options.onError?.(error);
  const emit = (event: WorkerEvent) => options.onEvent?.(event);

  let stopping = false;
  const pagesStop = new AbortController();
  const controllersStop = new AbortController();
  const pageBell = new Doorbell();
  const adoptBell = new Doorbell();
  const jobAborts = new Map<string, AbortController>();
  const jobInfos = new Map<string, Promise<JobInfo | null>>();
  const inFlight = new Set<Promise<void>>();
  const controllers = new Map<string, Promise<void>>();

  const fetcher = new PageFetcher({ allowHosts: config.outbound.allowHosts, ...options.fetch });
  // Pages come from anywhere: their extraction runs in worker threads with a time budget, off this thread.
  const extraction = options.extraction ?? createExtractionPool(config.extract);
  const robots = new RobotsStore(pool, fetcher, config.crawl.delaySeconds, options.maxCrawlDelaySeconds);

  const jobInfo = (jobId: string): Promise<JobInfo | null> => {
    let p = jobInfos.get(jobId);
    if (!p) {
      if (jobInfos.size > 500) jobInfos.clear();
      p = loadJobInfo(pool, jobId);
      jobInfos.set(jobId, p);
      p.catch(() => jobInfos.delete(jobId));
    }
    return p;
  };
  const jobAbort = (jobId: string): AbortController => {
    let c = jobAborts.get(jobId);
    if (!c) {
      c = new AbortController();
      jobAborts.set(jobId, c);
    }
    return c;
  };
  const controllerBells = new Map<string, Doorbell>();
  const waitTick = async (jobId: string, signal: AbortSignal): Promise<void> => {
    signal.throwIfAborted();
    let bell = controllerBells.get(jobId);
    if (!bell) {
      bell = new Doorbell();
      controllerBells.set(jobId, bell);
    }
    const onAbort = () => bell.ring();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await bell.wait(tickMs);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    signal.throwIfAborted();
  };
  const onJobEnded = (jobId: string, state: string) => {
    controllerBells.get(jobId)?.ring();
    // Cancel (or a peer finishing or failing the job) stops this worker's fetches for it within one fetch.
    if (state === 'cancelled' || state === 'failed') jobAborts.get(jobId)?.abort(new Error(`job ${state}`));
    jobAborts.delete(jobId);
    jobInfos.delete(jobId);
    robots.forgetJob(jobId);
  };

  // --- presence -------------------------------------------------------------------------------------------
  let presence: pg.Client | null = null;
  let presenceUp = false;
  const connectPresence = async (): Promise<void> => {
    const client = new pg.Client({ ...db.info.config, application_name: `docdex-worker:${workerId}` });
    client.on('notification', (message) => {
      if (message.channel === WAKE_CHANNEL) {
        pageBell.ring();
        if (message.payload !== PAGES_QUEUED) adoptBell.ring();
        return;
      }
      if (!message.payload) return;
      try {
        const event = JSON.parse(message.payload) as JobEvent;
        if (event.kind === 'crawl') onJobEnded(event.jobId, event.state);
      } catch {
        // Another writer's malformed payload is not ours to crash on.
      }
    });
    client.on('error', () => undefined);
    client.on('end', () => {
      if (presence !== client) return;
      presenceUp = false;
      presence = null;
      if (stopping) return;
      emit({ type: 'presence-lost', error: 'connection closed' });
      void reconnectPresence();
    });
    await client.connect();
    await client.query(`LISTEN ${WAKE_CHANNEL}`);
    await client.query('LISTEN job_complete');
    presence = client;
    presenceUp = true;
  };
  const reconnectPresence = async (): Promise<void> => {
    // While the session is down, peers see this worker as dead and take its work over; the claim tokens
    // make whatever it finishes meanwhile a no-op.
    for (let delay = 500; !stopping; delay = Math.min(delay * 2, 10_000)) {
      try {
        await connectPresence();
        adoptBell.ring();
        return;
      } catch (error) {
        onError(error as Error);
        await sleep(delay);
      }
    }
  };
  try {
    await connectPresence();
  } catch (error) {
    await fetcher.close();
    await pool.end().catch(() => undefined);
    throw error;
  }

  // --- queue ----------------------------------------------------------------------------------------------
  let boss: PgBoss;
  try {
    boss = createBoss(db.info, { supervise: options.supervise ?? true, max: 4, instanceName: `docdex-crawl-worker ${hostname()}` });
    boss.on('error', (error: Error) => onError(error));
    await Promise.all([boss.start(), warmPool(pool, warm)]);
    await ensurePageQueue(boss);
  } catch (error) {
    stopping = true;
    await (presence as pg.Client | null)?.end().catch(() => undefined);
    await fetcher.close();
    await pool.end().catch(() => undefined);
    throw error;
  }
  const enqueue = createEnqueue(boss);

  const pageCtx: PageContext = {
    pool,
    workerId,
    fetcher,
    robots,
    enqueue,
    delaySeconds: config.crawl.delaySeconds,
    throttleWaitMs: options.throttleWaitMs ?? 100,
    extract: (input) => extraction.extract(input),
    ...(options.giveWayTo ? { giveWayTo: options.giveWayTo } : {}),
    stages: options.stages ?? documentStages(config),
    services: { pool, boss, onError: (error) => onError(error instanceof Error ? error : new Error(String(error))) },
  };

  const finishJob = async (jobId: string) => {
    const finished = await completeIfDone(pool, jobId);
    if (finished) emit({ type: 'job-finished', jobId, status: finished.status });
  };

  // Queue jobs are completed in small batches: one round trip per page less. A job left active by a crash
  // before its batch went out is harmless; pg-boss expires it and the retry finds its page finished.
  let completions: string[] = [];
  let completionTimer: NodeJS.Timeout | null = null;
  let completing: Promise<void> = Promise.resolve();
  const flushCompletions = (): Promise<void> => {
    if (completionTimer) clearTimeout(completionTimer);
    completionTimer = null;
    const ids = completions;
    completions = [];
    if (ids.length > 0) {
      completing = completing.then(() => boss.complete(PAGE_QUEUE, ids).then(
        () => undefined,
        (error: unknown) => onError(error as Error),
      ));
    }
    return completing;
  };
  const complete = (id: string) => {
    completions.push(id);
    if (completions.length >= 25) void flushCompletions();
    else completionTimer ??= setTimeout(() => void flushCompletions(), 50);
  };

  const runPageJob = async (job: Job<PageJobData>): Promise<void> => {
    const jobId = job.data.crawlJobId;
    let settled = false;
    try {
      const info = await jobInfo(jobId);
      if (info) {
        const jobSignal = jobAbort(jobId).signal;
        const signal = AbortSignal.any([pagesStop.signal, jobSignal]);
        const result = await processPage(pageCtx, info, job.data, signal, () => jobSignal.aborted);
        settled = result === 'stored' || result === 'unchanged' || result === 'skipped' || result === 'failed';
      }
      complete(job.id);
    } catch (error) {
      onError(error as Error);
      settled = true;
      await boss.fail(PAGE_QUEUE, job.id, { message: (error as Error).message }).catch(() => undefined);
    }
    const remaining = (localActive.get(jobId) ?? 1) - 1;
    if (remaining <= 0) localActive.delete(jobId);
    else localActive.set(jobId, remaining);
    // Whoever settles the last open page of a job completes it; while this process has other pages of the job
    // in flight, one of those will (and the controller's tick is the backstop).
    if (settled && remaining === 0) await finishJob(jobId).catch((error: unknown) => onError(error as Error));
  };

  // Pages of this process per crawl job (fetched from the queue, claimed or not yet).
  const localActive = new Map<string, number>();

  const startPage = (job: Job<PageJobData>) => {
    const id = job.data.crawlJobId;
    localActive.set(id, (localActive.get(id) ?? 0) + 1);
    // runPageJob gives the localActive count back itself, before deciding whether the job may be finished.
    const p: Promise<void> = runPageJob(job).finally(() => {
      inFlight.delete(p);
      pageBell.ring();
    });
    inFlight.add(p);
  };

  /**
   * Starts up to `free` page jobs, skipping crawl jobs whose cap is already used by live claims of other workers
   * plus this process's own pages. The cap is counted from live claims, not from pg-boss's active jobs, because
   * the active jobs of a killed worker stay "active" until pg-boss expires them and would block the crawl that
   * long.
   * Jobs are fetched several at a time: a few more than there are free slots, kept in `ready` and started as
   * slots free up, so that a fetch round trip (planning pg-boss's query costs as much as running it) serves
   * several pages instead of one. The few jobs held this way are active in pg-boss but unclaimed; a worker
   * that stops gives them back, one that dies leaves them to the controller's re-queueing of stuck pages.
   */
  const ready: Array<Job<PageJobData>> = [];
  const prefetch = Math.ceil(concurrency / 2);
  let capsCache: { at: number; caps: Map<string, CrawlCap> } | null = null;
  const fill = async (free: number): Promise<number> => {
    // Refreshed at most every 100 ms: the claim is the exact gate, this only avoids parking pages.
    if (!capsCache || Date.now() - capsCache.at > 100) capsCache = { at: Date.now(), caps: await runningCaps(pool, workerId) };
    const caps = capsCache.caps;
    const share = fairShare(caps, localActive, concurrency);
    const full = (id: string) => crawlFull(caps, localActive, id, share);
    let taken = 0;
    while (taken < free && !stopping) {
      const next = ready.findIndex((job) => !full(job.data.crawlJobId));
      if (next >= 0) {
        startPage(ready.splice(next, 1)[0]!);
        taken++;
        continue;
      }
      const ignoreGroups = pageFetchSkips(caps, localActive, share);
      if (ignoreGroups === null) break;
      const batchSize = Math.max(1, free - taken + prefetch - ready.length);
      const jobs = await boss.fetch<PageJobData>(PAGE_QUEUE, { batchSize, ...(ignoreGroups.length > 0 ? { ignoreGroups } : {}) });
      if (jobs.length === 0) break;
      if (stopping) {
        await releaseReady(jobs);
        break;
      }
      ready.push(...jobs);
    }
    return taken;
  };
  /** Queue jobs taken but never started go back to the queue (as a page whose claim is released does). */
  const releaseReady = async (jobs: Array<Job<PageJobData>>): Promise<void> => {
    if (jobs.length === 0) return;
    const byCrawl = new Map<string, Array<{ url: string; depth: number }>>();
    for (const job of jobs) {
      const list = byCrawl.get(job.data.crawlJobId) ?? [];
      // Depth only sets the queue priority here (the frontier row keeps the page's real depth).
      list.push({ url: job.data.url, depth: 1 });
      byCrawl.set(job.data.crawlJobId, list);
    }
    try {
      for (const [crawlJobId, pages] of byCrawl) await enqueue(pool, crawlJobId, pages);
      await boss.complete(PAGE_QUEUE, jobs.map((j) => j.id));
    } catch (error) {
      onError(error as Error);
    }
  };

  const pageLoop = async (): Promise<void> => {
    let idle = 25;
    while (!stopping) {
      const free = concurrency - inFlight.size;
      if (free <= 0) {
        await pageBell.wait(idlePollMs);
        continue;
      }
      let taken = 0;
      try {
        taken = await fill(free);
      } catch (error) {
        if (stopping) break;
        onError(error as Error);
      }
      if (taken === free) {
        idle = 25;
        continue;
      }
      if (taken > 0) idle = 25;
      await pageBell.wait(idle);
      if (taken === 0) idle = Math.min(idle * 2, idlePollMs);
    }
  };

  const adoptLoop = async (): Promise<void> => {
    while (!stopping && maxControllers > 0) {
      if (presenceUp && controllers.size < maxControllers) {
        try {
          const { rows } = await pool.query<{ id: string }>('SELECT id FROM crawl_adopt_job($1) AS id', [workerId]);
          const id = rows[0]?.id;
          if (id) {
            emit({ type: 'adopted', jobId: id });
            const run = runController(
              { pool, workerId, enqueue, fetcher, robots, delaySeconds: config.crawl.delaySeconds, tickMs, waitTick, jobInfo, onError },
              id,
              controllersStop.signal,
            )
              .then((reason) => {
                emit({ type: 'controller-ended', jobId: id, reason });
                pageBell.ring();
              })
              .catch((error: unknown) => {
                onError(error as Error);
                // Let another worker (or this one, after a pause) take over rather than leave the job headless.
                return pool.query('UPDATE crawl_jobs SET controller_worker_id = NULL WHERE id = $1 AND controller_worker_id = $2', [id, workerId]);
              })
              .then(
                () => undefined,
                () => undefined,
              )
              .finally(() => {
                controllers.delete(id);
                controllerBells.delete(id);
                adoptBell.ring();
              });
            controllers.set(id, run);
            continue;
          }
        } catch (error) {
          if (stopping) break;
          onError(error as Error);
        }
      }
      await adoptBell.wait(Math.max(idlePollMs, 2000));
    }
  };

  const loops = Promise.all([pageLoop(), adoptLoop()]).catch((error: unknown) => onError(error as Error));
  emit({ type: 'started', workerId, concurrency });

  let stopped: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      stopping = true;
      pageBell.ring();
      adoptBell.ring();
      controllersStop.abort(new Error('worker stopping'));
      await loops;
      await releaseReady(ready.splice(0));
      await Promise.allSettled([...controllers.values()]);
      if (inFlight.size > 0) {
        // The grace timer is cancelled once the pages are done, or it would hold the process open.
        const grace = new AbortController();
        await Promise.race([Promise.allSettled([...inFlight]), sleep(stopGraceMs, grace.signal).catch(() => undefined)]);
        grace.abort();
        pagesStop.abort(new Error('worker stopping'));
        await Promise.allSettled([...inFlight]);
      }
      await flushCompletions();
      await settleWaitingSearchIndexes(pool);
      await boss.stop({ graceful: false, close: true, timeout: 5000 }).catch((error: unknown) => onError(error as Error));
      const client = presence;
      presence = null;
      presenceUp = false;
      await client?.end().catch(() => undefined);
      await fetcher.close();
      if (options.extraction === undefined) await extraction.close();
      await pool.end().catch((error: unknown) => onError(error as Error));
      emit({ type: 'stopped', workerId });
    })();
    return stopped;
  };

  return { id: workerId, stop };
}
