-- Identifiers in page prose, split into their words as code is (code_search_text, migrations/002). The
-- parser reads `AbortSignal.timeout(delay)`, `import.meta.url` and `logging.FileHandler` as one host-like
-- lexeme each, and `readFileSync` or `UnicodeDecodeError` as one word, so a question asking to "abort a fetch
-- request after a timeout" never met Node's globals page, whose only "timeout" is in `AbortSignal.timeout`.
-- The page vector now holds those words too (the whole identifiers stay), as the snippets' code vectors do;
-- queries already match an identifier whole or by its parts (core/search/query.ts).
--
-- Only identifiers are split, not the whole text again: a second copy of every page would double the vector
-- and its length, which the page rank divides by. Measured with `npm run eval` on the real Python, PostgreSQL
-- and Node docs, and the recomputation cost on them, in the CHANGELOG.
CREATE FUNCTION prose_identifier_parts(prose text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  -- An identifier: names joined by `.` or `::` (`os.path.join`, `tokio::spawn`), or one name with an inner
  -- capital (`readFileSync`, `UnicodeDecodeError`). Its parts as code_search_text cuts them.
  SELECT COALESCE(string_agg(
           regexp_replace(
             regexp_replace(
               regexp_replace(m[1], '([a-z0-9])([A-Z])', '\1 \2', 'g'),
               '([A-Z]+)([A-Z][a-z])', '\1 \2', 'g'),
             '[._:$]+', ' ', 'g'),
           ' '), '')
    FROM regexp_matches(prose,
           '([A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::)[A-Za-z_$][A-Za-z0-9_$]*)+|[a-z]+[A-Z][A-Za-z0-9_$]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9_$]*)',
           'g') AS m
$$;

-- The words a page is found by: its prose (page_search_text, migrations/015), then its identifiers' parts.
CREATE FUNCTION page_search_words(markdown text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT t || ' ' || prose_identifier_parts(t) FROM page_search_text(markdown) AS t
$$;

ALTER TABLE documents DROP COLUMN search_vector;
-- Truncated as before: a tsvector is capped at 1 MB.
ALTER TABLE documents ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
  setweight(to_tsvector('english', left(title, 1000)), 'A') ||
  setweight(to_tsvector('english', page_search_words(left(markdown, 300000))), 'D')) STORED;
CREATE INDEX documents_search ON documents USING gin (search_vector) WITH (gin_pending_list_limit = 512);
