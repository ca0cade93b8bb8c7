-- LLM enhancement: how sure language detection was, and a cache of model answers.

-- How unsure language detection was: 'detected' (by the content rules) or 'unknown', recorded by an onPageWrite
-- hook (src/core/llm/language-confidence.ts) in the page's own transaction; 'llm' once the model chose the
-- language. NULL means the language was declared by the page or taken from a filename (or the row predates
-- this column): only unsure rows are written twice, which keeps a large crawl's extra row versions small.
ALTER TABLE snippets ADD COLUMN language_confidence text
  CHECK (language_confidence IN ('declared', 'filename', 'detected', 'unknown', 'llm'));

-- One validated answer per piece of code, so a recrawl of unchanged code, or the same code on another page or in
-- another source, costs no call. Keyed by model and prompt version: a new model or prompt asks again.
-- result: {language, title, description, relationships: [{target_hash, type, description}]} where each field may
-- be null when the model's value failed validation (the heuristic value is kept then).
CREATE TABLE llm_cache (
  code_hash       text NOT NULL,
  model           text NOT NULL,
  prompt_version  integer NOT NULL,
  result          jsonb NOT NULL,
  -- The share of the call's tokens attributed to this snippet: what a cache hit saved.
  tokens          integer NOT NULL DEFAULT 0,
  hits            integer NOT NULL DEFAULT 0,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (code_hash, model, prompt_version)
);
