import os from 'node:os';
import type pg from 'pg';
import { z } from 'zod';
import type { AgentServerState, AgentServerStatus } from './supervisor.js';

/**
 * The agent server's row in the database: what the user asked for (desired state, restart generation) and
 * what the supervising daemon reports. Commands and the HTTP API only write the desired state; exactly one
 * daemon holds the supervision lease and acts on it.
 */

/** A lease not renewed for this long is free for another daemon. The holder renews every few seconds. */
export const LEASE_SECONDS = 20;

export const AgentServerRecord = z
  .object({
    desired: z.enum(['running', 'stopped']),
    restartGeneration: z.number(),
    desiredAt: z.number(),
    acknowledgedAt: z.number().nullable().describe('The request (desiredAt) the supervisor has acted on'),
    status: z.enum(['stopped', 'starting', 'running', 'backoff', 'stopping', 'failed']),
    pid: z.number().nullable(),
    url: z.string().nullable(),
    startedAt: z.number().nullable(),
    restarts: z.number(),
    lastExit: z.string().nullable(),
    lastError: z.string().nullable(),
    retryAt: z.number().nullable(),
    supervisor: z.string().nullable().describe('hostname:pid of the daemon supervising the agent server'),
    heartbeatAt: z.number().nullable(),
    supervised: z.boolean().describe('A daemon holds the supervision lease (its heartbeat is recent)'),
    sandboxEnforced: z.boolean().nullable().describe('Whether the child last started enforces the sandbox (its MGR_SANDBOX_ENFORCED stamp); null before the first start'),
    updatedAt: z.number(),
  })
  .meta({ id: 'AgentServerState' });
export type AgentServerRecord = z.infer<typeof AgentServerRecord>;

interface Row {
  desired: 'running' | 'stopped';
  restart_generation: number;
  desired_at: Date;
  acknowledged_at: Date | null;
  status: AgentServerState;
  pid: number | null;
  url: string | null;
  started_at: Date | null;
  restarts: number;
  last_exit: string | null;
  last_error: string | null;
  retry_at: Date | null;
  supervisor: string | null;
  heartbeat_at: Date | null;
  sandbox_enforced: boolean | null;
  updated_at: Date;
  fresh: boolean;
}

const SELECT = `SELECT *, (supervisor IS NOT NULL AND heartbeat_at > now() - make_interval(secs => ${LEASE_SECONDS})) AS fresh FROM agent_server_state WHERE singleton`;

function toRecord(row: Row): AgentServerRecord {
  const time = (d: Date | null) => d?.getTime() ?? null;
  return {
    desired: row.desired,
    restartGeneration: row.restart_generation,
    desiredAt: row.desired_at.getTime(),
    acknowledgedAt: time(row.acknowledged_at),
    // Without a live supervisor the last reported status is stale: nothing runs the server.
    status: row.fresh ? row.status : 'stopped',
    pid: row.fresh ? row.pid : null,
    url: row.url,
    startedAt: row.fresh ? time(row.started_at) : null,
    restarts: row.restarts,
    lastExit: row.last_exit,
    lastError: row.last_error,
    retryAt: row.fresh ? time(row.retry_at) : null,
    supervisor: row.fresh ? row.supervisor : null,
    heartbeatAt: time(row.heartbeat_at),
    supervised: row.fresh,
    sandboxEnforced: row.sandbox_enforced,
    updatedAt: row.updated_at.getTime(),
  };
}

async function ensureRow(pool: pg.Pool): Promise<void> {
  await pool.query('INSERT INTO agent_server_state (singleton) VALUES (true) ON CONFLICT (singleton) DO NOTHING');
}

export async function readAgentServerState(pool: pg.Pool): Promise<AgentServerRecord> {
  await ensureRow(pool);
  const { rows } = await pool.query<Row>(SELECT);
  return toRecord(rows[0]!);
}

/** Records what the user wants; `restart` also bumps the generation so a running server is restarted. */
export async function setDesiredState(pool: pg.Pool, desired: 'running' | 'stopped', options: { restart?: boolean } = {}): Promise<AgentServerRecord> {
  await ensureRow(pool);
  await pool.query(
    `UPDATE agent_server_state SET desired = $1, desired_at = now(), updated_at = now(),
            restart_generation = restart_generation + CASE WHEN $2 THEN 1 ELSE 0 END
      WHERE singleton`,
    [desired, options.restart === true],
  );
  return readAgentServerState(pool);
}

export function supervisorIdentity(): string {
  return `${os.hostname()}:${process.pid}`;
}

/** The previous holder, as it left the row: a daemon that died may have left its opencode running. */
export interface PreviousHolder {
  supervisor: string | null;
  pid: number | null;
}

/**
 * Takes the lease when it is free, expired or already ours. Returns the previous holder when taken over,
 * undefined when another daemon holds it.
 */
export async function claimSupervision(pool: pg.Pool, me: string): Promise<PreviousHolder | undefined> {
  await ensureRow(pool);
  const { rows } = await pool.query<{ supervisor: string | null; pid: number | null }>(
    `WITH previous AS (SELECT supervisor, pid FROM agent_server_state WHERE singleton FOR UPDATE)
     UPDATE agent_server_state s SET supervisor = $1, heartbeat_at = now(), updated_at = now()
       FROM previous
      WHERE s.singleton AND (s.supervisor IS NULL OR s.supervisor = $1 OR s.heartbeat_at IS NULL
            OR s.heartbeat_at <= now() - make_interval(secs => ${LEASE_SECONDS}))
      RETURNING previous.supervisor, previous.pid`,
    [me],
  );
  return rows[0];
}

/**
 * Renews the lease and writes the status, with the request it answers (`acknowledgedAt`, a desiredAt).
 * False when the lease was lost (another daemon took over).
 */
export async function reportStatus(pool: pg.Pool, me: string, status: AgentServerStatus, acknowledgedAt: number | null): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE agent_server_state
        SET status = $2, pid = $3, url = $4, started_at = to_timestamp($5::double precision / 1000), restarts = $6,
            last_exit = $7, last_error = $8, retry_at = to_timestamp($9::double precision / 1000),
            acknowledged_at = coalesce(to_timestamp($10::double precision / 1000), acknowledged_at),
            heartbeat_at = now(), updated_at = now()
      WHERE singleton AND supervisor = $1`,
    [me, status.state, status.pid, status.url, status.startedAt, status.restarts, status.lastExit, status.lastError, status.retryAt, acknowledgedAt],
  );
  return rowCount === 1;
}

/**
 * Records the enforcement stamp of the child about to start (called by the sandbox extension before each
 * spawn), so other processes can tell whether the running server enforces the current setting.
 */
export async function recordSandboxStamp(pool: pg.Pool, enforced: boolean): Promise<void> {
  await ensureRow(pool);
  await pool.query('UPDATE agent_server_state SET sandbox_enforced = $1 WHERE singleton', [enforced]);
}

/** Gives the lease up on a clean shutdown, with the final status. */
export async function releaseSupervision(pool: pg.Pool, me: string, status: AgentServerStatus): Promise<void> {
  await reportStatus(pool, me, status, null);
  await pool.query('UPDATE agent_server_state SET supervisor = NULL, updated_at = now() WHERE singleton AND supervisor = $1', [me]);
}
