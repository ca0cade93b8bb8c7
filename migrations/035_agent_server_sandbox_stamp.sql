-- The sandbox enforcement stamp (MGR_SANDBOX_ENFORCED) of the agent server child the supervising daemon last
-- prepared; NULL until a daemon of this version starts one. The setting only takes effect at an agent server
-- (re)start, so `docdex sandbox status`, `sandbox enable` and the settings route compare the two to say
-- whether the running server enforces it or a restart is still needed.
ALTER TABLE agent_server_state ADD COLUMN sandbox_enforced boolean;
