import type pg from 'pg';

/**
 * The search indexes' pending lists (migrations/012, 013; one index per unit kind, 040; word pairs, 041). A GIN index keeps new entries unsorted in a pending
 * list that every search through the index reads in full, until an insert that fills the list, or a vacuum,
 * merges it in. Writers merge it once they have gone quiet, so an index at rest keeps no list and a search
 * does not pay for the last pages of a crawl that ended hours ago (autovacuum would not merge it for a long
 * while on a large table: it waits for a tenth of the table to be new).
 */

type Db = Pick<pg.Pool, 'query'>;

// Long enough that a running crawl or upload (pages every few milliseconds to a second) does not merge after
// each page, which would undo the point of the list; short enough that searches soon stop paying for it.
export const QUIET_MS = 2000;

const quiet = new WeakMap<pg.Pool, NodeJS.Timeout>();

// Every GIN index a search reads: each kind's search index, each kind's word-pair index (041), the pages'.
const SEARCH_INDEXES = ['snippets_search', 'snippets_search_sections', 'snippets_search_pairs', 'snippets_search_pairs_sections', 'documents_search'];

/** Merges the pending entries of the search indexes (snippets, sections, their word pairs, pages); returns how many pending-list pages were merged. */
export async function mergePendingEntries(db: Db): Promise<number> {
  const { rows } = await db.query<{ pages: number }>(`SELECT ${SEARCH_INDEXES.map((name) => `gin_clean_pending_list('${name}'::regclass)`).join(' + ')} AS pages`);
  return Number(rows[0]?.pages ?? 0);
}

/**
 * For the index-upkeep stage (core/pipeline/index-upkeep.ts) and the LLM writer, after a commit: merges the
 * pending lists once this pool has written nothing for QUIET_MS. The timer does not keep a process alive, so
 * writers that stop settle first (settle.ts).
 */
export function mergePendingEntriesWhenQuiet(pool: pg.Pool): void {
  const timer = quiet.get(pool);
  if (timer) {
    timer.refresh();
    return;
  }
  const next = setTimeout(() => {
    quiet.delete(pool);
    // Best effort: the pool may have been closed since, or this role may not own the indexes.
    mergePendingEntries(pool).catch(() => undefined);
  }, QUIET_MS);
  next.unref();
  quiet.set(pool, next);
}

/**
 * Merges now, in place of any quiet-period merge this pool has waiting. A crawl's or upload's last pages would
 * otherwise stay in the lists when the process that wrote them exits first (`crawl start --wait`, `upload
 * --wait`), until autovacuum, which on a small index may not come for a long while; until then every search
 * reads the list, and the planner, counting its pages into the index's cost, scans the documents table
 * instead. Best effort, like the timer: the role may not own the indexes.
 */
export async function mergePendingEntriesNow(pool: pg.Pool): Promise<void> {
  const timer = quiet.get(pool);
  if (timer) {
    clearTimeout(timer);
    quiet.delete(pool);
  }
  await mergePendingEntries(pool).catch(() => undefined);
}

/** For writers that stop: the merge this pool has waiting, if any, now, while the pool is still open. */
export async function mergeWaitingEntries(pool: pg.Pool): Promise<void> {
  if (quiet.has(pool)) await mergePendingEntriesNow(pool);
}
