import type { FastifyInstance } from 'fastify';
import type { WebSocket } from 'ws';
import type { JobEvent } from '../core/events/notify.js';
import type { EventsHub } from './events-hub.js';

/**
 * GET /ws: live job events relayed from PostgreSQL NOTIFY.
 *
 * Client → server: `{"type":"subscribe","job_id":"<uuid>"}` (one job) or `{"type":"subscribe","all":true}`,
 * and `{"type":"unsubscribe","job_id":...}`. `?job_id=` on the URL subscribes at connect; no subscription
 * means all jobs.
 * Server → client: `{"type":"crawl_progress"|"upload_progress"|"job_complete", "job_id", "kind", "state",
 * "counters", "rate", "eta_seconds", "current_url", "error", "timestamp"}`, plus `{"type":"heartbeat"}`
 * every 15 s and `{"type":"subscribed", ...}` acknowledgements.
 */

// A client that stops reading must not grow the daemon's memory: past this much unsent data it is closed.
export const MAX_BUFFERED_BYTES = 1024 * 1024;
const HEARTBEAT_MS = 15_000;

export function toWire(event: JobEvent): Record<string, unknown> {
  return {
    type: event.event,
    job_id: event.jobId,
    kind: event.kind,
    state: event.state,
    counters: event.counters,
    rate: event.rate ?? null,
    eta_seconds: event.etaSeconds ?? null,
    current_url: event.currentUrl ?? null,
    error: event.error ?? null,
    timestamp: event.timestamp,
  };
}

export function registerWebSocket(app: FastifyInstance, hub: EventsHub, options: { heartbeatMs?: number; maxBufferedBytes?: number } = {}): void {
  const maxBuffered = options.maxBufferedBytes ?? MAX_BUFFERED_BYTES;
  app.get('/ws', { websocket: true, schema: { hide: true } }, (socket: WebSocket, request) => {
    const query = request.query as { job_id?: string };
    let all = !query.job_id;
    const jobs = new Set<string>(query.job_id ? [query.job_id] : []);
    let alive = true;

    const send = (payload: Record<string, unknown>): void => {
      if (socket.readyState !== socket.OPEN) return;
      if (socket.bufferedAmount > maxBuffered) {
        socket.close(1008, 'client too slow: event buffer overflow');
        return;
      }
      socket.send(JSON.stringify(payload));
    };

    const off = hub.on((event) => {
      if (all || jobs.has(event.jobId)) send(toWire(event));
    });

    socket.on('message', (raw) => {
      let message: { type?: string; job_id?: string; all?: boolean };
      try {
        message = JSON.parse(String(raw)) as typeof message;
      } catch {
        send({ type: 'error', error: 'Messages must be JSON: {"type":"subscribe","job_id":"..."}', code: 'bad_request' });
        return;
      }
      if (message.type === 'subscribe') {
        if (message.all || !message.job_id) all = true;
        else {
          all = false;
          jobs.add(message.job_id);
        }
        send({ type: 'subscribed', all, job_ids: [...jobs] });
      } else if (message.type === 'unsubscribe') {
        if (message.job_id) jobs.delete(message.job_id);
        else jobs.clear();
        if (jobs.size === 0) all = false;
        send({ type: 'subscribed', all, job_ids: [...jobs] });
      } else if (message.type === 'ping') {
        send({ type: 'pong' });
      } else {
        send({ type: 'error', error: `Unknown message type ${JSON.stringify(message.type)}`, code: 'bad_request' });
      }
    });

    socket.on('pong', () => {
      alive = true;
    });
    // Dead connections (no pong since the last ping) are dropped instead of accumulating.
    const heartbeat = setInterval(() => {
      if (!alive) {
        socket.terminate();
        return;
      }
      alive = false;
      socket.ping();
      send({ type: 'heartbeat', timestamp: new Date().toISOString() });
    }, options.heartbeatMs ?? HEARTBEAT_MS);
    heartbeat.unref();

    socket.on('close', () => {
      clearInterval(heartbeat);
      off();
    });
  });
}
