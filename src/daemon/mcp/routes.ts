import type { RouteModule } from '../app.js';
import { mcpHttpPlugin } from './http.js';

/**
 * MCP on the daemon: streamable HTTP at /mcp, legacy SSE at /mcp/v1/sse, REST tool access at /mcp/tools and
 * /mcp/execute/{tool}. Bearer auth for these paths is enforced by the daemon's onRequest hook (app.ts).
 */
export const registerMcpRoutes: RouteModule = async (app, deps) => {
  await app.register(mcpHttpPlugin, {
    deps: {
      pool: deps.db.pool,
      info: deps.db.info,
      config: deps.config,
      onError: (error, context) => app.log.error({ err: error, tool: context.tool }, 'MCP tool failed'),
    },
  });
};

export const mcpRoutes: RouteModule[] = [registerMcpRoutes];
