import { createRequire } from 'node:module';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { DocdexTool, McpDeps } from './tool.js';
import { registerCancelCrawlTool } from './tools/cancel-crawl.js';
import { registerGetContentTool } from './tools/get-content.js';
import { registerGetCrawlStatusTool } from './tools/get-crawl-status.js';
import { registerGetPageMarkdownTool } from './tools/get-page-markdown.js';
import { registerInitCrawlTool } from './tools/init-crawl.js';
import { registerAddLibraryTool } from './tools/add-library.js';
import { registerSearchLibrariesTool } from './tools/search-libraries.js';
import { registerSyncProjectTool } from './tools/sync-project.js';

export type { McpDeps } from './tool.js';

const INSTRUCTIONS = `docdex is a local index of code snippets from documentation sites, git repositories and package registries, with several versions of a library side by side.
Typical use: search_libraries to find a library's id (fuzzy by name), then get_content with that library_id (name, name@version or name@range such as react@^18.2) and a query to get code examples with their source URLs, then get_page_markdown with a source URL when you need the full page around a snippet.
To index a library at the version a project uses: add_library with a spec such as npm:react@18.3.1 or a git URL with @tag; to crawl a docs site: init_crawl with start URLs. Follow either with get_crawl_status; stop a crawl with cancel_crawl.`;

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
  /** The tools by name, with their validated entry points (used by the REST tool endpoint). */
  tools: ReadonlyMap<string, DocdexTool>;
}

/**
 * The one MCP server factory every transport uses (stdio, streamable HTTP, SSE, REST tool access). Cheap:
 * HTTP transports create one per session and share `deps` (the pool) between all of them.
 */
export function createDocdexMcpServer(deps: McpDeps): DocdexMcpServer {
  const server = new McpServer({ name: 'docdex', title: 'docdex documentation index', version: packageVersion() }, { instructions: INSTRUCTIONS });
  const list = [
    registerSearchLibrariesTool(server, deps),
    registerGetContentTool(server, deps),
    registerGetPageMarkdownTool(server, deps),
    registerInitCrawlTool(server, deps),
    registerAddLibraryTool(server, deps),
    registerGetCrawlStatusTool(server, deps),
    registerCancelCrawlTool(server, deps),
    registerSyncProjectTool(server, deps),
  ];
  const tools = new Map(list.map((t) => [t.name, t]));

  // The SDK's own tools/call handler reports an unknown tool as an isError result. The specification
  // (2025-11-25, "Error Handling") lists unknown tools under protocol errors, and a model cannot fix a
  // tool name anyway, so this dispatcher answers with JSON-RPC -32602 instead. Argument validation and tool
  // failures stay isError results (SEP-1303), produced by each tool's `call`.
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = tools.get(request.params.name);
    if (!tool) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}. Available tools: ${[...tools.keys()].join(', ')}.`);
    }
    return tool.call(request.params.arguments, { signal: extra.signal });
  });
  return { server, tools };
}

export function createMcpServer(deps: McpDeps): McpServer {
  return createDocdexMcpServer(deps).server;
}
