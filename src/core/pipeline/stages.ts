import type { Config } from '../config.js';
import type { IndexUpkeep } from '../llm/upkeep.js';
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

/**
 * Before a job reads completed: each stage's completion hook, in list order. A failing hook rejects, so the
 * job is not completed with its results half-searchable; its caller tries again (the controller's next tick).
 */
export async function runBeforeJobCompletes(stages: readonly PostCommitStage[], pool: StageServices['pool']): Promise<void> {
  for (const stage of stages) await stage.beforeJobCompletes?.(pool);
}

/** After a writer other than the store changed stored snippet text: each stage's hook for that. */
export function runAfterSnippetsRewritten(stages: readonly PostCommitStage[], pool: StageServices['pool']): void {
  for (const stage of stages) stage.afterSnippetsRewritten?.(pool);
}

/** The stages' upkeep hooks as one value, for writers that may not import pipeline (the LLM stage's workers). */
export function stageUpkeep(stages: readonly PostCommitStage[]): IndexUpkeep {
  return {
    beforeJobCompletes: (pool) => runBeforeJobCompletes(stages, pool),
    afterSnippetsRewritten: (pool) => runAfterSnippetsRewritten(stages, pool),
    whenWritersStop: (pool) => settleStages(stages, pool),
  };
}
