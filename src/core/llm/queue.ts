import type { PgBoss } from 'pg-boss';
import type { PageEnhancement } from './enhance.js';

/**
 * Feeding the LLM stage: what the crawl and upload pipelines import after each stored page. Kept apart from
 * the worker so a crawl-only process never loads the model client or the tokenizer (tens of MB).
 */

export const LLM_QUEUE = 'docdex-llm-enhance';

export type PageEnhancementJob = PageEnhancement;

// Transient endpoint failures (after the client's own retries) come back later, spaced out; an outage longer
// than this leaves the page with its extractor values, which is the product's normal state without an LLM.
export const QUEUE_OPTIONS = {
  retryLimit: 4,
  retryDelay: 30,
  retryBackoff: true,
  retryDelayMax: 900,
  expireInSeconds: 1800,
  deleteAfterSeconds: 86_400,
} as const;

const queuesReady = new WeakMap<PgBoss, Promise<void>>();

export async function ensureQueue(boss: PgBoss): Promise<void> {
  let ready = queuesReady.get(boss);
  if (!ready) {
    // create_queue is idempotent (ON CONFLICT DO NOTHING under pg-boss's advisory lock).
    ready = boss.createQueue(LLM_QUEUE, QUEUE_OPTIONS);
    queuesReady.set(boss, ready);
    ready.catch(() => queuesReady.delete(boss));
  }
  await ready;
}

/**
 * Queues the enhancement of one stored page. Call it after storePage returns, with its snippetIds, only when
 * config.llm.enabled. Returns the pg-boss job id, or null when the page has no snippets.
 */
export async function enqueuePageEnhancement(boss: PgBoss, job: PageEnhancementJob): Promise<string | null> {
  if (job.snippetIds.length === 0) return null;
  await ensureQueue(boss);
  // The crawl or upload job is the pg-boss group: a cancel drops the job's queued pages in one statement.
  return boss.send(LLM_QUEUE, { ...job }, { ...QUEUE_OPTIONS, group: { id: job.jobId } });
}
