import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { ExtractionPool } from '../../extract-pool/pool.js';
import type { Doorbell } from '../doorbell.js';
import type { PageFetcher } from '../fetch.js';
import type { PageRenderer } from '../render-step.js';
import { sleep } from '../sleep.js';
import { settleStages } from '../../pipeline/stages.js';
import type { PostCommitStage } from '../../pipeline/stages.js';
import type { Controllers } from './adopt-loop.js';
import type { PageBatch } from './page-batch.js';
import type { PageCompletions } from './page-completions.js';
import type { PageRunner } from './page-runner.js';
import type { Presence } from './presence.js';

/** Everything a running worker holds that stopping it ends, in the order it is ended. */
export interface RunningWorker {
  /** Aborted first: no new work, controllers hand their jobs back. */
  stopping: AbortController;
  bells: { pages: Doorbell; adopt: Doorbell };
  /** The page loop and the adopt loop, which end once `stopping` is aborted. */
  loops: Promise<unknown>;
  batch: PageBatch;
  controllers: Controllers;
  runner: PageRunner;
  /** How long pages in flight may finish before `pagesStop` aborts them. */
  stopGraceMs: number;
  pagesStop: AbortController;
  completions: PageCompletions;
  pool: pg.Pool;
  boss: PgBoss;
  /** The post-commit stages the pages went through: their waiting work is settled before the pool closes. */
  stages: readonly PostCommitStage[];
  presence: Presence;
  fetcher: PageFetcher;
  /** The worker's headless browser, closed with it. */
  renderer: PageRenderer;
  /** The extraction pool, when the worker made its own (then it closes it). */
  ownExtraction: ExtractionPool | null;
  onError(error: Error): void;
}

/** Pages in flight get a grace period; then they are aborted (and give their pages back to the queue). */
async function drainPages(worker: RunningWorker): Promise<void> {
  if (worker.runner.size === 0) return;
  // The grace timer is cancelled once the pages are done, or it would hold the process open.
  const grace = new AbortController();
  await Promise.race([worker.runner.allEnded(), sleep(worker.stopGraceMs, grace.signal).catch(() => undefined)]);
  grace.abort();
  worker.pagesStop.abort(new Error('worker stopping'));
  await worker.runner.allEnded();
}

/**
 * Graceful stop: no new work, jobs fetched but not started go back to the queue, controllers hand their jobs
 * back, pages in flight get their grace period, the batched completions go out, the deferred search upkeep is
 * done, and then the queue, the presence session (other workers see this one gone), the fetcher, the extraction
 * threads and the connections are closed.
 */
export async function stopWorker(worker: RunningWorker): Promise<void> {
  const { onError } = worker;
  worker.stopping.abort(new Error('worker stopping'));
  worker.bells.pages.ring();
  worker.bells.adopt.ring();
  await worker.loops;
  await worker.batch.releaseReady();
  await worker.controllers.allEnded();
  await drainPages(worker);
  await worker.completions.flush();
  await settleStages(worker.stages, worker.pool);
  await worker.boss.stop({ graceful: false, close: true, timeout: 5000 }).catch((error: unknown) => onError(error as Error));
  await worker.presence.close();
  await worker.fetcher.close();
  await worker.renderer.host?.close();
  if (worker.ownExtraction) await worker.ownExtraction.close();
  await worker.pool.end().catch((error: unknown) => onError(error as Error));
}
