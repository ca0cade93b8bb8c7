import type { PgBoss } from 'pg-boss';
import type pg from 'pg';
import type { Config } from '../config.js';
import type { ConnectionInfo } from '../db/connect.js';
import { publish } from '../events/notify.js';
import { createBoss } from '../queue/boss.js';
import { readUsage } from './budget.js';
import { LlmClient } from './client.js';
import type { LlmClientOptions } from './client.js';
import { enhancePage } from './enhance.js';
import type { EnhancePageResult } from './enhance.js';
import { resolveLlmSettings } from './settings.js';
import { LlmRequestError } from './client.js';
import type { EnhanceDeps } from './enhance.js';
import { afterPageEnhanced, jobWantsEnhancement, recordPageDone, sweepEnhancingJobs } from './job-stage.js';
import type { IndexUpkeep } from './upkeep.js';

/**
 * The LLM stage of the pipeline: its own pg-boss queue, fed after a page is stored. The crawl or upload only
 * inserts a queue row; the model's speed or failures never touch it. Snippets are searchable from the moment
 * storePage commits and get better titles and descriptions when the model answers.
 */

import { ensureQueue, LLM_QUEUE, QUEUE_OPTIONS } from './queue.js';
import type { PageEnhancementJob } from './queue.js';

export { enqueuePageEnhancement } from './queue.js';
export type { PageEnhancementJob } from './queue.js';

export interface LlmWorkers {
  stop(): Promise<void>;
}

export interface LlmWorkerOptions {
  /**
   * Index upkeep for what the stage writes: the model's descriptions, and the jobs it completes (searchable
   * before they read completed). Lent by whoever starts the workers: `stageUpkeep(documentStages(config))`.
   */
  upkeep: IndexUpkeep;
  /** Reuse a started PgBoss (the daemon's); otherwise the workers start and stop their own. */
  boss?: PgBoss;
  /** Background errors (a page whose enhancement failed); the workers keep going. */
  onError?: (error: unknown, job?: PageEnhancementJob) => void;
  /** After each page, with what happened: for logs and tests. */
  onPage?: (job: PageEnhancementJob, result: EnhancePageResult) => void;
  client?: LlmClientOptions;
  pollingIntervalSeconds?: number;
  /** How often the enhancing jobs are checked for lost pages and completion. Default 5 s. */
  sweepIntervalMs?: number;
}

/**
 * Starts the LLM workers of this process: config.llm.maxConcurrency pages at a time, sharing one client whose
 * semaphore caps requests in flight. With enhancement disabled it starts nothing. A configuration that cannot
 * work (no model) throws ConfigError here, like assertLlmReady does.
 */
export async function startLlmWorkers(db: { pool: pg.Pool; info: ConnectionInfo }, config: Config, options: LlmWorkerOptions): Promise<LlmWorkers> {
  if (!config.llm.enabled) return { stop: async () => undefined };
  const settings = resolveLlmSettings(config);
  const client = new LlmClient(settings, options.client);
  const limits = { maxCalls: settings.jobMaxCalls, maxTokens: settings.jobMaxTokens };
  const ownBoss = options.boss === undefined;
  const boss = options.boss ?? createBoss(db.info, { instanceName: 'docdex-llm', max: 2 });
  if (ownBoss) {
    boss.on('error', (error) => options.onError?.(error));
    await boss.start();
  }
  await ensureQueue(boss);

  const { upkeep } = options;
  const deps = { pool: db.pool, client, limits, upkeep };
  const workerId = await boss.work<PageEnhancementJob>(
    LLM_QUEUE,
    { localConcurrency: settings.maxConcurrency, batchSize: 1, pollingIntervalSeconds: options.pollingIntervalSeconds ?? 2 },
    async ([job]) => {
      if (!job) return;
      const lastAttempt = job.retryCount >= QUEUE_OPTIONS.retryLimit;
      const result = await enhanceQueuedPage({ ...deps, signal: job.signal }, job.data, lastAttempt, options);
      return { enhanced: result.enhanced, calls: result.calls, tokens: result.tokens, cacheHits: result.cacheHits };
    },
  );
  // The stage's own upkeep: pages whose queueing was lost (or dropped by a cancel before a resume) go back to the
  // queue, and enhancing jobs with nothing left complete (their last page's process stopped before completing them).
  const sweep = setInterval(() => {
    sweepEnhancingJobs(db.pool, boss, upkeep).catch((error: unknown) => options.onError?.(error));
  }, options.sweepIntervalMs ?? 5000);
  sweep.unref();

  let stopped = false;
  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(sweep);
      if (ownBoss) await boss.stop({ graceful: true, close: true, timeout: 10_000 });
      else await boss.offWork(LLM_QUEUE, { id: workerId, wait: true });
      await upkeep.whenWritersStop(db.pool);
    },
  };
}

async function reportProgress(pool: pg.Pool, job: PageEnhancementJob, result: EnhancePageResult): Promise<void> {
  try {
    const usage = await readUsage(pool, job.jobKind, job.jobId);
    await publish(pool, {
      event: 'llm_progress',
      jobId: job.jobId,
      kind: 'llm',
      state: result.budgetExhausted ? 'budget_exhausted' : 'running',
      counters: {
        llm_calls: usage?.calls ?? 0,
        llm_tokens: usage?.tokens ?? 0,
        snippets_enhanced: result.enhanced,
        cache_hits: result.cacheHits,
      },
    });
  } catch {
    // Progress is best effort: a missed event never fails the enhancement that already committed.
  }
}

const SKIPPED: EnhancePageResult = {
  pending: 0,
  enhanced: 0,
  cacheHits: 0,
  calls: 0,
  tokens: 0,
  invalidAnswers: 0,
  fallbacks: 0,
  budgetExhausted: false,
  relationships: 0,
  rejectedFields: 0,
};

/** What the job's summary counts as an enhancement error for a page that went through the stage. */
function pageError(result: EnhancePageResult): string | null {
  if (result.error !== undefined) return result.error;
  if (result.budgetExhausted) return "the job's LLM budget (LLM_JOB_MAX_CALLS / LLM_JOB_MAX_TOKENS) was spent";
  if (result.fallbacks > 0) return `${result.fallbacks} snippets kept the extractor's values: the model's answers were unusable`;
  return null;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * One queued page: skipped when its job no longer wants it (cancelled), else enhanced and recorded as done for
 * its job. A retryable endpoint failure goes back to the queue, except on the queue's last attempt, where the
 * page is recorded with its error so the job can complete instead of waiting for it forever.
 */
async function enhanceQueuedPage(deps: EnhanceDeps, job: PageEnhancementJob, lastAttempt: boolean, options: LlmWorkerOptions): Promise<EnhancePageResult> {
  if (!(await jobWantsEnhancement(deps.pool, job.jobKind, job.jobId))) return SKIPPED;
  let result: EnhancePageResult;
  try {
    // The outcome commits with the page's snippets, so no reader sees them enhanced before the page is done.
    const recordOutcome = (client: pg.ClientBase, r: EnhancePageResult) => recordPageDone(client, job, { enhanced: r.enhanced, error: pageError(r) });
    result = await enhancePage({ ...deps, recordOutcome }, job);
  } catch (error) {
    options.onError?.(error, job);
    const retried = error instanceof LlmRequestError ? error.retryable : true;
    if (retried && !lastAttempt) throw error;
    await recordPageDone(deps.pool, job, { enhanced: 0, error: errorText(error) });
    await afterPageEnhanced(deps.pool, job.jobKind, job.jobId, options.upkeep);
    throw error;
  }
  options.onPage?.(job, result);
  if (result.calls > 0 || result.enhanced > 0) await reportProgress(deps.pool, job, result);
  if (!result.recorded) await recordPageDone(deps.pool, job, { enhanced: result.enhanced, error: pageError(result) });
  await afterPageEnhanced(deps.pool, job.jobKind, job.jobId, options.upkeep);
  return result;
}
