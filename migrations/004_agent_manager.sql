-- docdex agent manager: repositories, per-user preferences, the internal API token, rate-limit hits,
-- push subscriptions, scheduled agent jobs and their runs, and the shipped skills' provisioning record.

CREATE TABLE agent_repos (
  id                serial PRIMARY KEY,
  -- NULL for local-only repos (a symlink under repos/ to a directory on this host).
  repo_url          text,
  -- Relative to $WORKSPACE_PATH/repos; one directory name, never a path with separators.
  local_path        text NOT NULL UNIQUE CHECK (local_path ~ '^[A-Za-z0-9._-]+$' AND local_path NOT IN ('.', '..')),
  -- Worktrees only: the absolute path of the repository the worktree was made from.
  source_path       text,
  source_repo_id    integer REFERENCES agent_repos (id) ON DELETE SET NULL,
  -- Worktrees only: the branch checked out in the worktree.
  branch            text,
  -- The branch asked for at clone time (or NULL for the remote's HEAD); default_branch is what git reports.
  requested_branch  text,
  default_branch    text,
  clone_status      text NOT NULL CHECK (clone_status IN ('cloning', 'ready', 'error')),
  clone_error       text,
  is_worktree       boolean NOT NULL DEFAULT false,
  is_local          boolean NOT NULL DEFAULT false,
  cloned_at         timestamptz NOT NULL DEFAULT now(),
  last_pulled       timestamptz,
  last_accessed_at  timestamptz
);

CREATE TABLE agent_settings (
  user_id     text PRIMARY KEY CHECK (length(user_id) BETWEEN 1 AND 128),
  -- Only what differs from the defaults in src/core/agent/settings.ts is stored, so new defaults apply.
  preferences jsonb NOT NULL DEFAULT '{}',
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Exactly one row: the bearer token of /api/internal.
CREATE TABLE agent_manager_token (
  singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  token       text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  rotated_at  timestamptz
);

-- One row per accepted request of a rate-limited route, so a limit holds across daemon restarts and
-- across several daemons on one database. Keyed by a hash of the token, never the token itself.
CREATE TABLE agent_rate_limit_hits (
  bucket  text NOT NULL,
  at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX agent_rate_limit_hits_bucket_at ON agent_rate_limit_hits (bucket, at);

CREATE TABLE push_subscriptions (
  id              bigserial PRIMARY KEY,
  user_id         text NOT NULL DEFAULT 'default',
  endpoint        text NOT NULL UNIQUE CHECK (length(endpoint) <= 2048),
  p256dh          text NOT NULL,
  auth            text NOT NULL,
  user_agent      text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  last_success_at timestamptz,
  last_failure_at timestamptz,
  last_error      text
);
CREATE INDEX push_subscriptions_user ON push_subscriptions (user_id);

CREATE TABLE agent_schedules (
  id                serial PRIMARY KEY,
  repo_id           integer NOT NULL REFERENCES agent_repos (id) ON DELETE CASCADE,
  name              text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  prompt            text NOT NULL CHECK (length(prompt) BETWEEN 1 AND 100000),
  interval_minutes  integer CHECK (interval_minutes BETWEEN 1 AND 43200),
  cron              text,
  timezone          text NOT NULL DEFAULT 'UTC',
  agent             text,
  model             text,
  enabled           boolean NOT NULL DEFAULT true,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  last_run_at       timestamptz,
  CHECK ((interval_minutes IS NULL) <> (cron IS NULL))
);
CREATE INDEX agent_schedules_repo ON agent_schedules (repo_id);

CREATE TABLE agent_schedule_runs (
  id              bigserial PRIMARY KEY,
  schedule_id     integer NOT NULL REFERENCES agent_schedules (id) ON DELETE CASCADE,
  repo_id         integer NOT NULL REFERENCES agent_repos (id) ON DELETE CASCADE,
  status          text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
  trigger         text NOT NULL CHECK (trigger IN ('schedule', 'manual')),
  queue_job_id    text,
  worktree_path   text,
  session_id      text,
  log             text NOT NULL DEFAULT '',
  response        text,
  error           text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  started_at      timestamptz,
  finished_at     timestamptz
);
CREATE INDEX agent_schedule_runs_schedule ON agent_schedule_runs (schedule_id, id DESC);
CREATE INDEX agent_schedule_runs_recent ON agent_schedule_runs (id DESC);

-- What docdex last wrote for each shipped skill: a file whose hash differs was edited by the user and is
-- never overwritten.
CREATE TABLE agent_shipped_skills (
  name          text PRIMARY KEY,
  path          text NOT NULL,
  content_hash  text NOT NULL,
  written_at    timestamptz NOT NULL DEFAULT now()
);
