-- The identifiers in snippet titles, split into their words. An API reference names each section by what it
-- documents (`url.searchParams`, `loop.run_in_executor(executor, func, *args)`, `new URLSearchParams(string)`),
-- which the parser reads as one host-like lexeme or one word, so a question in words ("read its search params",
-- "run a blocking function without freezing the event loop") met the section's code but never its title, the
-- strongest place a word can be. Page prose got the same treatment in migration 031.
--
-- Only the member is split, not the object before it: `request.reusedSocket` adds "reused socket", not
-- "request", or every member of a class would have the class's name in its title and a query naming the class
-- would match them all; the page title says it already. A name without a dot is split only when it is made of
-- words (`readFileSync`, `spawn_blocking`), so a plain word is not counted twice. The whole title stays.
-- Measured with `npm run eval` on the real Python, PostgreSQL and Node docs, in the CHANGELOG.
CREATE FUNCTION snippet_title_words(title text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT title || ' ' || COALESCE(string_agg(
           regexp_replace(
             regexp_replace(
               regexp_replace(m[2], '([a-z0-9])([A-Z])', '\1 \2', 'g'),
               '([A-Z]+)([A-Z][a-z])', '\1 \2', 'g'),
             '[_$]+', ' ', 'g'),
           ' '), '')
    FROM regexp_matches(title, '((?:[A-Za-z_$][A-Za-z0-9_$]*(?:\.|::))*)([A-Za-z_$][A-Za-z0-9_$]*)', 'g') AS m
   WHERE m[1] <> '' OR m[2] ~ '[a-z0-9][A-Z]|[A-Za-z0-9]_[A-Za-z0-9]'
$$;

ALTER TABLE snippets DROP COLUMN search_vector;
ALTER TABLE snippets ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
  setweight(to_tsvector('english', snippet_title_words(title)), 'A') ||
  setweight(to_tsvector('english', description), 'B') ||
  setweight(to_tsvector('english', code_search_text(code)), 'C')) STORED;
-- As migration 016 left it: the language first, so a search in one language reads only its entries.
CREATE INDEX snippets_search ON snippets USING gin (language, search_vector) WITH (gin_pending_list_limit = 512);

-- The rewritten column fired no trigger, so the lexicon is counted again from the snippets as they now stand
-- (as migration 029 did); every queued change is in that count.
TRUNCATE search_terms_queue;
TRUNCATE search_terms;
INSERT INTO search_terms (term, doc_count, code_count)
SELECT a.word, a.ndoc, COALESCE(c.ndoc, 0)
  FROM ts_stat('SELECT search_vector FROM snippets') AS a
  LEFT JOIN ts_stat('SELECT search_vector FROM snippets', 'c') AS c ON c.word = a.word
 WHERE is_lexicon_word(a.word)
 ORDER BY a.word;

-- The rewritten column has no planner statistics until an autovacuum happens to analyse the table, and the
-- rewrite counts as no modification towards one; without them a search's tiers are planned on default
-- selectivities.
ANALYZE snippets;
