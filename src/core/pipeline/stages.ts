import type { Config } from '../config.js';
import type { InTransactionStep } from '../store/pages.js';
import { indexUpkeepStage } from './index-upkeep.js';
import { llmEnhancementStage } from './llm-enhancement.js';
import type { CommittedPage, PostCommitStage, StageServices } from './types.js';

export type { CommittedPage, PostCommitStage, StageServices } from './types.js';

/**
 * The post-commit stages of every docs-index writer, named here and nowhere else. Whoever starts workers
 * (crawl workers, upload workers, `crawl start --wait`, the daemon's services) builds this list and passes it
 * in; a page write does only what the stages it is given say. To also index something new after a page
 * commits, add a stage here.
 */
export function documentStages(config: Config): PostCommitStage[] {
  return [indexUpkeepStage, llmEnhancementStage(config)];
}

/** The stages' own in-transaction steps, then the caller's (which run last, just before the commit). */
export function inTransactionSteps(stages: readonly PostCommitStage[], own: readonly InTransactionStep[] = []): InTransactionStep[] {
  const steps = stages.flatMap((s) => (s.inTransaction ? [s.inTransaction] : []));
  return [...steps, ...own];
}

/** Runs each stage in list order on a committed page. Never throws: a failing stage is reported and the next runs. */
export async function runPostCommitStages(stages: readonly PostCommitStage[], page: CommittedPage, services: StageServices): Promise<void> {
  for (const stage of stages) {
    try {
      await stage.afterCommit(page, services);
    } catch (error) {
      services.onError(new Error(`${stage.name} stage: ${(error as Error).message}`, { cause: error }));
    }
  }
}

/** For writers that stop: each stage's waiting work, while their pool is still open. Never throws. */
export async function settleStages(stages: readonly PostCommitStage[], pool: StageServices['pool']): Promise<void> {
  for (const stage of stages) await stage.whenWritersStop?.(pool).catch(() => undefined);
}
