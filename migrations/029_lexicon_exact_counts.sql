-- The lexicon's word counts stay exact: snippets that are deleted or whose text changes take their words out
-- again, through the same queue as new snippets (010), and the lexicon is recounted once.

-- doc_count only grew: a recrawled page's replaced snippets, a deleted source's, a pruned pack's kept their
-- counts, and the 002 update trigger added the words of every rewritten title (an LLM enhancement, a snippet
-- moving to a more specific page) again without taking the old ones out. The counts steer the search plan (a
-- word's share of all snippets) and typo correction, so the same docs searched differently crawled than
-- imported. That trigger also upserted search_terms inside the writer's transaction, the row contention 010
-- removed from inserts.
DROP TRIGGER snippets_search_terms_update ON snippets;
DROP FUNCTION search_terms_after_update();

-- A queue entry is either a new snippet (sign NULL: count its words as stored when the refresh runs) or a
-- change (sign -1 or +1: take the words of `words` out of, or add them to, the lexicon). A change carries its
-- words because a deleted snippet is gone by the time the refresh runs; as the snippet's vector stripped of
-- positions, which costs the writer a copy (picking the lexicon's words out of every deleted vector cost a
-- deleted source's transaction far more) and is counted by ts_stat like new snippets. New snippets stay one
-- id each, as before, so bulk loads write no more than they did.
ALTER TABLE search_terms_queue ADD COLUMN sign smallint, ADD COLUMN words tsvector;
-- A refresh that counts a new snippet drops the snippet's queued changes by id (see refresh_search_terms);
-- only changes are indexed, so new snippets' entries cost no index upkeep.
CREATE INDEX search_terms_queue_changes ON search_terms_queue (snippet_id) WHERE sign IS NOT NULL;

CREATE FUNCTION search_terms_dequeue_deleted() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO search_terms_queue (snippet_id, sign, words)
  SELECT o.id, -1, strip(o.search_vector) FROM old_snippets o;
  RETURN NULL;
END
$$;

-- An update queues the old words out and the new ones in; the words both hold cancel out in the refresh.
-- Most updates (page_count upkeep on every page write) change no text and queue nothing.
CREATE FUNCTION search_terms_enqueue_changed() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO search_terms_queue (snippet_id, sign, words)
  SELECT n.id, d.sign, d.words
    FROM new_snippets n
    JOIN old_snippets o ON o.id = n.id AND o.search_vector IS DISTINCT FROM n.search_vector,
    LATERAL (VALUES (-1::smallint, strip(o.search_vector)), (1::smallint, strip(n.search_vector))) AS d(sign, words);
  RETURN NULL;
END
$$;

-- ON DELETE CASCADE from documents and sources deletes snippets through statements of their own, so these
-- fire for those too.
CREATE TRIGGER snippets_search_terms_dequeue AFTER DELETE ON snippets
  REFERENCING OLD TABLE AS old_snippets
  FOR EACH STATEMENT EXECUTE FUNCTION search_terms_dequeue_deleted();

CREATE TRIGGER snippets_search_terms_change AFTER UPDATE ON snippets
  REFERENCING OLD TABLE AS old_snippets NEW TABLE AS new_snippets
  FOR EACH STATEMENT EXECUTE FUNCTION search_terms_enqueue_changed();

-- Folds up to max_rows queue entries into the lexicon, one caller at a time (the advisory lock, as in 010);
-- words whose count reaches 0 leave it. A new snippet is counted as stored when its entry is folded in, so
-- its changes queued before then are already in that count, and are dropped:
--  * changes in the batch whose snippet still has its new-snippet entry queued (in the batch or not): that
--    entry counts the snippet as it is when folded in (nothing, if it was deleted meanwhile);
--  * changes queued anywhere for the snippets counted now, in the same statement as the count, so both see
--    one snapshot: a change that commits after it is the snippet changing after it was counted, and is folded
--    in by a later refresh.
-- Only refreshers delete queue entries, and a snippet's change always commits after its new-snippet entry, so
-- which new-snippet entries are still queued does not move under a refresh.
CREATE OR REPLACE FUNCTION refresh_search_terms(max_rows integer) RETURNS integer
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  batch tid[];
  changed bigint[];
  uncounted bigint[] := '{}';
  emptied text[];
BEGIN
  IF NOT pg_try_advisory_xact_lock(hashtext('docdex.search_terms_queue')) THEN
    RETURN 0;
  END IF;
  batch := ARRAY(SELECT ctid FROM search_terms_queue LIMIT max_rows);
  IF cardinality(batch) = 0 THEN
    RETURN 0;
  END IF;
  changed := ARRAY(SELECT DISTINCT c.snippet_id FROM search_terms_queue c WHERE c.ctid = ANY (batch) AND c.sign IS NOT NULL);
  -- New-snippet entries are not indexed (bulk loads would pay for it): this reads the queue, but only for a
  -- batch that holds changes.
  IF cardinality(changed) > 0 THEN
    uncounted := ARRAY(SELECT DISTINCT q.snippet_id FROM search_terms_queue q WHERE q.sign IS NULL AND q.snippet_id = ANY (changed));
  END IF;
  WITH taken AS (
    DELETE FROM search_terms_queue q WHERE q.ctid = ANY (batch)
    RETURNING q.snippet_id, q.sign
  ), counted AS (
    SELECT array_agg(snippet_id) AS ids FROM taken WHERE sign IS NULL
  ), superseded AS (
    DELETE FROM search_terms_queue q USING counted
     WHERE q.sign IS NOT NULL AND q.snippet_id = ANY (counted.ids)
  ), deltas AS (
    -- ts_stat takes its rows as query text and reads them in this statement's snapshot (the batch's entries
    -- are still there); the ids and entries go in as array literals. Snippets deleted before their turn are
    -- simply not found.
    SELECT word AS term, ndoc::bigint AS n
      FROM counted, ts_stat(format('SELECT search_vector FROM snippets WHERE id = ANY (%L::bigint[])', counted.ids))
     WHERE counted.ids IS NOT NULL AND is_lexicon_word(word)
    UNION ALL
    SELECT word, (ndoc * s.sign)::bigint
      FROM (VALUES (-1), (1)) AS s(sign),
           ts_stat(CASE WHEN cardinality(changed) > 0
                   THEN format('SELECT words FROM search_terms_queue WHERE ctid = ANY (%L::tid[]) AND sign = %s AND snippet_id <> ALL (%L::bigint[])', batch, s.sign, uncounted)
                   ELSE 'SELECT NULL::tsvector WHERE false' END)
     WHERE is_lexicon_word(word)
  ), upserted AS (
    INSERT INTO search_terms (term, doc_count)
    SELECT term, sum(n)::int FROM deltas GROUP BY term HAVING sum(n) <> 0 ORDER BY term
    ON CONFLICT (term) DO UPDATE SET doc_count = search_terms.doc_count + EXCLUDED.doc_count
    RETURNING term, doc_count
  )
  SELECT array_agg(term) FILTER (WHERE doc_count <= 0) INTO emptied FROM upserted;
  IF emptied IS NOT NULL THEN
    DELETE FROM search_terms WHERE term = ANY (emptied) AND doc_count <= 0;
  END IF;
  RETURN cardinality(batch);
END
$$;

-- Recount once from the stored snippets: existing lexicons have drifted. What is queued is in the count.
TRUNCATE search_terms_queue;
TRUNCATE search_terms;
INSERT INTO search_terms (term, doc_count)
SELECT word, ndoc FROM ts_stat('SELECT search_vector FROM snippets') WHERE is_lexicon_word(word) ORDER BY word;
