-- The lexicon also counts, for each word, the snippets whose code holds it (weight C of the search vector).
-- A word's share of its snippets in which it is code tells a word that names code ("finally", "listen",
-- "json") from one the prose uses around code ("handle", "keep", "values"): the search weighs each query
-- term's coverage by it (search/codeness.ts).

ALTER TABLE search_terms ADD COLUMN code_count integer NOT NULL DEFAULT 0;

-- A change entry carries the code words of the vector too: `words` is stripped of weights.
ALTER TABLE search_terms_queue ADD COLUMN code_words tsvector;

CREATE OR REPLACE FUNCTION search_terms_dequeue_deleted() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO search_terms_queue (snippet_id, sign, words, code_words)
  SELECT o.id, -1, strip(o.search_vector), strip(ts_filter(o.search_vector, '{c}')) FROM old_snippets o;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION search_terms_enqueue_changed() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO search_terms_queue (snippet_id, sign, words, code_words)
  SELECT n.id, d.sign, d.words, d.code_words
    FROM new_snippets n
    JOIN old_snippets o ON o.id = n.id AND o.search_vector IS DISTINCT FROM n.search_vector,
    LATERAL (VALUES (-1::smallint, strip(o.search_vector), strip(ts_filter(o.search_vector, '{c}'))),
                    (1::smallint, strip(n.search_vector), strip(ts_filter(n.search_vector, '{c}')))) AS d(sign, words, code_words);
  RETURN NULL;
END
$$;

-- As in 029, with each delta's code count beside its count: ts_stat with weights 'c' counts the snippets whose
-- vector holds the word at weight C, and a change's code words are counted like its words.
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
    SELECT word AS term, ndoc::bigint AS n, 0::bigint AS c
      FROM counted, ts_stat(format('SELECT search_vector FROM snippets WHERE id = ANY (%L::bigint[])', counted.ids))
     WHERE counted.ids IS NOT NULL AND is_lexicon_word(word)
    UNION ALL
    SELECT word, 0, ndoc::bigint
      FROM counted, ts_stat(format('SELECT search_vector FROM snippets WHERE id = ANY (%L::bigint[])', counted.ids), 'c')
     WHERE counted.ids IS NOT NULL AND is_lexicon_word(word)
    UNION ALL
    SELECT word, (ndoc * s.sign)::bigint, 0
      FROM (VALUES (-1), (1)) AS s(sign),
           ts_stat(CASE WHEN cardinality(changed) > 0
                   THEN format('SELECT words FROM search_terms_queue WHERE ctid = ANY (%L::tid[]) AND sign = %s AND snippet_id <> ALL (%L::bigint[])', batch, s.sign, uncounted)
                   ELSE 'SELECT NULL::tsvector WHERE false' END)
     WHERE is_lexicon_word(word)
    UNION ALL
    -- Entries queued before this migration have no code words: the recount below already counts their
    -- snippets' code as it stands.
    SELECT word, 0, (ndoc * s.sign)::bigint
      FROM (VALUES (-1), (1)) AS s(sign),
           ts_stat(CASE WHEN cardinality(changed) > 0
                   THEN format('SELECT code_words FROM search_terms_queue WHERE ctid = ANY (%L::tid[]) AND sign = %s AND snippet_id <> ALL (%L::bigint[]) AND code_words IS NOT NULL', batch, s.sign, uncounted)
                   ELSE 'SELECT NULL::tsvector WHERE false' END)
     WHERE is_lexicon_word(word)
  ), upserted AS (
    INSERT INTO search_terms (term, doc_count, code_count)
    SELECT term, sum(n)::int, sum(c)::int FROM deltas GROUP BY term HAVING sum(n) <> 0 OR sum(c) <> 0 ORDER BY term
    ON CONFLICT (term) DO UPDATE SET doc_count = search_terms.doc_count + EXCLUDED.doc_count,
                                     code_count = search_terms.code_count + EXCLUDED.code_count
    RETURNING term, doc_count
  )
  SELECT array_agg(term) FILTER (WHERE doc_count <= 0) INTO emptied FROM upserted;
  IF emptied IS NOT NULL THEN
    DELETE FROM search_terms WHERE term = ANY (emptied) AND doc_count <= 0;
  END IF;
  RETURN cardinality(batch);
END
$$;

-- Count the code words of the stored snippets once, as they stand. A queued new snippet is left out: the refresh
-- counts it, code included. A queued change needs nothing more: its code is counted here as it stands, and its
-- entry, having no code words, adds no code delta. A word only a queued change brings is not in the lexicon yet:
-- it comes in with its code count, and its count arrives with the change's delta.
INSERT INTO search_terms (term, doc_count, code_count)
SELECT c.word, 0, c.ndoc
  FROM ts_stat('SELECT search_vector FROM snippets s WHERE NOT EXISTS (SELECT 1 FROM search_terms_queue q WHERE q.snippet_id = s.id AND q.sign IS NULL)', 'c') AS c
 WHERE is_lexicon_word(c.word)
 ORDER BY c.word
ON CONFLICT (term) DO UPDATE SET code_count = EXCLUDED.code_count;
