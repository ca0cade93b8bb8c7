-- docdex: the documentation code index.
-- Everything lives in the docdex schema (created by the migration runner); pg-boss keeps its own schema.

CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;

-- Splits identifiers so that `json.dumps`, `readFileSync` and `tokio::spawn` also match `dumps`,
-- `read file sync` and `spawn`. The whole identifiers stay in the text too, so exact queries keep matching.
-- IMMUTABLE because the snippets' generated search vector calls it.
CREATE FUNCTION code_search_text(code text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT left(code, 200000) || ' ' ||
    regexp_replace(
      regexp_replace(
        regexp_replace(left(code, 200000), '([a-z0-9])([A-Z])', '\1 \2', 'g'),
        '([A-Z]+)([A-Z][a-z])', '\1 \2', 'g'),
      '[._:$@#/\\-]+', ' ', 'g')
$$;

CREATE TABLE sources (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  -- '' means unversioned, so (name, version) can be a plain unique key.
  version         text NOT NULL DEFAULT '',
  description     text NOT NULL DEFAULT '',
  base_url        text,
  kind            text NOT NULL DEFAULT 'crawl' CHECK (kind IN ('crawl', 'upload')),
  -- The stored crawl configuration that recrawl reuses: start_urls, max_depth, domain_filter,
  -- url_patterns, exclude_patterns, max_concurrent_crawls.
  crawl_config    jsonb NOT NULL DEFAULT '{}',
  metadata        jsonb NOT NULL DEFAULT '{}',
  -- Counters kept by the store in the same transaction as the rows they count: listing sources must not
  -- count a million snippets.
  snippet_count   integer NOT NULL DEFAULT 0,
  document_count  integer NOT NULL DEFAULT 0,
  last_crawled_at timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (name, version)
);
CREATE INDEX sources_name_trgm ON sources USING gin (lower(name) gin_trgm_ops);

CREATE TABLE crawl_jobs (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  source_id         uuid NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
  name              text NOT NULL,
  status            text NOT NULL DEFAULT 'queued'
                    CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
  start_urls        text[] NOT NULL,
  max_depth         integer NOT NULL DEFAULT 1 CHECK (max_depth BETWEEN 0 AND 3),
  version           text NOT NULL DEFAULT '',
  domain_filter     text,
  url_patterns      text[] NOT NULL DEFAULT '{}',
  exclude_patterns  text[] NOT NULL DEFAULT '{}',
  max_concurrent    integer NOT NULL DEFAULT 3 CHECK (max_concurrent BETWEEN 1 AND 20),
  metadata          jsonb NOT NULL DEFAULT '{}',
  pages_found       integer NOT NULL DEFAULT 0,
  pages_crawled     integer NOT NULL DEFAULT 0,
  pages_skipped     integer NOT NULL DEFAULT 0,
  pages_failed      integer NOT NULL DEFAULT 0,
  snippets_stored   integer NOT NULL DEFAULT 0,
  current_url       text,
  error             text,
  llm_calls         integer NOT NULL DEFAULT 0,
  llm_tokens        integer NOT NULL DEFAULT 0,
  created_at        timestamptz NOT NULL DEFAULT now(),
  started_at        timestamptz,
  completed_at      timestamptz,
  heartbeat_at      timestamptz,
  updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX crawl_jobs_source ON crawl_jobs (source_id, created_at DESC);
CREATE INDEX crawl_jobs_status ON crawl_jobs (status) WHERE status IN ('queued', 'running');

-- The crawl frontier lives in PostgreSQL so a crawl survives any crash of any worker.
CREATE TABLE crawl_frontier (
  job_id          uuid NOT NULL REFERENCES crawl_jobs (id) ON DELETE CASCADE,
  url             text NOT NULL,
  depth           integer NOT NULL CHECK (depth BETWEEN 0 AND 3),
  status          text NOT NULL DEFAULT 'pending'
                  CHECK (status IN ('pending', 'fetching', 'done', 'unchanged', 'skipped', 'failed')),
  attempts        integer NOT NULL DEFAULT 0,
  last_error      text,
  http_status     integer,
  content_hash    text,
  etag            text,
  last_modified   text,
  discovered_from text,
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (job_id, url)
);
CREATE INDEX crawl_frontier_status ON crawl_frontier (job_id, status);

CREATE TABLE upload_jobs (
  id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name               text NOT NULL,
  source_type        varchar(20) NOT NULL DEFAULT 'upload',
  source_id          uuid REFERENCES sources (id) ON DELETE CASCADE,
  file_count         integer NOT NULL DEFAULT 0,
  status             varchar(20) NOT NULL DEFAULT 'queued'
                     CHECK (status IN ('queued', 'processing', 'completed', 'failed')),
  processed_files    integer NOT NULL DEFAULT 0,
  failed_files       integer NOT NULL DEFAULT 0,
  snippets_extracted integer NOT NULL DEFAULT 0,
  file_errors        jsonb NOT NULL DEFAULT '[]',
  error              text,
  llm_calls          integer NOT NULL DEFAULT 0,
  llm_tokens         integer NOT NULL DEFAULT 0,
  created_at         timestamptz NOT NULL DEFAULT now(),
  started_at         timestamptz,
  completed_at       timestamptz,
  updated_at         timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE documents (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  source_id      uuid NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
  url            text NOT NULL,
  title          text NOT NULL DEFAULT '',
  markdown       text NOT NULL DEFAULT '',
  content_hash   text NOT NULL,
  etag           text,
  last_modified  text,
  source_type    text NOT NULL CHECK (source_type IN ('crawled', 'uploaded')),
  crawl_job_id   uuid REFERENCES crawl_jobs (id) ON DELETE CASCADE,
  upload_job_id  uuid REFERENCES upload_jobs (id) ON DELETE CASCADE,
  -- Page-text fallback for searches that find too few snippets. Truncated: a tsvector is capped at 1 MB.
  search_vector  tsvector GENERATED ALWAYS AS (
                   setweight(to_tsvector('english', left(title, 1000)), 'A') ||
                   setweight(to_tsvector('english', left(markdown, 300000)), 'D')) STORED,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  UNIQUE (source_id, url),
  CONSTRAINT documents_one_job CHECK (
    (source_type = 'crawled' AND crawl_job_id IS NOT NULL AND upload_job_id IS NULL) OR
    (source_type = 'uploaded' AND upload_job_id IS NOT NULL AND crawl_job_id IS NULL))
);
CREATE INDEX documents_search ON documents USING gin (search_vector);
CREATE INDEX documents_crawl_job ON documents (crawl_job_id);
CREATE INDEX documents_upload_job ON documents (upload_job_id);

CREATE TABLE snippets (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  source_id     uuid NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
  -- The first page the code was seen on; other pages are in snippet_occurrences.
  document_id   uuid NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
  title         text NOT NULL DEFAULT '',
  description   text NOT NULL DEFAULT '',
  language      text NOT NULL DEFAULT 'text',
  code          text NOT NULL,
  code_hash     text NOT NULL,
  filename      text,
  source_url    text NOT NULL,
  position      integer NOT NULL DEFAULT 0,
  -- How many pages of the source show this code: a ranking signal.
  page_count    integer NOT NULL DEFAULT 1,
  llm_enhanced  boolean NOT NULL DEFAULT false,
  search_vector tsvector GENERATED ALWAYS AS (
                  setweight(to_tsvector('english', title), 'A') ||
                  setweight(to_tsvector('english', description), 'B') ||
                  setweight(to_tsvector('english', code_search_text(code)), 'C')) STORED,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (source_id, code_hash)
);
CREATE INDEX snippets_search ON snippets USING gin (search_vector);
CREATE INDEX snippets_document ON snippets (document_id);
CREATE INDEX snippets_source_language ON snippets (source_id, language);
CREATE INDEX snippets_title_trgm ON snippets USING gin (lower(title) gin_trgm_ops);

CREATE TABLE snippet_occurrences (
  snippet_id   bigint NOT NULL REFERENCES snippets (id) ON DELETE CASCADE,
  document_id  uuid NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
  position     integer NOT NULL DEFAULT 0,
  PRIMARY KEY (snippet_id, document_id)
);
CREATE INDEX snippet_occurrences_document ON snippet_occurrences (document_id);

-- The vocabulary of the index, for typo correction: query words that are not in it are replaced by close
-- terms found through the trigram index.
CREATE TABLE search_terms (
  term       text PRIMARY KEY,
  doc_count  integer NOT NULL DEFAULT 1
);
CREATE INDEX search_terms_trgm ON search_terms USING gin (term gin_trgm_ops);

CREATE TABLE snippet_relationships (
  id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  source_snippet_id  bigint NOT NULL REFERENCES snippets (id) ON DELETE CASCADE,
  target_snippet_id  bigint NOT NULL REFERENCES snippets (id) ON DELETE CASCADE,
  relationship_type  text NOT NULL,
  description        text NOT NULL DEFAULT '',
  created_at         timestamptz NOT NULL DEFAULT now(),
  UNIQUE (source_snippet_id, target_snippet_id, relationship_type),
  CHECK (source_snippet_id <> target_snippet_id)
);
CREATE INDEX snippet_relationships_target ON snippet_relationships (target_snippet_id);
