import { open, stat } from 'node:fs/promises';
import { workspaceLayout } from '../agent/workspace.js';
import type { Config } from '../config.js';
import { openDatabase } from '../db/connect.js';
import type { Database } from '../db/connect.js';
import { UserError } from '../errors.js';
import { agentServerLayout, agentServerUrl, assertSafeBinding } from './layout.js';
import { LEASE_SECONDS, readAgentServerState, setDesiredState } from './state.js';
import type { AgentServerRecord } from './state.js';

/**
 * `docdex agent start|stop|restart|status|logs`: the commands write the desired state into the database
 * and wait for the supervising daemon (`docdex serve`) to report that it got there.
 */

export interface AgentServerReport extends AgentServerRecord {
  /** Where the agent server answers (from AGENT_HOST and AGENT_PORT). */
  endpoint: string;
  logFile: string;
}

async function withDatabase<T>(config: Config, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase(config, { max: 2, applicationName: 'docdex-agent-cli' });
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

function report(config: Config, record: AgentServerRecord): AgentServerReport {
  return { ...record, endpoint: agentServerUrl(config), logFile: agentServerLayout(workspaceLayout(config)).logFile };
}

export interface WaitOptions {
  /** Wait for the daemon to reach the state (default true). */
  wait?: boolean;
  timeoutMs?: number;
  pollMs?: number;
}

async function waitFor(db: Database, config: Config, done: (r: AgentServerRecord) => boolean, options: WaitOptions, since: number): Promise<AgentServerRecord> {
  const timeout = options.timeoutMs ?? 90_000;
  const deadline = Date.now() + timeout;
  // The daemon polls every 2 s and renews its lease every few seconds: without a fresh heartbeat after a
  // lease period, no daemon is there to act.
  const unsupervisedAfter = Date.now() + LEASE_SECONDS * 1000;
  for (;;) {
    const record = await readAgentServerState(db.pool);
    if (record.supervised && (record.acknowledgedAt ?? 0) >= since && done(record)) return record;
    if (!record.supervised && Date.now() > unsupervisedAfter) {
      throw new UserError('No docdex daemon is supervising the agent server.', {
        code: 'agent_server_unsupervised',
        hint: `The request is recorded (desired: ${record.desired}); run \`docdex serve\` and it will act on it.`,
      });
    }
    if (Date.now() > deadline) {
      throw new UserError(`The agent server did not get there within ${Math.round(timeout / 1000)} s (status: ${record.status}${record.lastError ? `, last error: ${record.lastError}` : ''}).`, {
        code: 'agent_server_timeout',
        hint: 'See `docdex agent logs` and `docdex agent status`.',
      });
    }
    await new Promise((r) => setTimeout(r, options.pollMs ?? 500));
  }
}

/** Start (or restart) the agent server and, by default, wait until it answers. */
export async function startAgentServer(config: Config, options: WaitOptions & { restart?: boolean } = {}): Promise<AgentServerReport> {
  // Refused here already, so the user sees it at once rather than as a status.
  assertSafeBinding(config);
  return withDatabase(config, async (db) => {
    const requested = await setDesiredState(db.pool, 'running', { restart: options.restart === true });
    if (options.wait === false) return report(config, requested);
    const record = await waitFor(db, config, (r) => r.status === 'failed' || r.status === 'running', options, requested.desiredAt);
    if (record.status === 'failed') {
      throw new UserError(`The agent server failed to start: ${record.lastError ?? 'unknown error'}`, { code: 'agent_server_failed', hint: 'See `docdex agent logs`.' });
    }
    return report(config, record);
  });
}

export async function stopAgentServer(config: Config, options: WaitOptions = {}): Promise<AgentServerReport> {
  return withDatabase(config, async (db) => {
    const requested = await setDesiredState(db.pool, 'stopped');
    if (options.wait === false) return report(config, requested);
    const current = await readAgentServerState(db.pool);
    // Nothing supervises it, so nothing runs: stopped already.
    if (!current.supervised) return report(config, current);
    return report(config, await waitFor(db, config, (r) => r.status === 'stopped' || r.status === 'failed', options, requested.desiredAt));
  });
}

export async function agentServerStatus(config: Config): Promise<AgentServerReport> {
  return withDatabase(config, async (db) => report(config, await readAgentServerState(db.pool)));
}

/** The last `lines` lines of the agent server's log file (the daemon writes it on its host). */
export async function readAgentServerLog(config: Config, lines = 100): Promise<{ file: string; lines: string[] }> {
  const file = agentServerLayout(workspaceLayout(config)).logFile;
  const size = await stat(file).then(
    (s) => s.size,
    () => -1,
  );
  if (size < 0) return { file, lines: [] };
  // Enough bytes for the wanted lines in practice; a longer line is cut, never the whole tail lost.
  const want = Math.min(size, Math.max(64 * 1024, lines * 400));
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(want);
    await handle.read(buffer, 0, want, size - want);
    const text = buffer.toString('utf8');
    const all = text.split('\n');
    if (want < size) all.shift();
    if (all.at(-1) === '') all.pop();
    return { file, lines: all.slice(-lines) };
  } finally {
    await handle.close();
  }
}

/** Calls `onText` with what is appended to the log file until `signal` aborts. */
export async function followAgentServerLog(config: Config, onText: (text: string) => void, signal: AbortSignal, pollMs = 500): Promise<void> {
  const file = agentServerLayout(workspaceLayout(config)).logFile;
  let position = await stat(file).then(
    (s) => s.size,
    () => 0,
  );
  while (!signal.aborted) {
    await new Promise((r) => setTimeout(r, pollMs));
    const size = await stat(file).then(
      (s) => s.size,
      () => 0,
    );
    if (size < position) position = 0; // rotated
    if (size === position) continue;
    const handle = await open(file, 'r');
    try {
      const buffer = Buffer.alloc(size - position);
      await handle.read(buffer, 0, buffer.length, position);
      position = size;
      onText(buffer.toString('utf8'));
    } finally {
      await handle.close();
    }
  }
}
