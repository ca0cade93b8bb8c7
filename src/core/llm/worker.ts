import type { PgBoss } from 'pg-boss';
import type pg from 'pg';
import type { Config } from '../config.js';
import type { ConnectionInfo } from '../db/connect.js';
import { publish } from '../events/notify.js';
import { createBoss } from '../queue/boss.js';
import { settleWaitingSearchIndexes } from '../search/settle.js';
import { readUsage } from './budget.js';
import { LlmClient } from './client.js';
import type { LlmClientOptions } from './client.js';
import { enhancePage } from './enhance.js';
import type { EnhancePageResult } from './enhance.js';
import { resolveLlmSettings } from './settings.js';

/**
 * The LLM stage of the pipeline: its own pg-boss queue, fed after a page is stored. The crawl or upload only
 * inserts a queue row; the model's speed or failures never touch it. Snippets are searchable from the moment
 * storePage commits and get better titles and descriptions when the model answers.
 */

import { ensureQueue, LLM_QUEUE } from './queue.js';
import type { PageEnhancementJob } from './queue.js';

export { enqueuePageEnhancement } from './queue.js';
export type { PageEnhancementJob } from './queue.js';

export interface LlmWorkers {
  stop(): Promise<void>;
}

export interface LlmWorkerOptions {
  /** Reuse a started PgBoss (the daemon's); otherwise the workers start and stop their own. */
  boss?: PgBoss;
  /** Background errors (a page whose enhancement failed); the workers keep going. */
  onError?: (error: unknown, job?: PageEnhancementJob) => void;
  /** After each page, with what happened: for logs and tests. */
  onPage?: (job: PageEnhancementJob, result: EnhancePageResult) => void;
  client?: LlmClientOptions;
  pollingIntervalSeconds?: number;
}

/**
 * Starts the LLM workers of this process: config.llm.maxConcurrency pages at a time, sharing one client whose
 * semaphore caps requests in flight. With enhancement disabled it starts nothing. A configuration that cannot
 * work (no model) throws ConfigError here, like assertLlmReady does.
 */
export async function startLlmWorkers(db: { pool: pg.Pool; info: ConnectionInfo }, config: Config, options: LlmWorkerOptions = {}): Promise<LlmWorkers> {
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

  const handle = async (job: PageEnhancementJob, signal: AbortSignal): Promise<EnhancePageResult> => {
    try {
      const result = await enhancePage({ pool: db.pool, client, limits, signal }, job);
      options.onPage?.(job, result);
      if (result.calls > 0 || result.enhanced > 0) await reportProgress(db.pool, job, result);
      return result;
    } catch (error) {
      options.onError?.(error, job);
      throw error;
    }
  };

  const workerId = await boss.work<PageEnhancementJob>(
    LLM_QUEUE,
    { localConcurrency: settings.maxConcurrency, batchSize: 1, pollingIntervalSeconds: options.pollingIntervalSeconds ?? 2 },
    async ([job]) => {
      if (!job) return;
      const result = await handle(job.data, job.signal);
      return { enhanced: result.enhanced, calls: result.calls, tokens: result.tokens, cacheHits: result.cacheHits };
    },
  );

  let stopped = false;
  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      if (ownBoss) await boss.stop({ graceful: true, close: true, timeout: 10_000 });
      else await boss.offWork(LLM_QUEUE, { id: workerId, wait: true });
      await settleWaitingSearchIndexes(db.pool);
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
