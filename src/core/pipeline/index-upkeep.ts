import { refreshSearchTermsAfterWrite } from '../search/lexicon.js';
import { mergePendingEntriesWhenQuiet } from '../search/pending.js';
import { settleSearchIndexes, settleWaitingSearchIndexes } from '../search/settle.js';
import type { PostCommitStage } from './types.js';

/**
 * Index upkeep, the one place that schedules it for every writer. A snippet insert queues its id for the typo
 * lexicon, a delete or a text change its words (triggers, migrations/010, 029), and every page rewrites its entries in the search indexes' GIN pending
 * lists; both are folded in outside the page's transaction, so concurrent page writes never wait on one
 * another's lexicon rows (search/lexicon.ts trails the writes by about a second; search/pending.ts merges once
 * writes go quiet). Before a job reads completed (the crawl controller, the LLM stage) both are settled at once
 * (search/settle.ts); the model's rewritten titles and descriptions are folded in and merged like a page's.
 */
export const indexUpkeepStage: PostCommitStage = {
  name: 'index-upkeep',
  owner: 'src/core/pipeline/index-upkeep.ts',
  queue: 'search_terms_queue (typo lexicon) and the GIN pending lists of the search indexes (snippets, sections, their word pairs) and documents_search',
  async afterCommit(page, services) {
    // New snippets, and since migrations/029 also replaced, removed or rehomed ones, have queued lexicon work.
    if (page.stored.snippetsOnPage > 0 || page.stored.sectionsOnPage > 0 || page.stored.replaced) await refreshSearchTermsAfterWrite(services.pool);
    mergePendingEntriesWhenQuiet(services.pool);
  },
  beforeJobCompletes: (pool) => settleSearchIndexes(pool),
  afterSnippetsRewritten: (pool) => {
    // A rewritten title or description queues its changed words (migrations/029); never throws.
    void refreshSearchTermsAfterWrite(pool);
    mergePendingEntriesWhenQuiet(pool);
  },
  whenWritersStop: (pool) => settleWaitingSearchIndexes(pool),
};
