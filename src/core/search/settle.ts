import type pg from 'pg';
import { refreshSearchTermsNow, refreshWaitingSearchTerms } from './lexicon.js';
import { mergePendingEntriesNow, mergeWaitingEntries } from './pending.js';

/**
 * Writers keep search upkeep for later (lexicon.ts folds the typo lexicon about a second behind, pending.ts
 * merges the index lists once writes go quiet), on timers that do not keep a process alive. When a crawl
 * completes, and when a writer stops, that upkeep is done at once: the searches that follow (often from the
 * next command of a script) then see every word counted and every index merged, whatever process wrote them.
 */
export async function settleSearchIndexes(pool: pg.Pool): Promise<void> {
  await refreshSearchTermsNow(pool);
  await mergePendingEntriesNow(pool);
}

/** For writers that stop: the upkeep this pool has waiting, while the pool is still open. */
export async function settleWaitingSearchIndexes(pool: pg.Pool): Promise<void> {
  await refreshWaitingSearchTerms(pool);
  await mergeWaitingEntries(pool);
}
