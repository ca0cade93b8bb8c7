import type pg from 'pg';

/**
 * Upkeep of the typo-correction lexicon (search_terms). Snippet writes only queue their ids (migrations/010);
 * this folds the queue into the lexicon, outside the writers' transactions, one session at a time.
 */

type Db = Pick<pg.Pool, 'query'>;

// One refresh statement's share of the queue: large enough that a bulk load's terms are grouped into few
// upserts, small enough that one statement stays well under a second.
export const LEXICON_BATCH = 5000;

/**
 * Folds queued snippets into the lexicon, batch after batch, until the queue is empty, `maxRows` were taken,
 * or another session is refreshing (it will take what is left). Returns how many snippets were folded in.
 */
export async function refreshSearchTerms(db: Db, maxRows = Number.POSITIVE_INFINITY): Promise<number> {
  let done = 0;
  while (done < maxRows) {
    const take = Math.min(LEXICON_BATCH, maxRows - done);
    const { rows } = await db.query<{ consumed: number }>('SELECT refresh_search_terms($1) AS consumed', [take]);
    const consumed = rows[0]?.consumed ?? 0;
    done += consumed;
    if (consumed < take) break;
  }
  return done;
}
