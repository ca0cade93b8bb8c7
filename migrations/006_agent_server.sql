-- docdex agent server: the supervised opencode process (desired state, reported status, supervision lease)
-- and per-host git credentials.

-- Exactly one row. `docdex agent start|stop|restart` write the desired state; the daemon holding the lease
-- (supervisor, renewed every few seconds through heartbeat_at) starts or stops opencode to match and reports
-- what it sees. A daemon that stops renewing loses the lease after a short timeout, so another can take over.
CREATE TABLE agent_server_state (
  singleton           boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  desired             text NOT NULL DEFAULT 'stopped' CHECK (desired IN ('running', 'stopped')),
  -- Bumped by `docdex agent restart`: the supervisor restarts opencode when it changes.
  restart_generation  integer NOT NULL DEFAULT 0,
  desired_at          timestamptz NOT NULL DEFAULT now(),
  status              text NOT NULL DEFAULT 'stopped'
                      CHECK (status IN ('stopped', 'starting', 'running', 'backoff', 'stopping', 'failed')),
  pid                 integer,
  url                 text,
  started_at          timestamptz,
  restarts            integer NOT NULL DEFAULT 0,
  last_exit           text,
  last_error          text,
  retry_at            timestamptz,
  -- "hostname:pid" of the supervising daemon; NULL when none holds the lease.
  supervisor          text,
  heartbeat_at        timestamptz,
  updated_at          timestamptz NOT NULL DEFAULT now()
);
INSERT INTO agent_server_state (singleton) VALUES (true);

-- Per-host credentials for git over HTTPS and the hosting CLI. Tokens live only here: never in a file under
-- the workspace, and never in an API response.
CREATE TABLE agent_git_credentials (
  id          text PRIMARY KEY CHECK (id ~ '^gc_[A-Za-z0-9_-]{8,64}$'),
  user_id     text NOT NULL DEFAULT 'default' CHECK (length(user_id) BETWEEN 1 AND 128),
  -- Lower-case host name, optionally with a port: github.com, git.example.com:8443.
  host        text NOT NULL CHECK (host ~ '^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:[0-9]{1,5})?$'),
  username    text CHECK (username IS NULL OR length(username) BETWEEN 1 AND 256),
  token       text NOT NULL CHECK (length(token) BETWEEN 1 AND 4096),
  -- Bound to one repo: it wins over the other credentials of its host for that repo.
  repo_id     integer REFERENCES agent_repos (id) ON DELETE CASCADE,
  label       text CHECK (label IS NULL OR length(label) <= 200),
  -- defaultGitCredentialId: wins among a host's unbound credentials. At most one per user.
  is_default  boolean NOT NULL DEFAULT false,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_git_credentials_user_host ON agent_git_credentials (user_id, host);
CREATE UNIQUE INDEX agent_git_credentials_one_default ON agent_git_credentials (user_id) WHERE is_default;
