-- The typo-correction lexicon keeps words only, and indexes only the words worth correcting to.

-- Only alphabetic lexemes of 3 to 32 letters: corrections are made to words, and dotted or numbered tokens
-- (`json.dumps`, `utf8`, hashes) are mostly one-offs that grew the lexicon with every snippet written. Their
-- parts are in the search vector as words anyway (identifier splitting). The triggers of 002 call this.
CREATE OR REPLACE FUNCTION search_vector_terms(v tsvector) RETURNS SETOF text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT w FROM unnest(tsvector_to_array(v)) AS w WHERE length(w) BETWEEN 3 AND 32 AND w ~ '^[a-z]+$'
$$;
DELETE FROM search_terms WHERE term !~ '^[a-z]+$';

-- Distance-2 corrections look words up by trigram similarity. A word seen in one snippet only is a poor
-- correction target, and such words are most of a large lexicon (generated names), so only words seen twice or
-- more are in the trigram index: it stays small and cheap to keep up as snippets are written.
DROP INDEX search_terms_trgm;
CREATE INDEX search_terms_trgm ON search_terms USING gin (term gin_trgm_ops) WHERE doc_count >= 2;
