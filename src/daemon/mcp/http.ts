import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { TokenScope } from '../../core/auth-token.js';
import { editDistance } from '../../core/edit-distance.js';
import { createDocdexMcpServer, createMcpServer } from '../../core/mcp/server.js';
import { ERROR_META_KEY, readOnlyMessage } from '../../core/mcp/tool.js';
import type { McpDeps, ToolErrorMeta } from '../../core/mcp/tool.js';
import { rejectUnauthorized } from '../auth.js';
import { clientGone } from '../client-gone.js';
import { sendError } from '../errors.js';
import { UserError } from '../../core/errors.js';
import { OPEN_SHAPE, readBodySchema } from '../body-shape.js';
import type { Reading } from '../body-shape.js';
import { BODY_SLACK_BYTES, readJsonBody } from '../json-body.js';

/**
 * MCP over HTTP, as a Fastify plugin: streamable HTTP at /mcp (sessions, and stateless requests from clients
 * that send no session id), the legacy HTTP+SSE transport at /mcp/v1/sse with its message endpoint
 * /mcp/v1/messages, and REST access to the tools at /mcp/tools and /mcp/execute/{tool_name}.
 *
 * Every session gets its own McpServer from the shared factory (an McpServer serves one transport); they
 * all share `deps`, so the database pool is shared. The plugin is encapsulated: its JSON parser and hooks
 * apply to these routes only.
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The REST tool endpoint: its body is the arguments of the tool its path names. */
    toolArguments?: boolean;
  }
}

export interface McpHttpPluginOptions {
  deps: McpDeps;
  /** Decides whether a request may use MCP. Omit for no authentication. A refusal is a 401 with WWW-Authenticate. */
  auth?: (request: FastifyRequest) => boolean | Promise<boolean>;
  /**
   * What the request's token may do (the daemon's access hook decides it: `request.tokenScope`). A `read`
   * request gets a read-only MCP server: writing tools are not listed and are refused. Omit for `full`.
   */
  scope?: (request: FastifyRequest) => TokenScope;
  /**
   * The MCP SDK's own DNS-rebinding protection for this request (exact Host and Origin values), passed to
   * every transport. Omit to leave it off (a plugin mounted without the daemon's boundary, in tests).
   */
  rebinding?: (request: FastifyRequest) => RebindingOptions;
  /** Close a streamable HTTP session after this long without requests and with no open stream. Default 30 min. */
  sessionIdleMs?: number;
  /** Most concurrent sessions (streamable and SSE together); beyond it new sessions get 503. Default 1000. */
  maxSessions?: number;
  /** Interval of SSE comment frames that keep idle legacy SSE streams open through proxies. Default 15 s. */
  sseKeepAliveMs?: number;
}

export interface RebindingOptions {
  enableDnsRebindingProtection: true;
  allowedHosts: string[];
  allowedOrigins: string[];
}

interface StreamableSession {
  kind: 'streamable';
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  /** Opened with a read-only token: its server lists and runs only reading tools. */
  readOnly: boolean;
  lastActive: number;
  open: number;
}

interface SseSession {
  kind: 'sse';
  transport: SSEServerTransport;
  server: McpServer;
  readOnly: boolean;
  keepAlive: NodeJS.Timeout;
}

type Session = StreamableSession | SseSession;

/**
 * What the JSON parser hands the routes for a body that is not JSON, or that scanJson refused (`refusal`), so
 * each route answers in its own dialect.
 */
class MalformedJson {
  constructor(
    readonly message: string,
    readonly refusal?: UserError,
  ) {}
}

// The SDK's limit for one message (MAXIMUM_MESSAGE_SIZE in server/sse.js): the most any message may take.
const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
// A JSON-RPC message beyond a tool's arguments: method, id, names, progress token, an initialize request's client
// information and capabilities.
const ENVELOPE_BYTES = 64 * 1024;
const SESSION_HEADER = 'mcp-session-id';

function jsonRpcError(reply: FastifyReply, status: number, code: number, message: string): FastifyReply {
  return reply.status(status).type('application/json').send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/** A body that is not JSON is a parse error; one the scan refused is an invalid request. */
function malformedJsonRpc(reply: FastifyReply, body: MalformedJson): FastifyReply {
  return body.refusal === undefined ? jsonRpcError(reply, 400, -32700, `Parse error: ${body.message}`) : jsonRpcError(reply, 400, -32600, `Invalid Request: ${body.message}`);
}

/**
 * Hands the raw response to an SDK transport. Headers Fastify hooks already set (CORS) are copied over first,
 * and the request id every daemon response carries: after hijack() Fastify writes nothing more, and its
 * onSend hooks do not run.
 */
function hijack(reply: FastifyReply): ServerResponse {
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) reply.raw.setHeader(name, value as string | number | string[]);
  }
  reply.raw.setHeader('x-request-id', reply.request.id);
  reply.hijack();
  return reply.raw;
}

/** What the MCP routes share: the tools' dependencies, the open sessions and the plugin's limits. */
interface McpHttpState {
  deps: McpDeps;
  sessions: Map<string, Session>;
  idleMs: number;
  maxSessions: number;
  keepAliveMs: number;
  rebinding: (request: FastifyRequest) => Partial<RebindingOptions>;
  /** Whether the request's token is read-only (`McpHttpPluginOptions.scope`). */
  readOnly: (request: FastifyRequest) => boolean;
  /** The REST endpoint calls tools directly through their validated entry points; one instance per scope serves all. */
  rest: Record<TokenScope, ReturnType<typeof createDocdexMcpServer>>;
  /** The REST tool endpoint's body per tool: the tool's arguments, no others (json-body.ts), and their most bytes. */
  toolArguments: Map<string, Reading>;
  /** The most bytes any tool's arguments can take: the REST endpoint's limit, and a JSON-RPC message's less its envelope. */
  argumentBytes: number;
}

/**
 * Each tool's arguments as a body shape (its listed input schema, closed: the REST endpoint refuses an argument
 * the tool does not take, at the first one) and the most bytes any tool's arguments can take.
 */
function readToolArguments(rest: ReturnType<typeof createDocdexMcpServer>): Map<string, Reading> {
  return new Map([...rest.tools.values()].map((tool) => [tool.name, readBodySchema({ ...tool.listing.inputSchema, additionalProperties: false })]));
}

/** A REST tool call whose declared length is more than its tool's arguments can take: refused before it is read. */
async function refuseOversizedArguments(state: McpHttpState, request: FastifyRequest): Promise<void> {
  const tool = (request.params as { tool_name?: string }).tool_name ?? '';
  const bytes = state.toolArguments.get(tool)?.bytes;
  if (bytes === undefined || !Number.isFinite(bytes)) return;
  const limit = bytes + BODY_SLACK_BYTES;
  if (Number(request.headers['content-length'] ?? 0) > limit) {
    throw new UserError(`The request body is larger than ${tool}'s arguments can be (at most ${limit} bytes).`, { code: 'payload_too_large' });
  }
}

/**
 * Bodies become JSON or a MalformedJson, never a parser error, so each route answers in its own dialect. Each is
 * scanned first (json-body.ts): JSON-RPC messages for nesting and width, the REST tool endpoint's body against
 * the tool's arguments.
 */
function installJsonParser(app: FastifyInstance, state: McpHttpState): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', (request, payload, done) => {
    const tool = request.routeOptions.config.toolArguments === true ? (request.params as { tool_name?: string }).tool_name : undefined;
    const shape = tool === undefined ? OPEN_SHAPE : (state.toolArguments.get(tool)?.shape ?? OPEN_SHAPE);
    readJsonBody(payload, { limit: request.routeOptions.bodyLimit, contentLength: request.headers['content-length'], shape }).then(
      (text) => {
        try {
          done(null, JSON.parse(text));
        } catch (error) {
          done(null, new MalformedJson(error instanceof Error ? error.message : 'invalid JSON'));
        }
      },
      (error: unknown) => {
        // Too large is an HTTP matter (413); anything else the scan refused, each route answers in its dialect.
        if (error instanceof UserError && error.code !== 'payload_too_large') done(null, new MalformedJson(error.message, error));
        else done(error as Error, undefined);
      },
    );
  });
}

/** Closes idle streamable sessions, and every session when the app closes. */
function manageSessionLifetimes(app: FastifyInstance, state: McpHttpState): void {
  const { sessions, idleMs } = state;
  const reaper = setInterval(
    () => {
      const cutoff = Date.now() - idleMs;
      for (const session of sessions.values()) {
        if (session.kind === 'streamable' && session.open === 0 && session.lastActive < cutoff) void session.transport.close().catch(() => undefined);
      }
    },
    Math.min(60_000, idleMs),
  ).unref();

  app.addHook('onClose', async () => {
    clearInterval(reaper);
    await Promise.allSettled([...sessions.values()].map((s) => s.transport.close()));
    sessions.clear();
    await Promise.allSettled(Object.values(state.rest).map((rest) => rest.server.close()));
  });
}

function track(session: StreamableSession, raw: ServerResponse): void {
  session.open += 1;
  session.lastActive = Date.now();
  raw.once('close', () => {
    session.open -= 1;
    session.lastActive = Date.now();
  });
}

/**
 * A session keeps the scope it was opened with; a read-only token may not use a session a full token opened
 * (its session id would otherwise open the writing tools). Answers 403 and returns true when refused.
 */
function refusedByScope(state: McpHttpState, session: Session, request: FastifyRequest, reply: FastifyReply): boolean {
  if (session.readOnly || !state.readOnly(request)) return false;
  jsonRpcError(reply, 403, -32000, 'Forbidden: this session was opened with a token that may write, and this token is read-only (:read). Open a session of your own.');
  return true;
}

/** A request with an Mcp-Session-Id: handed to its session's transport. */
async function handleSessionRequest(state: McpHttpState, sessionId: string, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const session = state.sessions.get(sessionId);
  if (!session) {
    jsonRpcError(reply, 404, -32001, 'Session not found: start a new session with an initialize request.');
    return;
  }
  if (session.kind !== 'streamable') {
    jsonRpcError(reply, 400, -32000, 'Bad Request: this session uses the SSE transport; post its messages to /mcp/v1/messages.');
    return;
  }
  if (refusedByScope(state, session, request, reply)) return;
  track(session, reply.raw);
  await session.transport.handleRequest(request.raw, hijack(reply), request.body);
}

/** An initialize request without a session id: a new session with its own server. */
async function startStreamableSession(state: McpHttpState, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (state.sessions.size >= state.maxSessions) {
    jsonRpcError(reply, 503, -32000, 'Too many open MCP sessions; try again later.');
    return;
  }
  const readOnly = state.readOnly(request);
  const server = createMcpServer(state.deps, { readOnly });
  const session: StreamableSession = {
    kind: 'streamable',
    server,
    readOnly,
    lastActive: Date.now(),
    open: 0,
    transport: new StreamableHTTPServerTransport({
      ...state.rebinding(request),
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        state.sessions.set(id, session);
      },
    }),
  };
  // The protocol layer wraps this callback and detaches the server itself; closing the server from here
  // would close the transport again and recurse.
  session.transport.onclose = () => {
    if (session.transport.sessionId) state.sessions.delete(session.transport.sessionId);
  };
  await server.connect(session.transport);
  track(session, reply.raw);
  await session.transport.handleRequest(request.raw, hijack(reply), request.body);
}

async function handleStreamable(state: McpHttpState, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const body = request.body;
  if (body instanceof MalformedJson) {
    malformedJsonRpc(reply, body);
    return;
  }
  const header = request.headers[SESSION_HEADER];
  const sessionId = Array.isArray(header) ? header[0] : header;
  if (sessionId !== undefined) return handleSessionRequest(state, sessionId, request, reply);

  if (request.method !== 'POST') {
    // Without a session there is no stream to open or close; 405 is how the spec says so, and what clients
    // probing for the optional GET stream expect.
    void reply.header('allow', 'POST');
    jsonRpcError(reply, 405, -32000, 'Method not allowed without an Mcp-Session-Id: send POST requests, or initialize a session first.');
    return;
  }

  if (isInitializeRequest(body)) return startStreamableSession(state, request, reply);

  // Stateless: a client that keeps no session (or a one-off call). A throwaway server answers this one
  // POST with plain JSON; the protocol needs no prior initialize on the server side for tools.
  const server = createMcpServer(state.deps, { readOnly: state.readOnly(request) });
  const transport = new StreamableHTTPServerTransport({ ...state.rebinding(request), sessionIdGenerator: undefined, enableJsonResponse: true });
  reply.raw.once('close', () => void transport.close().catch(() => undefined));
  await server.connect(transport);
  await transport.handleRequest(request.raw, hijack(reply), body);
}

const hidden = { schema: { hide: true } };

/**
 * JSON-RPC routes: a lone surrogate in a tool's arguments is named by the tool's own check (core/mcp/tool.ts),
 * and a message may take the largest tool call's bytes and an envelope.
 */
function jsonRpcRoute(state: McpHttpState) {
  return { ...hidden, config: { ownTextCheck: true }, bodyLimit: Math.min(MAX_MESSAGE_BYTES, state.argumentBytes + ENVELOPE_BYTES) };
}

/** POST, GET and DELETE /mcp: streamable HTTP. */
function registerStreamableRoutes(app: FastifyInstance, state: McpHttpState): void {
  const mcpRoute = async (request: FastifyRequest, reply: FastifyReply) => {
    try {
      await handleStreamable(state, request, reply);
    } catch (error) {
      request.log.error({ err: error }, 'MCP streamable HTTP request failed');
      if (!reply.raw.headersSent) {
        if (reply.sent) reply.raw.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null }));
        else jsonRpcError(reply, 500, -32603, 'Internal server error');
      }
    }
  };
  app.post('/mcp', jsonRpcRoute(state), mcpRoute);
  app.get('/mcp', hidden, mcpRoute);
  app.delete('/mcp', hidden, mcpRoute);
}

/** The legacy HTTP+SSE transport: the stream at /mcp/v1/sse and its message endpoint /mcp/v1/messages. */
function registerSseRoutes(app: FastifyInstance, state: McpHttpState): void {
  const { sessions } = state;
  app.get('/mcp/v1/sse', hidden, async (request, reply) => {
    if (sessions.size >= state.maxSessions) return sendError(reply, 'unavailable', 'Too many open MCP sessions; try again later.');
    // The message endpoint sits next to this route, wherever the plugin is mounted.
    const endpoint = (request.routeOptions.url ?? '/mcp/v1/sse').replace(/sse$/, 'messages');
    const raw = hijack(reply);
    const transport = new SSEServerTransport(endpoint, raw, state.rebinding(request));
    const readOnly = state.readOnly(request);
    const server = createMcpServer(state.deps, { readOnly });
    const keepAlive = setInterval(() => {
      if (!raw.writableEnded) raw.write(': keepalive\n\n');
    }, state.keepAliveMs).unref();
    sessions.set(transport.sessionId, { kind: 'sse', transport, server, readOnly, keepAlive });
    transport.onclose = () => {
      clearInterval(keepAlive);
      sessions.delete(transport.sessionId);
    };
    try {
      await server.connect(transport);
    } catch (error) {
      request.log.error({ err: error }, 'MCP SSE stream failed to start');
      clearInterval(keepAlive);
      sessions.delete(transport.sessionId);
      if (!raw.headersSent) raw.writeHead(500).end();
    }
  });

  app.post('/mcp/v1/messages', jsonRpcRoute(state), async (request, reply) => {
    const body = request.body;
    if (body instanceof MalformedJson) return malformedJsonRpc(reply, body);
    const sessionId = (request.query as Record<string, unknown>).sessionId;
    const session = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (!session || session.kind !== 'sse') {
      return jsonRpcError(reply, 404, -32001, 'Session not found: open an SSE stream at /mcp/v1/sse and post to the endpoint it announces.');
    }
    if (refusedByScope(state, session, request, reply)) return reply;
    try {
      await session.transport.handlePostMessage(request.raw, hijack(reply), body);
    } catch (error) {
      request.log.error({ err: error }, 'MCP SSE message failed');
      if (!reply.raw.headersSent) reply.raw.writeHead(500).end();
    }
  });
}

/** REST access to the tools: GET /mcp/tools and POST /mcp/execute/{tool_name}. */
function registerRestToolRoutes(app: FastifyInstance, state: McpHttpState): void {
  const restFor = (request: FastifyRequest) => state.rest[state.readOnly(request) ? 'read' : 'full'];
  app.get(
    '/mcp/tools',
    {
      schema: {
        tags: ['mcp'],
        summary: 'List the MCP tools',
        description: 'The MCP tools with their JSON Schemas and annotations, as tools/list returns them (for a read-only token or server, only the tools that read).',
      },
    },
    async (request) => ({ tools: [...restFor(request).tools.values()].map((t) => t.listing) }),
  );

  app.post(
    '/mcp/execute/:tool_name',
    {
      config: { toolArguments: true },
      bodyLimit: state.argumentBytes + BODY_SLACK_BYTES,
      preParsing: async (request: FastifyRequest, _reply: FastifyReply, payload: unknown) => {
        await refuseOversizedArguments(state, request);
        return payload;
      },
      schema: {
        tags: ['mcp'],
        summary: 'Run an MCP tool',
        description:
          'Runs the tool with the JSON body as its arguments and returns the MCP tool result ({content, structuredContent?}). ' +
          '404 for an unknown tool, 403 (read_only) for a writing tool with a read-only token or server, 422 for invalid arguments, other tool errors with the status of their code.',
      },
    },
    async (request, reply) => {
      const name = (request.params as { tool_name: string }).tool_name;
      const rest = restFor(request);
      const tool = rest.tools.get(name);
      if (rest.withheld.has(name)) return sendError(reply, 'read_only', readOnlyMessage(name), [{ tool: name }]);
      if (!tool) {
        const available = [...rest.tools.keys()];
        const closest = available.filter((t) => editDistance(t, name) <= 2);
        const next = closest.length > 0 ? ` Did you mean ${closest.join(' or ')}?` : '';
        return sendError(reply, 'unknown_tool', `Unknown tool: ${name}.${next} GET /mcp/tools lists every tool: ${available.join(', ')}.`, [{ available }]);
      }
      const body = request.body;
      if (body instanceof MalformedJson) {
        if (body.refusal !== undefined) throw body.refusal;
        return sendError(reply, 'bad_request', `Malformed JSON body: ${body.message}`);
      }
      if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body))) {
        return sendError(reply, 'validation_error', 'The request body must be a JSON object of tool arguments.');
      }
      const result = await tool.call(body ?? {}, { signal: clientGone(reply) });
      if (result.isError) {
        const meta = result._meta?.[ERROR_META_KEY] as ToolErrorMeta | undefined;
        const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
        const code = meta?.code ?? 'tool_error';
        return sendError(reply, code, text, meta?.details ?? []);
      }
      return result;
    },
  );
}

export const mcpHttpPlugin: FastifyPluginAsync<McpHttpPluginOptions> = async (app, options) => {
  const state: McpHttpState = {
    deps: options.deps,
    sessions: new Map<string, Session>(),
    idleMs: options.sessionIdleMs ?? 30 * 60_000,
    maxSessions: options.maxSessions ?? 1000,
    keepAliveMs: options.sseKeepAliveMs ?? 15_000,
    rebinding: (request) => options.rebinding?.(request) ?? {},
    readOnly: (request) => options.scope?.(request) === 'read',
    rest: { full: createDocdexMcpServer(options.deps, { sessions: false }), read: createDocdexMcpServer(options.deps, { readOnly: true, sessions: false }) },
    toolArguments: new Map(),
    argumentBytes: MAX_MESSAGE_BYTES,
  };
  state.toolArguments = readToolArguments(state.rest.full);
  state.argumentBytes = Math.min(MAX_MESSAGE_BYTES, Math.max(0, ...[...state.toolArguments.values()].map((r) => r.bytes)));
  installJsonParser(app, state);
  app.addHook('onRequest', async (request, reply) => {
    if (options.auth && !(await options.auth(request))) return rejectUnauthorized(reply);
  });
  manageSessionLifetimes(app, state);
  registerStreamableRoutes(app, state);
  registerSseRoutes(app, state);
  registerRestToolRoutes(app, state);
};
