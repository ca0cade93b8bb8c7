import type { FastifyInstance } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import type { JobEvent } from '../core/events/notify.js';
import type { EventsHub } from './events-hub.js';
import { ClientMessage } from './ws-protocol.js';
import type { FrameError, JobEventMessage, ServerMessage } from './ws-protocol.js';

/**
 * GET /ws: live job events relayed from PostgreSQL NOTIFY. The messages of both directions are defined once,
 * in ws-protocol.ts, and documented in docs/websocket.md (tested against those schemas). `?job_id=` on the URL
 * subscribes at connect; no subscription means all jobs.
 *
 * A frame that is not one of the client messages (binary, too large, not JSON, JSON of another shape) is
 * answered with an error message and the connection stays open: a client's mistake must never reach the
 * daemon's process (a `null` frame once threw in this handler and ended `docdex serve`). Frames beyond the
 * WebSocket plugin's maxPayload are closed by the ws library with 1009.
 */

// A client that stops reading must not grow the daemon's memory: past this much unsent data it is closed.
export const MAX_BUFFERED_BYTES = 1024 * 1024;
const HEARTBEAT_MS = 15_000;
/** Client messages are a few dozen bytes; anything longer is refused before JSON.parse sees it. */
export const MAX_CLIENT_FRAME_BYTES = 4096;

const USAGE = 'Send {"type":"subscribe","job_id":"..."}, {"type":"subscribe","all":true}, {"type":"unsubscribe","job_id":"..."} or {"type":"ping"}.';

function frameText(raw: RawData): string {
  if (Array.isArray(raw)) return Buffer.concat(raw).toString('utf8');
  return Buffer.from(raw as ArrayBuffer).toString('utf8');
}

function frameBytes(raw: RawData): number {
  return Array.isArray(raw) ? raw.reduce((n, b) => n + b.length, 0) : raw.byteLength;
}

/** One client frame → the message it carries, or the error frame that answers it. Never throws. */
export function parseClientFrame(raw: RawData, isBinary: boolean): ClientMessage | FrameError {
  if (isBinary) return { type: 'error', code: 'binary_frame', error: `Binary frames are not accepted. ${USAGE}` };
  if (frameBytes(raw) > MAX_CLIENT_FRAME_BYTES) {
    return { type: 'error', code: 'frame_too_large', error: `Messages are limited to ${MAX_CLIENT_FRAME_BYTES} bytes. ${USAGE}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(frameText(raw));
  } catch {
    return { type: 'error', code: 'invalid_json', error: `Messages must be JSON. ${USAGE}` };
  }
  const parsed = ClientMessage.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  return { type: 'error', code: 'invalid_message', error: `Invalid message (${where}${issue?.message ?? 'wrong shape'}). ${USAGE}` };
}

export function toWire(event: JobEvent): JobEventMessage {
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
    // `?job_id=a&job_id=b` arrives as an array: only one plain id subscribes at connect.
    const queried = (request.query as { job_id?: unknown }).job_id;
    const initial = typeof queried === 'string' && ClientMessage.safeParse({ type: 'subscribe', job_id: queried }).success ? queried : undefined;
    let all = !initial;
    const jobs = new Set<string>(initial ? [initial] : []);
    let alive = true;

    const send = (payload: ServerMessage): void => {
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

    socket.on('message', (raw, isBinary) => {
      const message = parseClientFrame(raw, isBinary);
      if (message.type === 'error') {
        send({ ...message });
      } else if (message.type === 'subscribe') {
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
      } else {
        send({ type: 'pong' });
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
