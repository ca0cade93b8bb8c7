import type { Config } from '../config.js';
import { queueEnhancementAfterStore } from '../llm/after-store.js';
import { recordLanguageConfidence } from '../llm/language-confidence.js';
import { LLM_QUEUE } from '../llm/queue.js';
import type { PostCommitStage } from './types.js';

/**
 * LLM enhancement: with the page it records which new snippets have an unsure language (so the model is
 * asked about those), and after the commit it queues the page for the LLM workers when enhancement is on.
 * What the enhancer does is src/core/llm/*; this stage only feeds it.
 */
export function llmEnhancementStage(config: Config): PostCommitStage {
  return {
    name: 'llm-enhancement',
    owner: 'src/core/llm/after-store.ts',
    queue: `pg-boss ${LLM_QUEUE}`,
    inTransaction: recordLanguageConfidence,
    async afterCommit(page, services) {
      if (!config.llm.enabled) return;
      if (!services.boss) throw new Error('the llm-enhancement stage needs a pg-boss to queue pages on');
      const { job, sourceId, title, stored } = page;
      await queueEnhancementAfterStore(services.boss, config, { jobKind: job.kind, jobId: job.id, sourceId, title, stored }, services.onError);
    },
  };
}
