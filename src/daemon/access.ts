import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { ensureManagerToken } from '../core/agent/token.js';
import { bearerToken, createTokenChecker, rejectUnauthorized } from './auth.js';
import { checkBoundary, createBoundaryPolicy } from './boundary.js';
import type { DaemonDeps } from './app.js';
import { sendError } from './errors.js';

/**
 * Who may call a route, decided on the route the router matched (its registered URL and config), never on
 * the raw request URL: `/%6dcp` matches `/mcp` and gets `/mcp`'s rule.
 *
 * - `public`: anyone who passes the Host check (health, API docs).
 * - `api`: a REST/MCP token when API_AUTH is on.
 * - `mcp`: a REST/MCP token when MCP auth or API auth is on. Also the rule for unmatched requests, so a
 *   404 never answers where a token would be needed.
 * - `secret`: always a REST/MCP token, even on loopback with auth off (routes that return a secret). Without
 *   configured tokens such a route is closed over HTTP; the CLI reads the database directly.
 * - `manager`: always the manager token (/api/internal), besides each internal route's own check.
 *
 * A route may set `config: { access }`; otherwise its URL prefix decides, and anything not listed is `api`.
 */
export type RouteAccess = 'public' | 'api' | 'mcp' | 'secret' | 'manager';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
}

const ACCESS_BY_PREFIX: Array<[string, RouteAccess]> = [
  ['/health', 'public'],
  ['/docs', 'public'],
  ['/redoc', 'public'],
  ['/openapi.json', 'public'],
  ['/api/internal', 'manager'],
  ['/mcp', 'mcp'],
];

export function accessForUrl(url: string): RouteAccess {
  for (const [prefix, access] of ACCESS_BY_PREFIX) if (url === prefix || url.startsWith(`${prefix}/`)) return access;
  return 'api';
}

function routeAccess(request: FastifyRequest): RouteAccess {
  if (request.is404 || request.routeOptions.url === undefined) return 'mcp';
  return request.routeOptions.config.access ?? accessForUrl(request.routeOptions.url);
}

/**
 * Installs the daemon's front door: every route gets its access level at registration, and every request
 * passes the Host check, then (for writes, WebSocket upgrades and MCP) the Origin check, then the token check
 * its matched route needs. Call before any plugin or route is registered, so the hooks run first.
 */
export function installAccessControl(app: FastifyInstance, deps: DaemonDeps): void {
  const { config } = deps;
  const policy = createBoundaryPolicy({ bindHost: config.api.host, allowedHosts: config.api.allowedHosts, corsOrigins: config.api.corsOrigins });
  const checkToken = createTokenChecker(config.mcpAuth.tokens);
  const managerToken = async (request: FastifyRequest) => createTokenChecker([(await ensureManagerToken(deps.db.pool)).token])(bearerToken(request));

  app.addHook('onRoute', (route: RouteOptions) => {
    route.config = { ...route.config, access: route.config?.access ?? accessForUrl(route.url) };
  });

  app.addHook('onRequest', async (request, reply) => {
    const access = routeAccess(request);
    const refusal = checkBoundary(policy, request, access === 'mcp');
    if (refusal) return sendError(reply, refusal.code, refusal.message);
    if (request.method === 'OPTIONS' || access === 'public') return;
    if (access === 'manager') {
      if (!(await managerToken(request))) return rejectUnauthorized(reply, 'docdex-internal');
      return;
    }
    const needed = access === 'secret' || config.api.auth || (access === 'mcp' && config.mcpAuth.enabled);
    if (needed && !checkToken(bearerToken(request))) return rejectUnauthorized(reply);
  });
}
