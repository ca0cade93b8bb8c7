-- The typo lexicon is kept current from a queue instead of inside every writer's transaction, and an unused
-- index goes.

-- Nothing searches snippet titles by trigram (typo correction uses the lexicon; source names have their own
-- lookups), yet keeping this index cost a third of the snippet write rate.
DROP INDEX IF EXISTS snippets_title_trgm;

-- Upserting a page's terms into search_terms in the page's own transaction made every concurrent page write
-- wait on the row locks of the common words ("function", "return") until the other committed, and cost a third
-- of a bulk load's time. Writers now only append the new snippet ids here; refresh_search_terms() folds them into
-- the lexicon in large, sorted batches, one caller at a time. A queued id becomes visible exactly when its
-- snippet commits, so no snippet is missed (a watermark on ids would skip ones that commit out of order).
CREATE TABLE search_terms_queue (snippet_id bigint NOT NULL);

DROP TRIGGER snippets_search_terms_insert ON snippets;
DROP FUNCTION search_terms_after_insert();

CREATE FUNCTION search_terms_enqueue() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO search_terms_queue (snippet_id) SELECT id FROM new_snippets;
  RETURN NULL;
END
$$;

CREATE TRIGGER snippets_search_terms_enqueue AFTER INSERT ON snippets
  REFERENCING NEW TABLE AS new_snippets
  FOR EACH STATEMENT EXECUTE FUNCTION search_terms_enqueue();

-- Folds up to max_rows queued snippets into the lexicon; returns how many queue entries it consumed (0 when
-- the queue is empty or another session is refreshing). The transaction-level advisory lock serialises
-- refreshers, so the upsert never waits on another refresher's term rows; snippets deleted before their turn
-- simply contribute nothing. The lock lasts until the caller's transaction ends: call it on its own.
CREATE FUNCTION refresh_search_terms(max_rows integer) RETURNS integer
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  consumed integer;
BEGIN
  IF NOT pg_try_advisory_xact_lock(hashtext('docdex.search_terms_queue')) THEN
    RETURN 0;
  END IF;
  WITH taken AS (
    DELETE FROM search_terms_queue q
     WHERE q.ctid = ANY (ARRAY(SELECT ctid FROM search_terms_queue LIMIT max_rows))
    RETURNING q.snippet_id
  ), upsert AS (
    INSERT INTO search_terms (term, doc_count)
    SELECT w, count(*)::int
      FROM snippets s JOIN taken t ON t.snippet_id = s.id, LATERAL search_vector_terms(s.search_vector) AS w
     GROUP BY w
     ORDER BY w
    ON CONFLICT (term) DO UPDATE SET doc_count = search_terms.doc_count + EXCLUDED.doc_count
  )
  SELECT count(*)::int INTO consumed FROM taken;
  RETURN consumed;
END
$$;

-- Snippets already stored before this migration are in the lexicon through the old trigger; nothing to queue.
