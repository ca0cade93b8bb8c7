import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { Config } from '../config.js';
import { createExtractionPool } from '../extract-pool/pool.js';
import type { ExtractionPool } from '../extract-pool/pool.js';
import type { ConnectionInfo } from '../db/connect.js';
import { createBoss } from '../queue/boss.js';
import { completeIfDone } from './controller.js';
import type { ControllerContext } from './controller.js';
import type { ForegroundBusy } from './courtesy.js';
import { Doorbell } from './doorbell.js';
import { PageFetcher } from './fetch.js';
import { createPageRenderer } from './render-step.js';
import type { FetchSettings } from './fetch.js';
import type { PageContext } from './page.js';
import { createEnqueue, ensurePageQueue } from './queue.js';
import type { Enqueue } from './queue.js';
import { RobotsStore } from './robots-store.js';
import { documentStages } from '../pipeline/stages.js';
import type { PostCommitStage } from '../pipeline/stages.js';
import { Controllers } from './workers/adopt-loop.js';
import { createWorkerPool, warmPool } from './workers/db-pool.js';
import { KnownJobs } from './workers/known-jobs.js';
import { PageBatch } from './workers/page-batch.js';
import { PageCompletions } from './workers/page-completions.js';
import { runPageLoop } from './workers/page-loop.js';
import { PageRunner } from './workers/page-runner.js';
import { Presence } from './workers/presence.js';
import { stopWorker } from './workers/shutdown.js';
import type { RunningWorker } from './workers/shutdown.js';

/**
 * A crawl worker process (or part of one: `docdex serve`, `crawl start --wait`). It is wired here from the parts
 * in `workers/`:
 * - presence (`presence.ts`): a session named docdex-worker:<id>, which is how every other worker and
 *   `crawl health` know it is alive (see crawl_worker_alive); it listens for cancellations and wake-ups;
 * - the page loop (`page-loop.ts`) takes page jobs from pg-boss up to its concurrency, right after a page
 *   finishes or a wake-up (pages queued, a new job), else polling with backoff; batching (`page-batch.ts`)
 *   fetches several at a time and keeps them ready for free slots; the runner (`page-runner.ts`) runs each page;
 * - the adopt loop (`adopt-loop.ts`) adopts jobs that need a controller and runs them;
 * - shutdown (`shutdown.ts`) is graceful: no new work, controllers hand their jobs back, pages in flight get a
 *   grace period and are then aborted and given back to the queue.
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

/** The worker's settings, from its options and the configuration. */
function workerSettings(config: Config, options: CrawlWorkerOptions) {
  const concurrency = Math.max(1, options.concurrency ?? config.crawl.maxConcurrent);
  return {
    concurrency,
    // Pages in flight each hold at most one connection at a time; the rest is for controllers and the queue.
    // A few connections stay open while the worker idles: opening one costs far more than a query (SCRAM, a new
    // backend, cold caches), and a crawl's first page went through several in a row before its first request.
    warm: Math.min(concurrency, 3) + 1,
    tickMs: options.tickMs ?? 1000,
    idlePollMs: options.idlePollMs ?? 1000,
    stopGraceMs: options.stopGraceMs ?? 10_000,
    maxControllers: options.controllers === false ? 0 : (options.maxControllers ?? 10),
  };
}

type WorkerSettings = ReturnType<typeof workerSettings>;

/** What a worker holds before it connects: its connections, fetcher, extraction threads, robots.txt and jobs. */
function createParts(db: { pool: pg.Pool; info: ConnectionInfo }, config: Config, options: CrawlWorkerOptions, settings: WorkerSettings) {
  const workerId = randomUUID();
  const pool = createWorkerPool(db.info, settings.concurrency + 6, settings.warm);
  const onError = (error: Error) => options.onError?.(error);
  const emit = (event: WorkerEvent) => options.onEvent?.(event);
  const stopping = new AbortController();
  const bells = { pages: new Doorbell(), adopt: new Doorbell() };
  const fetcher = new PageFetcher({ allowHosts: config.outbound.allowHosts, ...options.fetch });
  // Pages come from anywhere: their extraction runs in worker threads with a time budget, off this thread.
  const extraction = options.extraction ?? createExtractionPool(config.extract);
  const robots = new RobotsStore(pool, fetcher, config.crawl.delaySeconds, options.maxCrawlDelaySeconds);
  const jobs = new KnownJobs(pool, robots, settings.tickMs);
  // Found now, launched on the first page that needs it: workers on machines without Chromium cost nothing.
  const renderer = createPageRenderer(config, settings.concurrency);
  const presence = new Presence({
    connection: db.info.config,
    workerId,
    stopping: stopping.signal,
    bells,
    onJobEnded: (jobId, state) => jobs.ended(jobId, state),
    onLost: () => emit({ type: 'presence-lost', error: 'connection closed' }),
    onError,
  });
  return { workerId, pool, onError, emit, stopping, bells, fetcher, extraction, robots, jobs, presence, renderer };
}

type WorkerParts = ReturnType<typeof createParts>;

/** Connects the presence session, then the queue; whatever opened is closed again when either fails. */
async function connect(info: ConnectionInfo, parts: WorkerParts, supervise: boolean, warm: number): Promise<PgBoss> {
  const { presence, fetcher, pool, onError } = parts;
  try {
    await presence.connect();
  } catch (error) {
    await fetcher.close();
    await pool.end().catch(() => undefined);
    throw error;
  }
  try {
    const boss = createBoss(info, { supervise, max: 4, instanceName: `docdex-crawl-worker ${hostname()}` });
    boss.on('error', (error: Error) => onError(error));
    await Promise.all([boss.start(), warmPool(pool, warm)]);
    await ensurePageQueue(boss);
    return boss;
  } catch (error) {
    parts.stopping.abort(new Error('worker stopping'));
    await presence.close();
    await fetcher.close();
    await pool.end().catch(() => undefined);
    throw error;
  }
}

/** What a page needs to be fetched, extracted and stored in this worker. */
function pageContext(parts: WorkerParts, boss: PgBoss, enqueue: Enqueue, config: Config, options: CrawlWorkerOptions): PageContext {
  const { pool, workerId, fetcher, robots, extraction, onError } = parts;
  return {
    pool,
    workerId,
    fetcher,
    robots,
    enqueue,
    delaySeconds: config.crawl.delaySeconds,
    throttleWaitMs: options.throttleWaitMs ?? 100,
    extract: (input) => extraction.extract(input),
    renderer: parts.renderer,
    ...(options.giveWayTo ? { giveWayTo: options.giveWayTo } : {}),
    stages: options.stages ?? documentStages(config),
    services: { pool, boss, onError: (error) => onError(error instanceof Error ? error : new Error(String(error))) },
  };
}

/** Starts the page loop and the adopt loop; returns all that stopping the worker ends. */
function startLoops(parts: WorkerParts, boss: PgBoss, config: Config, options: CrawlWorkerOptions, settings: WorkerSettings): RunningWorker {
  const { workerId, pool, onError, emit, stopping, bells, fetcher, robots, jobs, presence } = parts;
  const enqueue = createEnqueue(boss);
  const pagesStop = new AbortController();
  const completions = new PageCompletions(boss, onError);
  const page = pageContext(parts, boss, enqueue, config, options);
  const { stages } = page;
  const finishJob = async (jobId: string) => {
    const finished = await completeIfDone(pool, jobId, stages);
    if (finished) emit({ type: 'job-finished', jobId, status: finished.status });
  };
  const runner = new PageRunner({ boss, jobs, page, completions, pagesStop: pagesStop.signal, pageBell: bells.pages, finishJob, onError });
  const { concurrency, idlePollMs } = settings;
  const batch = new PageBatch({ pool, workerId, boss, enqueue, concurrency, runner, stopping: stopping.signal, onError });
  const controller: ControllerContext = {
    pool,
    workerId,
    enqueue,
    fetcher,
    robots,
    delaySeconds: config.crawl.delaySeconds,
    tickMs: settings.tickMs,
    stages,
    waitTick: (jobId, signal) => jobs.waitTick(jobId, signal),
    jobInfo: (jobId) => jobs.info(jobId),
    onError,
  };
  const controllers = new Controllers({
    pool,
    workerId,
    controller,
    maxControllers: settings.maxControllers,
    idlePollMs,
    presence,
    jobs,
    adoptBell: bells.adopt,
    pageBell: bells.pages,
    stopping: stopping.signal,
    onAdopted: (jobId) => emit({ type: 'adopted', jobId }),
    onControllerEnded: (jobId, reason) => emit({ type: 'controller-ended', jobId, reason }),
    onError,
  });
  const pageLoop = runPageLoop({ concurrency, idlePollMs, runner, batch, pageBell: bells.pages, stopping: stopping.signal, onError });
  const loops = Promise.all([pageLoop, controllers.adoptLoop()]).catch((error: unknown) => onError(error as Error));
  const ownExtraction = options.extraction === undefined ? parts.extraction : null;
  const { stopGraceMs } = settings;
  return { stopping, bells, loops, batch, controllers, runner, stopGraceMs, pagesStop, completions, pool, boss, presence, fetcher, renderer: parts.renderer, ownExtraction, stages, onError };
}

export async function startCrawlWorkers(db: { pool: pg.Pool; info: ConnectionInfo }, config: Config, options: CrawlWorkerOptions = {}): Promise<CrawlWorkers> {
  const settings = workerSettings(config, options);
  const parts = createParts(db, config, options, settings);
  const boss = await connect(db.info, parts, options.supervise ?? true, settings.warm);
  const running = startLoops(parts, boss, config, options, settings);
  const { workerId, emit } = parts;
  emit({ type: 'started', workerId, concurrency: settings.concurrency });

  let stopped: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopped ??= stopWorker(running).then(() => emit({ type: 'stopped', workerId }));
    return stopped;
  };
  return { id: workerId, stop };
}
