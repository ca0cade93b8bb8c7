import type { PgBoss } from 'pg-boss';
import type { Config } from '../config.js';
import type { PageWriteResult } from '../store/pages.js';
import { enqueuePageEnhancement } from './queue.js';

/**
 * Called by the crawl and upload pipelines after a page is committed. With enhancement on it queues the page
 * for the LLM stage; a failure to queue only means this page is not enhanced, so it is reported, never thrown:
 * a slow or broken LLM setup must not fail a crawl.
 */
export async function queueEnhancementAfterStore(
  boss: PgBoss,
  config: Config,
  page: { jobKind: 'crawl' | 'upload'; jobId: string; sourceId: string; title: string; stored: PageWriteResult },
  onError?: (error: unknown) => void,
): Promise<void> {
  if (!config.llm.enabled || page.stored.snippetIds.length === 0) return;
  try {
    await enqueuePageEnhancement(boss, {
      jobKind: page.jobKind,
      jobId: page.jobId,
      sourceId: page.sourceId,
      documentId: page.stored.documentId,
      snippetIds: page.stored.snippetIds,
      pageTitle: page.title,
    });
  } catch (error) {
    onError?.(error);
  }
}
