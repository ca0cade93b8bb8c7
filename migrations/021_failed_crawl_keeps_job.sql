-- A source that a failed crawl left without a single page is removed with the failure (search_libraries chose
-- such empty sources over real ones). The failed job stays, so `crawl status` can still say why it failed:
-- its source_id becomes NULL instead of the job going with the source. Deleting a source on purpose deletes
-- its crawl jobs explicitly (sources/manage.ts).
ALTER TABLE crawl_jobs ALTER COLUMN source_id DROP NOT NULL;
ALTER TABLE crawl_jobs DROP CONSTRAINT crawl_jobs_source_id_fkey;
ALTER TABLE crawl_jobs ADD CONSTRAINT crawl_jobs_source_id_fkey
  FOREIGN KEY (source_id) REFERENCES sources (id) ON DELETE SET NULL;
