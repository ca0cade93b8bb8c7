import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { ensureManagerToken } from '../core/agent/token.js';
import type { TokenScope } from '../core/auth-token.js';
import { SECRET_ROUTE_UNAUTHORIZED, bearerToken, createScopedTokenChecker, createTokenChecker, rejectUnauthorized } from './auth.js';
import { checkBoundary, createBoundaryPolicy } from './boundary.js';
import type { DaemonDeps } from './deps.js';
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
 *
 * A token listed with `:read` (core/auth-token.ts) may use `api` routes only to read: GET and HEAD, and
 * routes that declare `config: { readOnly: true }` (a search sent as POST). `secret` routes are closed to it
 * (a secret such as the manager token would open writes elsewhere). On `mcp` routes the MCP server applies the
 * scope itself, per tool (`request.tokenScope`). The scope of a valid token applies even where no token is
 * needed, so a client given a read token is read-only everywhere.
 */
export type RouteAccess = 'public' | 'api' | 'mcp' | 'secret' | 'manager';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
    /** The route changes nothing, whatever its method: a read-only token may call it. */
    readOnly?: boolean;
  }
  interface FastifyRequest {
    /** What the request's bearer token may do; `full` without one where none is needed. Set by the access hook. */
    tokenScope: TokenScope;
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

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether a request made with a read-only token may go on to its route (see the rule at the top). */
function readScopeAllows(request: FastifyRequest, access: RouteAccess): boolean {
  if (access === 'public' || access === 'mcp') return true;
  if (access !== 'api') return false;
  return SAFE_METHODS.has(request.method) || request.routeOptions.config.readOnly === true;
}

/**
 * Installs the daemon's front door: every route gets its access level at registration, and every request
 * passes the Host check, then (for writes, WebSocket upgrades and MCP) the Origin check, then the token check
 * its matched route needs. Call before any plugin or route is registered, so the hooks run first.
 */
export function installAccessControl(app: FastifyInstance, deps: DaemonDeps): void {
  const { config } = deps;
  const policy = createBoundaryPolicy({ bindHost: config.api.host, allowedHosts: config.api.allowedHosts, corsOrigins: config.api.corsOrigins });
  const checkToken = createScopedTokenChecker(config.mcpAuth.tokens);
  const managerToken = async (request: FastifyRequest) => createTokenChecker([(await ensureManagerToken(deps.db.pool)).token])(bearerToken(request));

  app.decorateRequest('tokenScope', 'full');
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
    const scope = checkToken(bearerToken(request));
    const needed = access === 'secret' || config.api.auth || (access === 'mcp' && config.mcpAuth.enabled);
    if (needed && scope === undefined) return access === 'secret' ? rejectUnauthorized(reply, 'docdex', SECRET_ROUTE_UNAUTHORIZED) : rejectUnauthorized(reply);
    request.tokenScope = scope ?? 'full';
    if (request.tokenScope === 'read' && !readScopeAllows(request, access)) {
      return sendError(reply, 'read_only', `This token is read-only (listed with :read): it may not call ${request.method} ${request.routeOptions.url ?? request.url}.`);
    }
  });
}
