-- The outbound policy of a crawl travels with the job, so whichever worker runs it applies the same rule:
-- a crawl started by the local user (CLI, TUI) may reach loopback; one started over REST or MCP may not.
-- Jobs from before this column default to the strict policy.
ALTER TABLE crawl_jobs ADD COLUMN allow_loopback boolean NOT NULL DEFAULT false;
