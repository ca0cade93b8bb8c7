-- docdex sandbox: per-repo settings the sandbox planner honours (spec: repo_settings.sandboxGitCredentials).
-- No interface or API writes them; they are set manager-side only.

CREATE TABLE agent_repo_settings (
  repo_id                  integer PRIMARY KEY REFERENCES agent_repos (id) ON DELETE CASCADE,
  -- NULL follows preferences.sandbox.gitCredentials; true or false overrides it in either direction.
  sandbox_git_credentials  boolean,
  updated_at               timestamptz NOT NULL DEFAULT now()
);
