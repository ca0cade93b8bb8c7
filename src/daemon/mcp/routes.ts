import type { RouteModule } from '../deps.js';
import { createBoundaryPolicy, mcpRebindingOptions } from '../boundary.js';
import { mcpHttpPlugin } from './http.js';

/**
 * MCP on the daemon: streamable HTTP at /mcp, legacy SSE at /mcp/v1/sse, REST tool access at /mcp/tools and
 * /mcp/execute/{tool}. Bearer auth, Host and Origin for these paths are enforced by the daemon's onRequest
 * hook (access.ts); the SDK's own DNS-rebinding protection checks the same policy again in each transport.
 */
export const registerMcpRoutes: RouteModule = async (app, deps) => {
  const policy = createBoundaryPolicy({ bindHost: deps.config.api.host, allowedHosts: deps.config.api.allowedHosts, corsOrigins: deps.config.api.corsOrigins });
  await app.register(mcpHttpPlugin, {
    rebinding: (request) => mcpRebindingOptions(policy, request),
    scope: (request) => request.tokenScope,
    deps: {
      pool: deps.db.pool,
      info: deps.db.info,
      config: deps.config,
      onError: (error, context) => app.log.error({ err: error, tool: context.tool }, 'MCP tool failed'),
    },
  });
};

export const mcpRoutes: RouteModule[] = [registerMcpRoutes];
