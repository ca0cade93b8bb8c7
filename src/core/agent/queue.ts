import type { PgBoss } from 'pg-boss';

/**
 * The agent manager's pg-boss queues. Any process holding a started PgBoss can enqueue; the daemon's
 * agent services (and `docdex repos add` while it waits) work them.
 */
export const AGENT_QUEUES = {
  /** data: {repoId} */
  clone: 'agent-repo-clone',
  /** data: {scheduleId}; sent by pg-boss's cron clock, one pg-boss schedule per enabled job. */
  scheduleTrigger: 'agent-schedule-trigger',
  /** data: {runId} */
  scheduleRun: 'agent-schedule-run',
} as const;

// A failed clone or run is recorded on its row with the error text; retrying it blindly would only repeat
// the failure (bad URL, missing credentials) and hide the first error.
const QUEUE_OPTIONS: Record<string, { retryLimit: number; expireInSeconds: number }> = {
  [AGENT_QUEUES.clone]: { retryLimit: 0, expireInSeconds: 60 * 60 },
  [AGENT_QUEUES.scheduleTrigger]: { retryLimit: 2, expireInSeconds: 60 },
  [AGENT_QUEUES.scheduleRun]: { retryLimit: 0, expireInSeconds: 4 * 60 * 60 },
};

export async function ensureAgentQueues(boss: PgBoss): Promise<void> {
  for (const [name, options] of Object.entries(QUEUE_OPTIONS)) {
    if (await boss.getQueue(name)) continue;
    try {
      await boss.createQueue(name, options);
    } catch (error) {
      // Another process created it between the check and the create.
      if (!(await boss.getQueue(name))) throw error;
    }
  }
}
