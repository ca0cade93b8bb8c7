-- The request (desired_at) the agent server's supervisor has acted on. `docdex agent start|stop|restart`
-- wait for it to reach their own request before trusting the reported status, so a status written before
-- the supervisor saw the request (a stale "failed" or "running") is never taken for the answer.
ALTER TABLE agent_server_state ADD COLUMN acknowledged_at timestamptz;
