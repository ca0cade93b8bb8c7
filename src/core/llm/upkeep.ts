import type pg from 'pg';

/**
 * The index upkeep the LLM stage's writes need, lent by whoever starts its workers (`stageUpkeep` over the
 * document stages, core/pipeline/stages.ts), so the stage never schedules search upkeep itself. Declared here
 * rather than imported from pipeline: pipeline imports llm (the llm-enhancement stage).
 */
export interface IndexUpkeep {
  /** Before a job the stage completes reads completed: the model's new words counted and merged. */
  beforeJobCompletes(pool: pg.Pool): Promise<void>;
  /** After the model rewrote snippet titles and descriptions. */
  afterSnippetsRewritten(pool: pg.Pool): void;
  /** When the LLM workers stop, while the pool is still open. */
  whenWritersStop(pool: pg.Pool): Promise<void>;
}
