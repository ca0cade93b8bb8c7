import ipaddr from 'ipaddr.js';
import type { FastifyRequest } from 'fastify';
import { isLoopbackHost } from '../core/config.js';

/**
 * Who may reach the daemon at all, decided before any route runs: the `Host` header (DNS rebinding) and the
 * `Origin` header (cross-site writes from a browser). Pure functions over header values and the connection's
 * own address, so the hook in app.ts and the MCP transports' options come from one policy.
 *
 * Host: a loopback name (`localhost`, any four-part 127/8 literal, `[::1]`) is accepted when the daemon is
 * bound to loopback or the connection arrived on a loopback address; otherwise only the bound address (the
 * address the connection arrived on), the bound name, and `API_ALLOWED_HOSTS`. A port in the header must be
 * the port the connection arrived on (an `API_ALLOWED_HOSTS` entry with a port matches that port exactly):
 * the same rule the MCP SDK's own check applies, so both agree.
 *
 * Origin: absent (curl, scripts, the CLI), in `API_CORS_ORIGINS`, or the daemon's own origin (the /docs page).
 */

export interface HostName {
  /** Lower-case name, IPv4 literal, or bracketed canonical IPv6 literal (`[::1]`). */
  name: string;
  port: number | undefined;
}

export interface BoundaryPolicy {
  /** The address or name the daemon listens on (API_HOST or `serve --host`). */
  bindHost: string;
  allowedHosts: HostName[];
  /** API_CORS_ORIGINS, normalised to `scheme://host[:port]`. */
  corsOrigins: string[];
}

/** Where a request arrived: the socket's own address and port (undefined for injected requests). */
export interface Arrival {
  localAddress: string | undefined;
  localPort: number | undefined;
}

const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[a-z0-9][a-z0-9.-]{0,252})(?::(\d{1,5}))?$/;

/** Parses a Host header value strictly: no user info, no path, no spaces; undefined when malformed. */
export function parseHostHeader(value: string | undefined): HostName | undefined {
  if (value === undefined) return undefined;
  const match = HOST_HEADER.exec(value.toLowerCase());
  if (!match) return undefined;
  const port = match[2] === undefined ? undefined : Number(match[2]);
  if (port !== undefined && (port < 1 || port > 65535)) return undefined;
  let name = match[1]!;
  if (name.startsWith('[')) {
    const inner = name.slice(1, -1);
    if (!ipaddr.IPv6.isValid(inner)) return undefined;
    name = `[${ipaddr.IPv6.parse(inner).toString()}]`;
  }
  return { name, port };
}

/** The canonical form of an address as a Host name: IPv4-mapped IPv6 unwrapped, IPv6 bracketed. */
function addressAsHostName(address: string | undefined): string | undefined {
  if (address === undefined) return undefined;
  const bare = address.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(bare)) return address.toLowerCase();
  const parsed = ipaddr.process(bare);
  return parsed.kind() === 'ipv6' ? `[${parsed.toString()}]` : parsed.toString();
}

function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name === '[::1]' || (!name.startsWith('[') && isLoopbackHost(name));
}

function isWildcard(address: string | undefined): boolean {
  return address === '0.0.0.0' || address === '[::]' || address === '::';
}

export function createBoundaryPolicy(options: { bindHost: string; allowedHosts: string[]; corsOrigins: string[] }): BoundaryPolicy {
  return {
    bindHost: options.bindHost,
    allowedHosts: options.allowedHosts.map(parseHostHeader).filter((h): h is HostName => h !== undefined),
    corsOrigins: options.corsOrigins.map(normaliseOrigin).filter((o): o is string => o !== undefined),
  };
}

/** The names this daemon answers to on this connection, without ports. */
function ownNames(policy: BoundaryPolicy, arrival: Arrival): string[] {
  const names: string[] = [];
  const local = addressAsHostName(arrival.localAddress);
  const bound = addressAsHostName(policy.bindHost);
  if (isLoopbackHost(policy.bindHost) || (local !== undefined && isLoopbackName(local))) names.push('localhost', '127.0.0.1', '[::1]');
  if (local !== undefined) names.push(local);
  if (bound !== undefined && !isWildcard(bound)) names.push(bound);
  return [...new Set(names)];
}

/** Whether the Host header names this daemon. Anything malformed or missing is refused. */
export function hostAllowed(policy: BoundaryPolicy, header: string | undefined, arrival: Arrival): boolean {
  const host = parseHostHeader(header);
  if (!host) return false;
  const portMatches = host.port === undefined || arrival.localPort === undefined || host.port === arrival.localPort;
  for (const entry of policy.allowedHosts) {
    if (entry.name === host.name && (entry.port === undefined ? portMatches : entry.port === host.port)) return true;
  }
  if (!portMatches) return false;
  if (isLoopbackName(host.name) && ownNames(policy, arrival).includes('localhost')) return true;
  return ownNames(policy, arrival).includes(host.name);
}

/** `scheme://host[:port]` of an origin, or undefined for anything that is not one (including "null"). */
export function normaliseOrigin(value: string): string | undefined {
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return url.origin.toLowerCase();
  } catch {
    return undefined;
  }
}

/** Whether a present Origin header is allowed: listed in API_CORS_ORIGINS, or the daemon's own origin. */
export function originAllowed(policy: BoundaryPolicy, origin: string, hostHeader: string | undefined): boolean {
  const normalised = normaliseOrigin(origin);
  if (normalised === undefined) return false;
  if (policy.corsOrigins.includes(normalised)) return true;
  const own = parseHostHeader(hostHeader);
  const from = parseHostHeader(new URL(normalised).host);
  if (!own || !from) return false;
  const defaultPort = normalised.startsWith('https:') ? 443 : 80;
  return own.name === from.name && (own.port ?? defaultPort) === (from.port ?? defaultPort);
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Requests a browser page could use to change state or open a channel: writes, WebSocket upgrades, MCP. */
export function needsOriginCheck(request: FastifyRequest, isMcp: boolean): boolean {
  return !SAFE_METHODS.has(request.method) || request.headers.upgrade !== undefined || isMcp;
}

export type BoundaryRefusal = { code: 'host_not_allowed' | 'origin_not_allowed'; message: string };

function shown(value: string): string {
  return JSON.stringify(value.length > 100 ? `${value.slice(0, 97)}...` : value);
}

/** The Host and Origin decision for one request; undefined when it may proceed to authentication. */
export function checkBoundary(policy: BoundaryPolicy, request: FastifyRequest, isMcp: boolean): BoundaryRefusal | undefined {
  const host = request.headers.host;
  const arrival = { localAddress: request.socket.localAddress, localPort: request.socket.localPort };
  if (!hostAllowed(policy, host, arrival)) {
    return {
      code: 'host_not_allowed',
      message: `Host ${host === undefined ? '(none)' : shown(host)} is not served here: this daemon answers only its own names. Add a reverse proxy's name to API_ALLOWED_HOSTS.`,
    };
  }
  if (!needsOriginCheck(request, isMcp)) return undefined;
  const origin = request.headers.origin;
  const allowed = typeof origin === 'string' ? originAllowed(policy, origin, host) : origin === undefined;
  if (allowed && !(origin === undefined && request.headers['sec-fetch-site'] === 'cross-site')) return undefined;
  return {
    code: 'origin_not_allowed',
    message: `Cross-site request refused (Origin ${typeof origin === 'string' ? shown(origin) : '(none)'}): list the web app's origin in API_CORS_ORIGINS.`,
  };
}

/** Options for the MCP SDK's own DNS-rebinding protection: the exact Host and Origin values this policy accepts. */
export function mcpRebindingOptions(policy: BoundaryPolicy, request: FastifyRequest): { enableDnsRebindingProtection: true; allowedHosts: string[]; allowedOrigins: string[] } {
  const arrival = { localAddress: request.socket.localAddress, localPort: request.socket.localPort };
  const withPorts = (name: string) => (arrival.localPort === undefined ? [name] : [name, `${name}:${arrival.localPort}`]);
  const hosts = [...ownNames(policy, arrival).flatMap(withPorts), ...policy.allowedHosts.flatMap((h) => (h.port === undefined ? withPorts(h.name) : [`${h.name}:${h.port}`]))];
  const origins = [...policy.corsOrigins, ...hosts.flatMap((h) => [`http://${h}`, `https://${h}`])];
  return { enableDnsRebindingProtection: true, allowedHosts: [...new Set(hosts)], allowedOrigins: [...new Set(origins)] };
}
