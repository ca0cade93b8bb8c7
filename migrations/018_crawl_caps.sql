-- Per-job resource caps of the crawler and what they cut off, reported with the job.
ALTER TABLE crawl_jobs
  -- Pages the job may admit to its frontier; links found after that are not queued.
  ADD COLUMN max_pages           integer NOT NULL DEFAULT 10000 CHECK (max_pages > 0),
  -- Set when the job completes with max_pages pages found: the site had more than the job crawled.
  ADD COLUMN page_cap_reached    boolean NOT NULL DEFAULT false,
  -- Links beyond the per-page cap, summed over the job's pages.
  ADD COLUMN links_ignored       integer NOT NULL DEFAULT 0,
  -- The largest robots.txt Crawl-delay (seconds) the job lowered to the crawler's ceiling, if any.
  ADD COLUMN crawl_delay_clamped real;
