-- llms.txt, llms-full.txt and markdown twins (issue #33). A job remembers whether it may read markdown
-- instead of HTML; jobs from before this migration keep the HTML-only behaviour they were started with.
ALTER TABLE crawl_jobs ADD COLUMN prefer_markdown text NOT NULL DEFAULT 'never' CHECK (prefer_markdown IN ('auto', 'never'));
-- Set by the controller when the site's llms.txt links markdown files: its pages then have `.md` twins.
ALTER TABLE crawl_jobs ADD COLUMN markdown_twins boolean NOT NULL DEFAULT false;
-- Stored pages per route ({"html": n, "markdown_twin": n, "llms_full": n}), written with the other counters.
ALTER TABLE crawl_jobs ADD COLUMN pages_by_route jsonb NOT NULL DEFAULT '{}';

-- Which route a stored (or unchanged) page's document took.
ALTER TABLE crawl_frontier ADD COLUMN route text CHECK (route IN ('html', 'markdown_twin', 'llms_full'));

-- The pages an llms-full.txt was split into, read by the page worker instead of fetching the page.
CREATE TABLE crawl_llms_pages (
  job_id   uuid NOT NULL REFERENCES crawl_jobs (id) ON DELETE CASCADE,
  url      text NOT NULL,
  markdown text NOT NULL,
  PRIMARY KEY (job_id, url)
);
