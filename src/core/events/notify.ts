import pg from 'pg';
import type { ConnectionInfo } from '../db/connect.js';

/**
 * Job events travel through PostgreSQL NOTIFY, so whoever runs a job (daemon worker, `docdex worker`, a CLI
 * `--wait` process) every follower sees it: the daemon's WebSocket, the TUI and `--wait`.
 */
export const CHANNELS = ['crawl_progress', 'upload_progress', 'job_complete', 'llm_progress'] as const;
export type Channel = (typeof CHANNELS)[number];

export interface JobEvent {
  event: Channel;
  jobId: string;
  kind: 'crawl' | 'upload' | 'llm';
  state: string;
  counters: Record<string, number>;
  /** Pages (or files) per second over the job so far. */
  rate?: number;
  etaSeconds?: number | null;
  currentUrl?: string | null;
  error?: string | null;
  timestamp: string;
}

// NOTIFY payloads are limited to 8000 bytes; long URLs or errors are cut so the event is never lost.
const MAX_FIELD = 1000;

export async function publish(db: pg.Pool | pg.ClientBase, event: Omit<JobEvent, 'timestamp'>): Promise<void> {
  const payload: JobEvent = {
    ...event,
    ...(event.currentUrl ? { currentUrl: event.currentUrl.slice(0, MAX_FIELD) } : {}),
    ...(event.error ? { error: event.error.slice(0, MAX_FIELD) } : {}),
    timestamp: new Date().toISOString(),
  };
  await db.query('SELECT pg_notify($1, $2)', [event.event, JSON.stringify(payload)]);
}

export interface Subscription {
  close(): Promise<void>;
}

/**
 * Listens on the job channels with a dedicated connection (LISTEN needs a session, not a pooled client).
 * A dropped connection is reported through onError; callers decide whether to resubscribe.
 */
export async function subscribe(info: ConnectionInfo, onEvent: (event: JobEvent) => void, options: { channels?: readonly Channel[]; onError?: (error: Error) => void } = {}): Promise<Subscription> {
  const client = new pg.Client({ ...info.config, application_name: 'docdex-listen' });
  client.on('error', (error) => options.onError?.(error));
  client.on('end', () => options.onError?.(new Error('event connection closed')));
  await client.connect();
  client.on('notification', (message) => {
    if (!message.payload) return;
    try {
      onEvent(JSON.parse(message.payload) as JobEvent);
    } catch {
      // A malformed payload from another writer is ignored rather than crashing every follower.
    }
  });
  for (const channel of options.channels ?? CHANNELS) await client.query(`LISTEN ${channel}`);
  let closed = false;
  return {
    async close() {
      if (closed) return;
      closed = true;
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
    },
  };
}
