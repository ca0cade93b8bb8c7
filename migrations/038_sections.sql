-- Sections (issue 50): every heading-bounded section of a page, its prose with the code blocks it holds, is a
-- search unit beside the snippets. A page without code could not be found, and the answer to a question in plain
-- words is mostly in a section's prose, not in its code. Sections are rows of the snippets table with kind
-- 'section', so they share the search vector, the search index, the lexicon and its queue, the deduplication by
-- content within a source, the occurrences and the page counts, and a search reads one index for both kinds
-- (ARCHITECTURE.md says why, with what a separate table would cost). The snippet listings and the snippet
-- counters read kind = 'snippet' only, so what they return is unchanged; packs carry both kinds.
--
-- A section row: title = its breadcrumb (the page title, the headings above it, its own), code = its markdown
-- (prose and code blocks), description = the plain text of its first prose, language = the most frequent
-- language of its code blocks ('markdown' when it has none), code_hash = 's' || md5 of its heading and text.
ALTER TABLE snippets ADD COLUMN kind text NOT NULL DEFAULT 'snippet' CHECK (kind IN ('snippet', 'section'));

-- Sections are counted apart from snippets: a source's snippet count stays what it always meant, and the
-- lexicon's shares are of every unit (snippet_count + section_count).
ALTER TABLE sources ADD COLUMN section_count integer NOT NULL DEFAULT 0;

-- A section is searchable like a snippet: its breadcrumb as title (A), its prose (B) read as page text is
-- (page_search_words(), migrations 014, 015 and 031: fenced code and link destinations left out, identifiers
-- also as their words), and the code of its blocks (C) read as a snippet's code is. Of the three ways measured
-- (`npm run eval`, the CHANGELOG), prose alone or with the code at weight D ranked the Debian dev queries a
-- little higher, and this one the natural questions over the markdown repositories: peer benchmark MRR named
-- 0.734 (prose) / 0.749 (D) / 0.769 (C), held-out repository questions 0.597 / 0.607 / 0.640, Debian dev
-- queries 0.875 / 0.875 / 0.858. A snippet's vector is unchanged.
--
-- The code of a section's fenced blocks, as page_search_text finds them (the same two fence patterns, without
-- a backreference).
CREATE FUNCTION section_code(markdown text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT COALESCE(string_agg(COALESCE(m[3], '') || COALESCE(m[4], ''), E'\n'), '')
    FROM regexp_matches(markdown, E'(^|\\n){1,1}?(```[^\\n]*\\n(.*?)\\n```|~~~[^\\n]*\\n(.*?)\\n~~~)', 'g') AS m
$$;

ALTER TABLE snippets DROP COLUMN search_vector;
ALTER TABLE snippets ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
  CASE WHEN kind = 'section' THEN
    setweight(to_tsvector('english', snippet_title_words(title)), 'A') ||
    setweight(to_tsvector('english', page_search_words(left(code, 300000))), 'B') ||
    setweight(to_tsvector('english', code_search_text(section_code(left(code, 300000)))), 'C')
  ELSE
    setweight(to_tsvector('english', snippet_title_words(title)), 'A') ||
    setweight(to_tsvector('english', description), 'B') ||
    setweight(to_tsvector('english', code_search_text(code)), 'C')
  END) STORED;
-- As migration 016 left it: the language first, so a search in one language reads only its entries.
CREATE INDEX snippets_search ON snippets USING gin (language, search_vector) WITH (gin_pending_list_limit = 512);

-- The rewritten column fired no trigger, so the lexicon is counted again from the rows as they now stand (as
-- migration 032 did); every queued change is in that count.
TRUNCATE search_terms_queue;
TRUNCATE search_terms;
INSERT INTO search_terms (term, doc_count, code_count)
SELECT a.word, a.ndoc, COALESCE(c.ndoc, 0)
  FROM ts_stat('SELECT search_vector FROM snippets') AS a
  LEFT JOIN ts_stat('SELECT search_vector FROM snippets', 'c') AS c ON c.word = a.word
 WHERE is_lexicon_word(a.word)
 ORDER BY a.word;

-- Planner statistics for the rewritten column (see migration 032).
ANALYZE snippets;
