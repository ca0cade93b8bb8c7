import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A small OpenAI-compatible server on 127.0.0.1 for the LLM tests: POST /v1/chat/completions answers from a
 * script (one reply per request, then a default), GET /v1/models lists `models`. Every request is recorded,
 * with its arrival time and how many were in flight, so tests can see retries, waits and concurrency through a
 * real HTTP round trip with the real SDK.
 */

export interface StubBlock {
  n: number;
  code: string;
  title: string;
}

export interface ChatBody {
  model: string;
  messages: Array<{ role: string; content: string }>;
  response_format?: { type: string; json_schema?: { name: string; strict?: boolean; schema: unknown } };
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: ChatBody | null;
  receivedAt: number;
  inFlight: number;
}

export interface StubReply {
  status?: number;
  headers?: Record<string, string>;
  /** The assistant message content (a chat completion is built around it). */
  content?: string;
  /** A raw body instead of a chat completion (error bodies). */
  body?: unknown;
  delayMs?: number;
  finishReason?: string;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
}

export type Responder = (body: ChatBody, request: RecordedRequest) => StubReply;

export interface StubServer {
  /** Base URL including /v1, as CODE_LLM_BASE_URL. */
  baseUrl: string;
  requests: RecordedRequest[];
  chatRequests(): RecordedRequest[];
  /** Replies used in order for the next chat requests, before the default responder. */
  script(...replies: Array<StubReply | Responder>): void;
  setDefault(responder: Responder): void;
  models: string[];
  modelsStatus: number;
  /** Chat responses fully sent. */
  completed: number;
  maxInFlight: number;
  close(): Promise<void>;
}

/** The blocks of a docdex prompt, as the model sees them. */
export function promptBlocks(body: ChatBody): StubBlock[] {
  const user = [...body.messages].reverse().find((m) => m.role === 'user' && m.content.includes('### Block'))?.content ?? body.messages[1]?.content ?? '';
  const blocks: StubBlock[] = [];
  for (const part of user.split(/^### Block /m).slice(1)) {
    const n = Number(/^(\d+)/.exec(part)?.[1]);
    const code = /````\n([\s\S]*?)\n````/.exec(part)?.[1] ?? '';
    const title = /^Current title: (.*)$/m.exec(part)?.[1] ?? '';
    blocks.push({ n, code, title });
  }
  return blocks;
}

export interface StubBlockAnswer {
  language: string | null;
  title: string;
  description: string;
}

export const GOOD_DESCRIPTION =
  'This example shows the documented way to perform the task on this page, step by step, and is the right starting point when you need the same behaviour in your own project code today.';

/** A valid answer for every block of the request; `per` overrides fields per block. */
export function answerFor(
  body: ChatBody,
  per: (block: StubBlock) => Partial<StubBlockAnswer> = () => ({}),
  relationships: Array<{ from: number; to: number; type: string; reason: string }> = [],
): string {
  const blocks = promptBlocks(body).map((b) => ({
    block: b.n,
    language: 'python',
    title: `Stub title for block ${b.n}`,
    description: GOOD_DESCRIPTION,
    ...per(b),
  }));
  return JSON.stringify({ blocks, relationships });
}

export async function startStubServer(): Promise<StubServer> {
  const queue: Array<StubReply | Responder> = [];
  let fallback: Responder = (body) => ({ content: answerFor(body) });
  let inFlight = 0;
  const sockets = new Set<Socket>();

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      inFlight++;
      stub.maxInFlight = Math.max(stub.maxInFlight, inFlight);
      const text = Buffer.concat(chunks).toString('utf8');
      const record: RecordedRequest = {
        method: req.method ?? '',
        path: (req.url ?? '').split('?')[0]!,
        headers: req.headers,
        body: text ? (JSON.parse(text) as ChatBody) : null,
        receivedAt: Date.now(),
        inFlight,
      };
      stub.requests.push(record);
      let settled = false;
      const settle = () => {
        if (settled) return false;
        settled = true;
        inFlight--;
        return true;
      };
      // A client that gave up (timeout) no longer counts as in flight.
      res.on('close', settle);
      const finish = (status: number, payload: unknown, headers: Record<string, string> = {}, delayMs = 0) => {
        const send = () => {
          if (!settle() || res.destroyed) return;
          res.writeHead(status, { 'content-type': 'application/json', ...headers });
          res.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
          if (record.path.endsWith('/chat/completions')) stub.completed++;
        };
        if (delayMs > 0) setTimeout(send, delayMs);
        else send();
      };
      if (req.method === 'GET' && record.path === '/v1/models') {
        if (stub.modelsStatus !== 200) return finish(stub.modelsStatus, { error: { message: 'no', type: 'invalid_request_error' } });
        return finish(200, { object: 'list', data: stub.models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'stub' })) });
      }
      if (req.method !== 'POST' || record.path !== '/v1/chat/completions' || !record.body) {
        return finish(404, { error: { message: `no route ${req.method} ${record.path}`, type: 'invalid_request_error' } });
      }
      const next = queue.shift() ?? fallback;
      const reply = typeof next === 'function' ? next(record.body, record) : next;
      const status = reply.status ?? 200;
      if (status !== 200 || reply.body !== undefined) {
        return finish(status, reply.body ?? { error: { message: `stub error ${status}`, type: 'server_error' } }, reply.headers, reply.delayMs);
      }
      const content = reply.content ?? '';
      const usage = reply.usage === undefined ? { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 } : reply.usage;
      finish(
        200,
        {
          id: `chatcmpl-${stub.requests.length}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: record.body.model,
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: reply.finishReason ?? 'stop' }],
          ...(usage === null ? {} : { usage }),
        },
        reply.headers,
        reply.delayMs,
      );
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const stub: StubServer = {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests: [],
    chatRequests: () => stub.requests.filter((r) => r.path === '/v1/chat/completions'),
    script: (...replies) => queue.push(...replies),
    setDefault: (responder) => {
      fallback = responder;
    },
    models: ['stub-model'],
    modelsStatus: 200,
    completed: 0,
    maxInFlight: 0,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return stub;
}
