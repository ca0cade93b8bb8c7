import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type pg from 'pg';
import { z } from 'zod';
import type { Config } from '../config.js';
import type { ConnectionInfo } from '../db/connect.js';
import { databaseInputError, databaseUnavailableError } from '../db/errors.js';
import { isUserError } from '../errors.js';
import type { ErrorCode } from '../errors.js';
import { findIllFormedText, illFormedTextMessage } from '../well-formed.js';

/** What every docdex MCP tool may use. The transports build it once and share it between sessions. */
export interface McpDeps {
  pool: pg.Pool;
  info: ConnectionInfo;
  config: Config;
  /** Called with every unexpected (non-user) error a tool hits; the transport logs it. Core never prints. */
  onError?: (error: unknown, context: { tool: string }) => void;
  /**
   * The stdio server's working directory: the project the project tools use when a call names none, and the
   * directory `sync_project` reads. Unset over HTTP, where the server's directory says nothing about the
   * caller's project and only a recorded project may be synced (the server never reads a directory a client names).
   */
  localProjectDir?: string;
  /**
   * Set by createDocdexMcpServer for its own tools: the server leaves out the tools that write, so answers must
   * not tell the model to call them (a read-only answer names the CLI command instead, see project.ts).
   */
  readOnly?: boolean;
}

/** A tool's answer: text written for a model to read, and optionally the same facts as structured data. */
export interface ToolOutput {
  text: string;
  structured?: Record<string, unknown>;
}

/**
 * Machine-readable error facts carried in an isError result's `_meta`, so that the REST tool endpoint can
 * choose an HTTP status without parsing the text. MCP clients ignore unknown `_meta` keys.
 */
export const ERROR_META_KEY = 'docdex/error';
export interface ToolErrorMeta {
  code: ErrorCode;
  details: unknown[];
}

export interface DocdexTool {
  name: string;
  /**
   * Whether the tool changes anything (starts, cancels or adds work): the opposite of its `readOnlyHint`
   * annotation, the one place each tool declares it. Read-only servers neither list nor run such tools.
   */
  writes: boolean;
  /** The tool as tools/list describes it (JSON Schemas as the SDK renders them: draft-7, input side). */
  listing: Tool;
  /** Validates the raw arguments and runs the tool; never throws: every failure is an isError result. */
  call(args: unknown, context?: ToolContext): Promise<CallToolResult>;
  /** Takes the tool off the server it was registered on (tools/list); for read-only servers, before connecting. */
  remove(): void;
}

/** The call's circumstances: `signal` aborts when the client cancels the request or goes away. */
export interface ToolContext {
  signal?: AbortSignal;
}

export interface ToolDefinition<S extends z.ZodObject> {
  name: string;
  title: string;
  description: string;
  inputSchema: S;
  outputSchema?: z.ZodObject;
  annotations: ToolAnnotations;
  run(args: z.output<S>, context: ToolContext): Promise<ToolOutput>;
}

function errorResult(text: string, meta: ToolErrorMeta): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true, _meta: { [ERROR_META_KEY]: meta } };
}

function describePath(path: ReadonlyArray<PropertyKey>): string {
  return path.length === 0 ? 'arguments' : path.map(String).join('.');
}

/** A validation failure phrased so a model can fix its call: which argument, what is wrong, what to do. */
export function validationErrorResult(tool: string, error: z.ZodError): CallToolResult {
  const lines = error.issues.map((issue) => `- ${describePath(issue.path)}: ${issue.message}`);
  const details = error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message, code: issue.code }));
  return errorResult(`Invalid arguments for ${tool}:\n${lines.join('\n')}\nFix these arguments and call ${tool} again.`, { code: 'validation_error', details });
}

/** Arguments holding a lone surrogate (core/well-formed.ts), refused before validation with the argument named. */
function illFormedResult(tool: string, path: ReadonlyArray<string | number>): CallToolResult {
  const field = describePath(path);
  return errorResult(`Invalid arguments for ${tool}:\n- ${illFormedTextMessage(field)}\nFix these arguments and call ${tool} again.`, {
    code: 'validation_error',
    details: [{ path: path.map(String).join('.'), message: 'lone UTF-16 surrogate', code: 'ill_formed_text' }],
  });
}

/** Why a writing tool was refused, phrased for a model (and the REST endpoint's error text). */
export function readOnlyMessage(tool: string): string {
  return `${tool} changes the index, and this MCP connection is read-only (the server runs with MCP_READ_ONLY=true, or the token is listed with :read). Only tools that read are available here; ask the user to run ${tool} with full access.`;
}

/** The answer to a writing tool on a read-only server: an isError result with the code `read_only`. */
export function readOnlyResult(tool: string): CallToolResult {
  return errorResult(readOnlyMessage(tool), { code: 'read_only', details: [{ tool }] });
}

export function toolErrorResult(tool: string, error: unknown, deps: Pick<McpDeps, 'onError'>): CallToolResult {
  const refused = databaseInputError(error) ?? databaseUnavailableError(error);
  if (refused) return errorResult(`${refused.message}\n${refused.hint ?? ''}`.trim(), { code: refused.code, details: [] });
  if (isUserError(error)) {
    const text = error.hint ? `${error.message}\n${error.hint}` : error.message;
    return errorResult(text, { code: error.code, details: error.details ?? [] });
  }
  deps.onError?.(error, { tool });
  return errorResult(`docdex failed while running ${tool} (internal error; it has been logged). Retrying will probably fail the same way.`, {
    code: 'internal_error',
    details: [],
  });
}

/**
 * Registers one tool on the server and returns its validated entry point. Validation runs here (not only in
 * the SDK) so that every path into a tool, including the REST endpoint and the server's own dispatcher,
 * reports bad arguments the same way: as an isError result a model can act on.
 */
export function registerDocdexTool<S extends z.ZodObject>(server: McpServer, deps: McpDeps, def: ToolDefinition<S>): DocdexTool {
  const call = async (args: unknown, context: ToolContext = {}): Promise<CallToolResult> => {
    const illFormed = findIllFormedText(args);
    if (illFormed !== null) return illFormedResult(def.name, illFormed.path);
    const parsed = await def.inputSchema.safeParseAsync(args ?? {});
    if (!parsed.success) return validationErrorResult(def.name, parsed.error);
    try {
      const output = await def.run(parsed.data, context);
      return {
        content: [{ type: 'text', text: output.text }],
        ...(output.structured === undefined ? {} : { structuredContent: output.structured }),
      };
    } catch (error) {
      return toolErrorResult(def.name, error, deps);
    }
  };
  const annotations = { title: def.title, ...def.annotations };
  // Widened to the non-generic object type: the SDK's callback type is conditional on the schema type and
  // cannot be resolved for a type parameter.
  const inputSchema: z.ZodObject = def.inputSchema;
  const registered = server.registerTool(
    def.name,
    {
      title: def.title,
      description: def.description,
      inputSchema,
      ...(def.outputSchema === undefined ? {} : { outputSchema: def.outputSchema }),
      annotations,
    },
    (args, extra) => call(args, { signal: extra.signal }),
  );
  const listing: Tool = {
    name: def.name,
    title: def.title,
    description: def.description,
    inputSchema: z.toJSONSchema(def.inputSchema, { target: 'draft-7', io: 'input' }) as Tool['inputSchema'],
    ...(def.outputSchema === undefined ? {} : { outputSchema: z.toJSONSchema(def.outputSchema, { target: 'draft-7', io: 'output' }) as Tool['outputSchema'] }),
    annotations,
  };
  return { name: def.name, writes: def.annotations.readOnlyHint !== true, listing, call, remove: () => registered.remove() };
}
