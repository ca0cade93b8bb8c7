-- Search lexicon upkeep, identifier splitting inside markup, and upload file bodies.

-- The text-search parser reads `<QuokkaWidget size="x" />` and `<div>` as markup tags and drops them, so JSX,
-- HTML and XML snippets could not be found by their element names. The split copy now also breaks on `<` and
-- `>`, which turns tags into plain words there (the verbatim copy is unchanged). Rows already stored are
-- recomputed below; only ones containing angle brackets can differ.
CREATE OR REPLACE FUNCTION code_search_text(code text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT left(code, 200000) || ' ' ||
    regexp_replace(
      regexp_replace(
        regexp_replace(left(code, 200000), '([a-z0-9])([A-Z])', '\1 \2', 'g'),
        '([A-Z]+)([A-Z][a-z])', '\1 \2', 'g'),
      '[._:$@#/\\<>-]+', ' ', 'g')
$$;
UPDATE snippets SET code = code WHERE strpos(code, '<') > 0 OR strpos(code, '>') > 0;

-- The terms a snippet contributes to the typo-correction lexicon: the lexemes of its search vector (title,
-- description and identifier-split code, stemmed), which the database has already computed, so keeping the
-- lexicon costs no second parse of the text. Query words are checked in the same stemmed form. Very short or
-- very long lexemes and ones starting with a digit (numbers, hashes) are not words anyone misspells.
CREATE FUNCTION search_vector_terms(v tsvector) RETURNS SETOF text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT w FROM unnest(tsvector_to_array(v)) AS w WHERE length(w) BETWEEN 3 AND 32 AND left(w, 1) >= 'a'
$$;

-- Statement-level triggers with transition tables keep the lexicon current for every writer (crawler,
-- uploads, bulk loads) in the writer's own transaction, at one grouped upsert per statement rather than one
-- per row. Terms are upserted in sorted order so concurrent page writes lock them in the same order and
-- cannot deadlock. doc_count only grows (deleted snippets do not decrement it): it ranks corrections, where
-- an overcount is harmless. SET search_path FROM CURRENT pins the docdex schema for any caller.
CREATE FUNCTION search_terms_after_insert() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO search_terms (term, doc_count)
  SELECT w, count(*)::int
    FROM new_snippets n, LATERAL search_vector_terms(n.search_vector) AS w
   GROUP BY w
   ORDER BY w
  ON CONFLICT (term) DO UPDATE SET doc_count = search_terms.doc_count + EXCLUDED.doc_count;
  RETURN NULL;
END
$$;

-- LLM enhancement rewrites titles and descriptions; their new words must become correctable too. Updates that
-- leave both unchanged (page_count upkeep on every page write) contribute nothing.
CREATE FUNCTION search_terms_after_update() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO search_terms (term, doc_count)
  SELECT w, count(*)::int
    FROM new_snippets n
    JOIN old_snippets o ON o.id = n.id
    , LATERAL search_vector_terms(n.search_vector) AS w
   WHERE o.title IS DISTINCT FROM n.title OR o.description IS DISTINCT FROM n.description
   GROUP BY w
   ORDER BY w
  ON CONFLICT (term) DO UPDATE SET doc_count = search_terms.doc_count + EXCLUDED.doc_count;
  RETURN NULL;
END
$$;

CREATE TRIGGER snippets_search_terms_insert AFTER INSERT ON snippets
  REFERENCING NEW TABLE AS new_snippets
  FOR EACH STATEMENT EXECUTE FUNCTION search_terms_after_insert();

CREATE TRIGGER snippets_search_terms_update AFTER UPDATE ON snippets
  REFERENCING OLD TABLE AS old_snippets NEW TABLE AS new_snippets
  FOR EACH STATEMENT EXECUTE FUNCTION search_terms_after_update();

-- The page title as its own small vector: a query word in the title of the page a snippet comes from says the
-- whole page is about it (`json — JSON encoder and decoder`), a stronger sign than the word in a section
-- heading. Stored, because ranking reads it for every candidate.
ALTER TABLE documents ADD COLUMN title_vector tsvector GENERATED ALWAYS AS (to_tsvector('english', left(title, 1000))) STORED;

-- Upload bodies live in the database, written in the same transaction as their job and its queue entries, so a
-- worker on any machine can process them and a crash between "accepted" and "queued" leaves nothing behind.
-- content is cleared once the file is processed; the row stays as the per-file record (status, error).
CREATE TABLE upload_files (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  job_id      uuid NOT NULL REFERENCES upload_jobs (id) ON DELETE CASCADE,
  -- As the user named it: relative to the uploaded directory, or the file name.
  path        text NOT NULL,
  -- The document URL the file is stored under (snippet source_url is this plus an anchor).
  url         text NOT NULL,
  content     text,
  size_bytes  integer NOT NULL DEFAULT 0,
  status      text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed')),
  snippets    integer NOT NULL DEFAULT 0,
  error       text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (job_id, path),
  UNIQUE (job_id, url)
);
CREATE INDEX upload_files_job_status ON upload_files (job_id, status);
-- Files of unsupported formats met in uploaded directories: reported with the job, not part of it.
ALTER TABLE upload_jobs ADD COLUMN skipped_files jsonb NOT NULL DEFAULT '[]';
CREATE INDEX upload_jobs_source ON upload_jobs (source_id, created_at DESC);
