-- Pages rendered in headless Chromium (issue #34): how each job asked for it and what it did.
ALTER TABLE crawl_jobs
  -- The request's render mode: auto (only pages that look client-rendered), always or never.
  ADD COLUMN render                text NOT NULL DEFAULT 'auto' CHECK (render IN ('auto', 'always', 'never')),
  -- Pages whose document was the browser's rendered DOM.
  ADD COLUMN pages_rendered        integer NOT NULL DEFAULT 0,
  -- Pages that looked client-rendered but were crawled as fetched because no Chromium was found.
  ADD COLUMN pages_render_missed   integer NOT NULL DEFAULT 0;
