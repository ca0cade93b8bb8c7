import type pg from 'pg';

/**
 * Whether this index has been used for the agent manager: settings, repos, schedules or git credentials
 * stored, or the agent server asked to run. `docdex serve` then starts the agent half without being asked,
 * so an agent user's daemon keeps working; a docs-only user's never provisions a workspace.
 */
export async function agentSettingsPresent(pool: pg.Pool): Promise<boolean> {
  const { rows } = await pool.query<{ present: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM agent_settings)
         OR EXISTS (SELECT 1 FROM agent_repos)
         OR EXISTS (SELECT 1 FROM agent_schedules)
         OR EXISTS (SELECT 1 FROM agent_git_credentials)
         OR EXISTS (SELECT 1 FROM agent_server_state WHERE desired = 'running') AS present`,
  );
  return rows[0]?.present ?? false;
}
