import { z } from 'zod';
import { CHANNELS } from '../core/events/notify.js';

/**
 * The WebSocket protocol of GET /ws: every message either side sends, as zod schemas. This is its one
 * definition: ws.ts parses client frames and types what it sends with it, and docs/websocket.md is tested
 * against it (test/daemon/ws-docs.test.ts), field by field and description by description.
 */

const JobId = z.string().min(1).max(200);

export const ClientMessage = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('subscribe').describe('Follow one job, or every job.'),
      job_id: JobId.optional().describe('The job to follow (a crawl, upload or LLM job id). Without it, or with all, every job is followed.'),
      all: z.boolean().optional().describe('true: follow every job (the default of a connection that subscribed to nothing).'),
    })
    .strict(),
  z
    .object({
      type: z.literal('unsubscribe').describe('Stop following one job, or every job.'),
      job_id: JobId.optional().describe('The job to stop following. Without it, every subscription ends and no job is followed.'),
    })
    .strict(),
  z.object({ type: z.literal('ping').describe('Asks for a pong: an application-level liveness check.') }).strict(),
]);
export type ClientMessage = z.infer<typeof ClientMessage>;

const JobEventMessage = z.object({
  type: z.enum(CHANNELS).describe('crawl_progress, upload_progress and llm_progress while a job runs; job_complete once when it ends.'),
  job_id: z.string().describe('The job the event is about.'),
  kind: z.enum(['crawl', 'upload', 'llm']).describe('What the job does.'),
  state: z.string().describe('The job state: queued, running, processing (uploads), enhancing, completed, failed or cancelled.'),
  counters: z
    .record(z.string(), z.number())
    .describe(
      'The job counters: pages_found, pages_crawled, pages_skipped, pages_failed and snippets_stored for a crawl; file_count, processed_files, failed_files and snippets_extracted for an upload; llm_calls, llm_tokens, snippets_enhanced and cache_hits for llm_progress.',
    ),
  rate: z.number().nullable().describe('Pages (or files) per second over the job so far; null when not known.'),
  eta_seconds: z.number().nullable().describe('Seconds until the job is expected to end; null when not known.'),
  current_url: z.string().nullable().describe('The page or file being processed (at most 1000 characters); null when none.'),
  error: z.string().nullable().describe('Why the job failed (at most 1000 characters); null otherwise.'),
  timestamp: z.string().describe('When the event was published (ISO 8601).'),
});

const SubscribedMessage = z.object({
  type: z.literal('subscribed').describe('The answer to subscribe and unsubscribe: what the connection now follows.'),
  all: z.boolean().describe('Whether every job is followed.'),
  job_ids: z.array(z.string()).describe('The jobs followed one by one.'),
});

const PongMessage = z.object({ type: z.literal('pong').describe('The answer to ping.') });

const HeartbeatMessage = z.object({
  type: z.literal('heartbeat').describe('Sent every 15 s, with a WebSocket ping; a connection that answers no ping is closed.'),
  timestamp: z.string().describe('When it was sent (ISO 8601).'),
});

export const FRAME_ERROR_CODES = ['binary_frame', 'frame_too_large', 'invalid_json', 'invalid_message'] as const;

const ErrorMessage = z.object({
  type: z.literal('error').describe('The answer to a frame that is not a client message; the connection stays open.'),
  code: z.enum(FRAME_ERROR_CODES).describe('binary_frame, frame_too_large (over 4096 bytes), invalid_json or invalid_message.'),
  error: z.string().describe('What was wrong, and the messages the server accepts.'),
});

export const ServerMessage = z.union([JobEventMessage, SubscribedMessage, PongMessage, HeartbeatMessage, ErrorMessage]);
export type ServerMessage = z.infer<typeof ServerMessage>;
export type JobEventMessage = z.infer<typeof JobEventMessage>;
export type FrameError = z.infer<typeof ErrorMessage>;

/** Each message's schema, by direction, for the documentation test. */
export const PROTOCOL = {
  client: ClientMessage.options,
  server: [JobEventMessage, SubscribedMessage, PongMessage, HeartbeatMessage, ErrorMessage],
} as const;
