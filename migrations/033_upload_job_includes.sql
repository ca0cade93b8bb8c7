-- Includes resolved from the same commit (git) or folder (upload) before extraction (issue 50): how many a
-- job's files resolved and how many were kept as written, with the first of those and why, so a user sees
-- what docdex could not read (a file outside the repository, a missing region, a path built at build time).
ALTER TABLE upload_jobs
  ADD COLUMN includes_resolved integer NOT NULL DEFAULT 0,
  ADD COLUMN includes_unresolved integer NOT NULL DEFAULT 0,
  ADD COLUMN unresolved_includes jsonb NOT NULL DEFAULT '[]';
