import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { InTransactionStep, PageJob, PageWriteResult } from '../store/pages.js';

/**
 * The document pipeline's stage types. A producer (crawl fetch, upload file) yields a document; `extract`
 * turns it into a page and snippets; `storePage` writes them, with the caller's in-transaction steps, in one
 * transaction; then the post-commit stages given by whoever started the workers run, in list order.
 */

/** A page write that has committed: what a post-commit stage is given. */
export interface CommittedPage {
  job: PageJob;
  sourceId: string;
  title: string;
  stored: PageWriteResult;
}

/** What the process that runs the stages lends them: its pool, its pg-boss, where background errors go. */
export interface StageServices {
  pool: pg.Pool;
  /** Needed by stages that queue jobs (LLM enhancement); absent where nothing is queued (tests of the store). */
  boss?: PgBoss;
  onError: (error: unknown) => void;
}

/** One stage after a page commits. Stages hold no per-process state of their own beyond what they key by pool. */
export interface PostCommitStage {
  /** Short name, for logs and errors. */
  readonly name: string;
  /** The module that owns what the stage does. */
  readonly owner: string;
  /** Where its work goes (a table or pg-boss queue), so a reader can follow it. */
  readonly queue: string;
  /** Rows the stage needs written with the page, inside its transaction (before the caller's own steps). */
  readonly inTransaction?: InTransactionStep;
  /** What it does with a committed page write. A rejection is reported through services.onError. */
  afterCommit(page: CommittedPage, services: StageServices): Promise<void>;
  /**
   * Before a job (crawl, or any job the LLM stage completes) reads completed: whatever the stage still owes the
   * job's writes is done now, so whoever learns that it completed finds its results. A rejection keeps the job
   * from completing (the caller tries again).
   */
  beforeJobCompletes?(pool: pg.Pool): Promise<void>;
  /** After a writer other than the store changed stored snippet text (the model's titles and descriptions). */
  afterSnippetsRewritten?(pool: pg.Pool): void;
  /** When the writers stop: work it keeps waiting on timers, done now while the pool is open. */
  whenWritersStop?(pool: pg.Pool): Promise<void>;
}
