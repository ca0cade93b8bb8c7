import type pg from 'pg';

/**
 * Upkeep of the typo-correction lexicon (search_terms). Snippet writes only queue their ids (migrations/010),
 * deletes and text changes the words to take out and add (029); this folds the queue into the lexicon, outside
 * the writers' transactions, one session at a time, so word counts stay the number of snippets holding each.
 */

type Db = Pick<pg.Pool, 'query'>;

// One refresh statement's share of the queue: large enough that a bulk load's terms are grouped into few
// upserts, small enough that one statement stays well under a second.
export const LEXICON_BATCH = 5000;

// A settle's share: one statement per this many queued snippets. A bulk load (a pack import, a large upload)
// queues hundreds of thousands at once, and each statement upserts every distinct word of its batch; words
// shared across batches were upserted once per batch, so in small batches the settle cost several times the
// count itself. Nothing waits on a settle's statements but the settle.
const SETTLE_BATCH = 100_000;

/**
 * Folds queued snippets into the lexicon, `batch` at a time, until the queue is empty, `maxRows` were taken,
 * or another session is refreshing (it will take what is left). Returns how many snippets were folded in.
 */
export async function refreshSearchTerms(db: Db, maxRows = Number.POSITIVE_INFINITY, batch = LEXICON_BATCH): Promise<number> {
  let done = 0;
  while (done < maxRows) {
    const take = Math.min(batch, maxRows - done);
    const { rows } = await db.query<{ consumed: number }>('SELECT refresh_search_terms($1) AS consumed', [take]);
    const consumed = rows[0]?.consumed ?? 0;
    done += consumed;
    if (consumed < take) break;
  }
  return done;
}

// Page writers fold the queue in at most this often per pool. Every refresh rewrites the row of each word it
// touches (and that row's trigram index entries), so a common word refreshed after every page of a fast crawl
// was rewritten hundreds of times a second; once a second, a batch of pages costs each word one rewrite.
const WRITER_REFRESH_INTERVAL_MS = 1000;

interface WriterState {
  last: number;
  trailing: NodeJS.Timeout | null;
}
const writers = new WeakMap<pg.Pool, WriterState>();

/**
 * For the index-upkeep stage (core/pipeline/index-upkeep.ts), after a page commits: folds the queue in now
 * when the last refresh on this pool is a second old, otherwise once that second is up (a timer that does not
 * keep the process alive), so the lexicon trails the writes by about a second. Never throws: what is not folded in stays queued for the next
 * refresh, and a search folds it in before calling a word a typo.
 */
export async function refreshSearchTermsAfterWrite(pool: pg.Pool): Promise<void> {
  let state = writers.get(pool);
  if (!state) {
    state = { last: 0, trailing: null };
    writers.set(pool, state);
  }
  const wait = state.last + WRITER_REFRESH_INTERVAL_MS - Date.now();
  if (wait > 0) {
    if (state.trailing === null) {
      const s = state;
      s.trailing = setTimeout(() => {
        s.trailing = null;
        void refreshSearchTermsAfterWrite(pool);
      }, wait);
      s.trailing.unref();
    }
    return;
  }
  state.last = Date.now();
  await refreshSearchTerms(pool, LEXICON_BATCH * 10).catch(() => 0);
}

/**
 * Folds the whole queue in now, in place of this pool's trailing refresh: for a crawl that has stored its last
 * page, so the searches that follow its completion see every word it wrote (a search's own fold is bounded,
 * and word counts steer typo corrections). Waits, bounded, while another session holds the refresh. Never
 * throws.
 */
export async function refreshSearchTermsNow(pool: pg.Pool, waitMs = 5000): Promise<void> {
  const state = writers.get(pool);
  if (state?.trailing) {
    clearTimeout(state.trailing);
    state.trailing = null;
  }
  const deadline = Date.now() + waitMs;
  try {
    for (;;) {
      await refreshSearchTerms(pool, Number.POSITIVE_INFINITY, SETTLE_BATCH);
      const { rows } = await pool.query<{ queued: boolean }>('SELECT EXISTS (SELECT 1 FROM search_terms_queue) AS queued');
      if (rows[0]?.queued !== true || Date.now() >= deadline) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } catch {
    // What is left stays queued for the next refresh, as after any write.
  }
}

/** For writers that stop: a fold this pool has waiting (or skipped for another session's), now. */
export async function refreshWaitingSearchTerms(pool: pg.Pool): Promise<void> {
  if (writers.has(pool)) await refreshSearchTermsNow(pool, 2000);
}
