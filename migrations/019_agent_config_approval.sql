-- Exactly one row: digests of what a reload of the agent server would load that can start host processes or
-- loosen permissions (the protected part of each configuration file, and the plugin, tool, command, agent and
-- mode files), as of the last user write or agent server start. With sandbox enforcement on, a reload asked for
-- by an agent (mgr) is refused when the files no longer match, so it cannot load what the user never approved.
CREATE TABLE agent_config_approval (
  singleton    boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  digests      jsonb NOT NULL,
  approved_at  timestamptz NOT NULL DEFAULT now()
);
