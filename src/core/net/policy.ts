import { lookup as dnsLookup } from 'node:dns/promises';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The one outbound policy: every connection docdex opens on behalf of somebody else's input (crawled pages,
 * each redirect hop, robots.txt, sitemaps, web push) goes to a public address, unless an operator admitted
 * the target in CRAWL_ALLOW_HOSTS. The decision is made on the address actually connected to, inside the
 * connector, after DNS: a name that resolves to a public address when validated and to 127.0.0.1 when
 * fetched (DNS rebinding) is refused, because only addresses that passed the check are ever dialled.
 */

export const OUTBOUND_REFUSED = 'OUTBOUND_REFUSED';

export type AllowEntry = { kind: 'cidr'; cidr: [ipaddr.IPv4 | ipaddr.IPv6, number]; text: string } | { kind: 'host'; name: string };

export interface OutboundPolicy {
  /** CRAWL_ALLOW_HOSTS: CIDRs and host names admitted whatever their address. */
  allow: readonly AllowEntry[];
  /** A crawl started by the local user (CLI, TUI) may reach loopback, and only loopback, without the allow-list. */
  allowLoopback: boolean;
}

/** Resolves a host name to every address it has, like `dns.lookup(name, { all: true })`; tests inject one. */
export type Resolve = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export class OutboundRefusedError extends Error {
  readonly code = OUTBOUND_REFUSED;
  constructor(
    message: string,
    readonly address: string,
  ) {
    super(message);
    this.name = 'OutboundRefusedError';
  }
}

const RANGE_NAMES: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address',
  carrierGradeNat: 'a carrier-grade NAT address',
  unspecified: 'an unspecified address',
  uniqueLocal: 'a unique local address',
  multicast: 'a multicast address',
  broadcast: 'a broadcast address',
  reserved: 'a reserved address',
};

function normalizeName(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, '');
}

export function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** One CRAWL_ALLOW_HOSTS entry: `10.0.0.0/8`, `fd00::/8`, `127.0.0.1`, `[::1]` or a host name. Throws on anything else. */
export function parseAllowEntry(raw: string): AllowEntry {
  const text = stripBrackets(raw.trim());
  if (text.includes('/')) {
    try {
      return { kind: 'cidr', cidr: ipaddr.parseCIDR(text), text };
    } catch {
      throw new Error(`${JSON.stringify(raw)} is not a CIDR range like 10.0.0.0/8`);
    }
  }
  const address = parseAddress(text);
  if (address) {
    return { kind: 'cidr', cidr: [address, address.kind() === 'ipv4' ? 32 : 128], text };
  }
  const name = normalizeName(text);
  if (!/^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/.test(name)) {
    throw new Error(`${JSON.stringify(raw)} is neither a CIDR range, an IP address nor a host name`);
  }
  return { kind: 'host', name };
}

/** CRAWL_ALLOW_HOSTS as a list: comma-separated entries, blanks ignored. */
export function parseAllowHosts(raw: string | undefined): AllowEntry[] {
  return (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map(parseAllowEntry);
}

/** The address Node would dial, or null when `ip` is not one Node accepts (ipaddr.js and Node differ on zones). */
function parseAddress(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (net.isIP(ip) === 0) return null;
  try {
    return ipaddr.parse(ip);
  } catch {
    return null;
  }
}

/** An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is the IPv4 address it carries. */
function effectiveAddress(address: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() ? address.toIPv4Address() : address;
}

function ipv4From(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

function inRange(parts: readonly number[], prefix: readonly number[]): boolean {
  return prefix.every((part, i) => parts[i] === part);
}

/**
 * The IPv4 addresses an IPv6 address carries, in every form that tunnels or translates to them, so each can be
 * judged as the IPv4 address it leads to:
 * - IPv4-compatible `::a.b.c.d` (deprecated; `::` and `::1` are themselves), IPv4-translated `::ffff:0:a.b.c.d`;
 * - NAT64 `64:ff9b::/96`, and the local-use `64:ff9b:1::/48` at each place RFC 6052 allows for its prefix lengths;
 * - 6to4 `2002:AABB:CCDD::/48`;
 * - Teredo `2001:0:SSSS:SSSS:…:CCCC:CCCC`: the server and the client (stored inverted);
 * - an ISATAP interface identifier `…:0:5efe:a.b.c.d` (or `200:5efe`) under any prefix.
 * IPv4-mapped addresses are converted whole by effectiveAddress. Never throws.
 */
export function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] {
  const p = address.parts;
  const found: ipaddr.IPv4[] = [];
  if (inRange(p, [0, 0, 0, 0, 0, 0]) && (p[6] !== 0 || p[7]! > 1)) found.push(ipv4From(p[6]!, p[7]!));
  if (inRange(p, [0, 0, 0, 0, 0xffff, 0])) found.push(ipv4From(p[6]!, p[7]!));
  if (inRange(p, [0x64, 0xff9b, 0, 0, 0, 0])) found.push(ipv4From(p[6]!, p[7]!));
  if (inRange(p, [0x64, 0xff9b, 1])) {
    // RFC 6052 at prefix lengths /96, /64, /56 and /48; bits 64..71 (the "u" octet) are never part of the address.
    const [p3, p4, p5, p6, p7] = [p[3]!, p[4]!, p[5]!, p[6]!, p[7]!];
    found.push(ipv4From(p6, p7), ipv4From(((p4 & 0xff) << 8) | (p5 >> 8), ((p5 & 0xff) << 8) | (p6 >> 8)));
    found.push(ipv4From(((p3 & 0xff) << 8) | (p4 & 0xff), p5), ipv4From(p3, ((p4 & 0xff) << 8) | (p5 >> 8)));
  }
  if (p[0] === 0x2002) found.push(ipv4From(p[1]!, p[2]!));
  if (p[0] === 0x2001 && p[1] === 0) found.push(ipv4From(p[2]!, p[3]!), ipv4From(~p[6]! & 0xffff, ~p[7]! & 0xffff));
  if ((p[4]! & 0xfcff) === 0 && p[5] === 0x5efe) found.push(ipv4From(p[6]!, p[7]!));
  return found;
}

function inAllowList(address: ipaddr.IPv4 | ipaddr.IPv6, allow: readonly AllowEntry[]): boolean {
  return allow.some((entry) => entry.kind === 'cidr' && entry.cidr[0].kind() === address.kind() && address.match(entry.cidr));
}

/** True when the operator listed this host (by name, or its IP literal by CIDR) in CRAWL_ALLOW_HOSTS. */
export function hostExplicitlyAllowed(hostname: string, allow: readonly AllowEntry[]): boolean {
  const host = stripBrackets(hostname);
  const address = parseAddress(host);
  if (address) return inAllowList(effectiveAddress(address), allow);
  return hostAllowListed(host, allow);
}

export function hostAllowListed(hostname: string, allow: readonly AllowEntry[]): boolean {
  const name = normalizeName(stripBrackets(hostname));
  return allow.some((entry) => entry.kind === 'host' && entry.name === name);
}

/**
 * Why an IP address may not be connected to under `policy`, or null when it may. Only ordinary unicast is
 * public; every special-purpose range (6to4, NAT64, Teredo and the like included) is refused unless listed.
 */
export function refusalFor(ip: string, policy: OutboundPolicy, host?: string): string | null {
  const parsed = parseAddress(stripBrackets(ip));
  if (!parsed) return `refused: ${JSON.stringify(ip.slice(0, 100))} is not an IP address`;
  const address = effectiveAddress(parsed);
  const shown = address.toString();
  const subject = host && normalizeName(stripBrackets(host)) !== shown && net.isIP(stripBrackets(host)) === 0 ? `${host} resolves to ${shown},` : `${shown} is`;
  // An IPv6 form that leads to an IPv4 address is refused when that address would be, whatever its own range.
  for (const carried of address instanceof ipaddr.IPv6 ? embeddedIPv4(address) : []) {
    const kind = refusedKind(carried, policy);
    if (kind !== null) return `refused: ${subject} ${kind} in IPv6 form (it carries ${carried.toString()}); add it to CRAWL_ALLOW_HOSTS to crawl internal docs`;
  }
  const kind = refusedKind(address, policy);
  return kind === null ? null : `refused: ${subject} ${kind}; add it to CRAWL_ALLOW_HOSTS to crawl internal docs`;
}

/** What kind of address `address` is when `policy` refuses it, or null when it may be dialled. */
function refusedKind(address: ipaddr.IPv4 | ipaddr.IPv6, policy: OutboundPolicy): string | null {
  const range = address.range();
  if (range === 'unicast' || inAllowList(address, policy.allow)) return null;
  if (range === 'loopback' && policy.allowLoopback) return null;
  const kind = RANGE_NAMES[range] ?? `a special-purpose address (${range})`;
  return address.toString() === '169.254.169.254' ? `${kind} (the cloud metadata service)` : kind;
}

/** Names that always mean this machine, whatever a resolver says (RFC 6761). */
function isLocalhostName(name: string): boolean {
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * The refusal that can be decided from a URL or host alone, before any DNS: an IP literal (in any form the
 * WHATWG parser accepts, which normalises `2130706433` and `0x7f.1` to 127.0.0.1) or `localhost`. Other
 * names are decided at connect time. Returns null when the URL cannot be judged refused up front, and a
 * message for anything unparsable. Never throws.
 */
export function refusalForUrl(rawUrl: string, policy: OutboundPolicy): string | null {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return `refused: ${JSON.stringify(rawUrl.slice(0, 200))} is not a URL`;
  }
  const host = stripBrackets(url.hostname);
  if (host === '') return 'refused: the URL has no host';
  if (hostAllowListed(host, policy.allow)) return null;
  if (net.isIP(host) !== 0) return refusalFor(host, policy);
  if (isLocalhostName(normalizeName(host))) return refusalFor('127.0.0.1', policy, host);
  return null;
}

const LOCALHOST_ADDRESSES = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

const systemResolve: Resolve = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * The addresses of `hostname` that may be dialled, in resolver order. An allow-listed name is admitted at
 * whatever address it has; otherwise each address is checked, and when none passes the first refusal is thrown.
 */
export async function admittedAddresses(hostname: string, policy: OutboundPolicy, resolve: Resolve = systemResolve): Promise<string[]> {
  const host = stripBrackets(hostname);
  if (net.isIP(host) !== 0) {
    const refusal = hostAllowListed(host, policy.allow) ? null : refusalFor(host, policy);
    if (refusal) throw new OutboundRefusedError(refusal, host);
    return [host];
  }
  const listed = hostAllowListed(host, policy.allow);
  // localhost is loopback by definition; asking a resolver would let a hostile hosts file or DNS decide.
  const found = isLocalhostName(normalizeName(host)) && !listed ? LOCALHOST_ADDRESSES : await resolve(host);
  if (listed) return found.map((a) => a.address);
  const admitted: string[] = [];
  let firstRefusal: { message: string; address: string } | null = null;
  for (const { address } of found) {
    const refusal = refusalFor(address, policy, host);
    if (refusal === null) admitted.push(address);
    else firstRefusal ??= { message: refusal, address };
  }
  if (admitted.length === 0) throw new OutboundRefusedError(firstRefusal?.message ?? `refused: ${host} has no address`, firstRefusal?.address ?? '');
  return admitted;
}

/** True when `error` (or its cause) is a refusal by the outbound policy. */
export function isOutboundRefusal(error: unknown): boolean {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | null;
  return e?.code === OUTBOUND_REFUSED || e?.cause?.code === OUTBOUND_REFUSED;
}
