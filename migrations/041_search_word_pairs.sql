-- A quoted phrase is found through the pairs of words it is made of (issue 52). The search index over a
-- tsvector keeps no word positions, so a phrase (`"time client"`, 'time' <-> 'client') was answered by fetching
-- every row holding both words and checking their adjacency on each: at a million snippets, 30,000 heap blocks
-- of rows that held both words apart to find 669 that held them side by side, 420 of the query's 439 ms. Each
-- row's adjacent lexeme pairs, read from its search vector's own positions, are indexed here: a phrase reads
-- the entries of its pairs, which list the rows that hold them next to each other, and the phrase is still
-- checked on each row found (search.ts tierCtes), so the pairs only narrow which rows are fetched.
--
-- search_pairs: a vector's pairs of lexemes at adjacent positions, each as one of 2^18 keys (the low 18 bits of
-- hashtext of 'first second'). A phrase `a <-> b` matches a vector exactly when some position of a is followed
-- by one of b, which is what is listed; pairs sharing a key only let a row through to the check. Nearly every
-- pair is a key of its own otherwise, and an index of one entry per pair per row was 3.7 times the search
-- index's size (173 MB for the sections of the 100,000-snippet bench, 54 MB in 2^18 keys), every write adding
-- to it; in 2^18 keys a row of 64 pairs (the bench's mean) shares a key with a given pair at about 1 in 4,000,
-- some 270 rows of a million checked in vain. hashtext is the hash of text's hash index class, whose values an
-- upgrade keeps (pg_upgrade keeps hash indexes). Only pg_catalog functions are called: maintenance (ANALYZE,
-- REINDEX, autovacuum) evaluates an index expression with no other schema on the path.
CREATE FUNCTION search_pairs(v tsvector) RETURNS integer[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
  SELECT COALESCE(array_agg(DISTINCT pg_catalog.hashtext(a.lexeme || ' ' || b.lexeme) & 262143), '{}')
    FROM (SELECT u.lexeme, p FROM pg_catalog.unnest(v) AS u, pg_catalog.unnest(u.positions) AS p) AS a
    JOIN (SELECT u.lexeme, p FROM pg_catalog.unnest(v) AS u, pg_catalog.unnest(u.positions) AS p) AS b ON b.p = a.p + 1
$$;

-- The pairs a search looks for: of each text (two words of a phrase, as the query holds them), the pairs its
-- own vector holds, parsed and stemmed as a row's text is. Immutable, so a search planned for its values gets
-- them as a constant the planner can estimate from the index's statistics.
CREATE FUNCTION search_pair_keys(texts text[]) RETURNS integer[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
  SELECT COALESCE(array_agg(DISTINCT k), '{}')
    FROM unnest(texts) AS t, unnest(search_pairs(to_tsvector('english', t))) AS k
$$;

-- One per unit kind, as the search index is (migration 040): each tier reads each kind apart.
CREATE INDEX snippets_search_pairs ON snippets USING gin (search_pairs(search_vector)) WHERE kind = 'snippet';
CREATE INDEX snippets_search_pairs_sections ON snippets USING gin (search_pairs(search_vector)) WHERE kind = 'section';

-- Statistics of the index expressions, so a phrase's pairs are estimated as rare as they are.
ANALYZE snippets;
