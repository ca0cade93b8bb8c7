-- LLM enhancement inside the job: a crawl or upload job with enhancement on goes running -> enhancing ->
-- completed, and is completed only once every page it stored has been through the LLM stage.

ALTER TABLE crawl_jobs DROP CONSTRAINT crawl_jobs_status_check;
ALTER TABLE crawl_jobs ADD CONSTRAINT crawl_jobs_status_check
  CHECK (status IN ('queued', 'running', 'enhancing', 'completed', 'failed', 'cancelled'));
ALTER TABLE upload_jobs DROP CONSTRAINT upload_jobs_status_check;
ALTER TABLE upload_jobs ADD CONSTRAINT upload_jobs_status_check
  CHECK (status IN ('queued', 'processing', 'enhancing', 'completed', 'failed'));

-- Whether the job was started with enhancement on: whichever process finishes its pages decides enhancing vs
-- completed from the job itself, not from its own configuration.
ALTER TABLE crawl_jobs ADD COLUMN llm_enhance boolean NOT NULL DEFAULT false;
ALTER TABLE upload_jobs ADD COLUMN llm_enhance boolean NOT NULL DEFAULT false;

-- One row per page the LLM stage has finished for a job, enhanced or given up on (error set): what is left of
-- the stage is the job's pages with unenhanced snippets and no row here, so a page whose model answer was
-- unusable is not waited for twice, and a lost queue job is found and queued again.
CREATE TABLE llm_pages_done (
  job_id            uuid NOT NULL,
  document_id       uuid NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
  snippets_enhanced integer NOT NULL DEFAULT 0,
  error             text,
  done_at           timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (job_id, document_id)
);
CREATE INDEX llm_pages_done_document ON llm_pages_done (document_id);

-- The job's stored pages still waiting for the LLM stage.
CREATE FUNCTION llm_pages_pending(p_job uuid) RETURNS TABLE (document_id uuid) LANGUAGE sql STABLE AS $$
  SELECT d.id FROM documents d
   WHERE (d.crawl_job_id = p_job OR d.upload_job_id = p_job)
     AND NOT EXISTS (SELECT 1 FROM llm_pages_done f WHERE f.job_id = p_job AND f.document_id = d.id)
     AND EXISTS (SELECT 1 FROM snippet_occurrences o JOIN snippets s ON s.id = o.snippet_id
                  WHERE o.document_id = d.id AND NOT s.llm_enhanced)
$$;
