import { createRequire } from 'node:module';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { readOnlyResult } from './tool.js';
import { createMcpSession, createSessionlessMcpSession } from './session.js';
import type { McpSession } from './session.js';
import type { DocdexTool, McpDeps } from './tool.js';
import { TRUST_NOTE } from './trust.js';
import { registerCancelCrawlTool } from './tools/cancel-crawl.js';
import { registerGetContentTool } from './tools/get-content.js';
import { registerGetCrawlStatusTool } from './tools/get-crawl-status.js';
import { registerGetPageMarkdownTool } from './tools/get-page-markdown.js';
import { registerGetProjectLibrariesTool } from './tools/get-project-libraries.js';
import { registerInitCrawlTool } from './tools/init-crawl.js';
import { registerAddLibraryTool } from './tools/add-library.js';
import { registerSearchLibrariesTool } from './tools/search-libraries.js';
import { registerSearchProjectTool } from './tools/search-project.js';
import { registerSyncProjectTool } from './tools/sync-project.js';

export type { McpDeps } from './tool.js';

const READING_INSTRUCTIONS = `docdex is a local index of code snippets from documentation sites, git repositories and package registries, with several versions of a library side by side.
Typical use: search_libraries to find a library's id (fuzzy by name), then get_content with that library_id (name, name@version or name@range such as react@^18.2) and a query to get code examples with their source URLs, then get_page_markdown with a source URL when you need the full page around a snippet.
Working in a project that docdex sync has recorded: get_project_libraries lists its libraries at the exact versions its lockfiles name, and search_project searches them all at those versions (over stdio the project defaults to the server's working directory). A version that is not indexed is said to be so, never answered from another version.
Answers stay within max_tokens (get_content default 5000) and say what was left out; get_page_markdown with a query returns only the matching sections of a page. A snippet already shown in this session is named in one line (fresh=true repeats it).
${TRUST_NOTE}`;
// Left out of a read-only server's instructions, whose tools cannot do it.
const WRITING_INSTRUCTIONS = `A project's library version that is not indexed: sync_project queues it. To index a library at the version a project uses: add_library with a spec such as npm:react@18.3.1 or a git URL with @tag; to crawl a docs site: init_crawl with start URLs. Follow either with get_crawl_status; stop a crawl with cancel_crawl.`;

function packageVersion(): string {
  try {
    // src/core/mcp and dist/core/mcp are both three levels below the package root.
    const pkg = createRequire(import.meta.url)('../../../package.json') as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

export interface DocdexMcpServer {
  server: McpServer;
  /** What this server's session remembers between calls (snippets already shown). */
  session: McpSession;
  /** The tools this server lists and runs, by name, with their validated entry points (used by the REST tool endpoint). */
  tools: ReadonlyMap<string, DocdexTool>;
  /** The writing tools a read-only server leaves out and refuses with `read_only`; empty otherwise. */
  withheld: ReadonlySet<string>;
}

export interface McpServerOptions {
  /** Serve only tools that change nothing (a session opened with a `:read` token). MCP_READ_ONLY=true makes every server so. */
  readOnly?: boolean;
  /**
   * False for a server that answers many clients without sessions (the REST tool endpoint): nothing is
   * remembered between calls, so no answer refers to what another client was shown. Default true.
   */
  sessions?: boolean;
}

const INSTRUCTIONS = `${READING_INSTRUCTIONS}\n${WRITING_INSTRUCTIONS}`;
const INSTRUCTIONS_READ_ONLY = `${READING_INSTRUCTIONS}\nThis connection is read-only: the tools that add libraries or start or cancel crawls are not available.`;

/**
 * The one MCP server factory every transport uses (stdio, streamable HTTP, SSE, REST tool access). Cheap:
 * HTTP transports create one per session and share `deps` (the pool) between all of them. A read-only server
 * (`options.readOnly` or MCP_READ_ONLY) does not list the tools that write (`DocdexTool.writes`, from each
 * tool's readOnlyHint) and answers calls to them with a `read_only` isError result. Each server has its own
 * session state (createMcpSession), never shared with another server.
 */
export function createDocdexMcpServer(deps: McpDeps, options: McpServerOptions = {}): DocdexMcpServer {
  const readOnly = options.readOnly === true || deps.config.mcp.readOnly;
  // The same pool and settings; only what the tools may tell the model to do differs between servers.
  const serverDeps: McpDeps = { ...deps, readOnly };
  const session = options.sessions === false ? createSessionlessMcpSession() : createMcpSession();
  const server = new McpServer({ name: 'docdex', title: 'docdex documentation index', version: packageVersion() }, { instructions: readOnly ? INSTRUCTIONS_READ_ONLY : INSTRUCTIONS });
  const list = [
    registerSearchLibrariesTool(server, serverDeps),
    registerGetContentTool(server, serverDeps, session),
    registerGetPageMarkdownTool(server, serverDeps),
    registerInitCrawlTool(server, serverDeps),
    registerAddLibraryTool(server, serverDeps),
    registerGetCrawlStatusTool(server, serverDeps),
    registerCancelCrawlTool(server, serverDeps),
    registerGetProjectLibrariesTool(server, serverDeps),
    registerSearchProjectTool(server, serverDeps, session),
    registerSyncProjectTool(server, serverDeps),
  ];
  const withheld = new Set(readOnly ? list.filter((t) => t.writes).map((t) => t.name) : []);
  for (const tool of list) if (withheld.has(tool.name)) tool.remove();
  const tools = new Map(list.filter((t) => !withheld.has(t.name)).map((t) => [t.name, t]));

  // The SDK's own tools/call handler reports an unknown tool as an isError result. The specification
  // (2025-11-25, "Error Handling") lists unknown tools under protocol errors, and a model cannot fix a
  // tool name anyway, so this dispatcher answers with JSON-RPC -32602 instead. Argument validation and tool
  // failures stay isError results (SEP-1303), produced by each tool's `call`.
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = tools.get(request.params.name);
    if (withheld.has(request.params.name)) return readOnlyResult(request.params.name);
    if (!tool) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}. Available tools: ${[...tools.keys()].join(', ')}.`);
    }
    return tool.call(request.params.arguments, { signal: extra.signal });
  });
  return { server, session, tools, withheld };
}

export function createMcpServer(deps: McpDeps, options: McpServerOptions = {}): McpServer {
  return createDocdexMcpServer(deps, options).server;
}
