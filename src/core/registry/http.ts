import { request } from 'undici';
import type { Agent, Dispatcher } from 'undici';
import { createOutboundAgent } from '../net/outbound.js';
import { isOutboundRefusal } from '../net/policy.js';
import type { AllowEntry } from '../net/policy.js';
import { networkFailure } from '../net/network-error.js';
import { npmRegistryBase } from './npm-registry-url.js';
import { UserError } from '../errors.js';
import { badRegistryAnswer, registryUnavailable } from './problems.js';
import type { RegistryConfig, RegistryRequestOptions } from './types.js';

/**
 * Registry requests: every connection through the one outbound policy (net/outbound.ts), each redirect hop
 * included, with a connect, header, idle-body and overall deadline, and a cap on the bytes read. The registries
 * themselves (NPM_REGISTRY_URL or npm's own configuration, PYPI_URL, CRATES_URL, GO_PROXY_URL) are the operator's
 * choice, as a CRAWL_ALLOW_HOSTS entry is: a private registry or mirror on an internal address works. The trust
 * is for the registry's origin (scheme, host and port) only: another port of its host is another service, and
 * anything a registry points to (a tarball elsewhere, a redirect) is held to the policy like any address. A
 * request off the registries' origins that fails says so in one generic reason, whatever failed (no connection,
 * a status, a broken body), so a registry's answer cannot make docdex tell an open port from a closed one.
 */

const CONNECT_TIMEOUT_MS = 10_000;
const HEADERS_TIMEOUT_MS = 20_000;
const BODY_IDLE_TIMEOUT_MS = 30_000;
const OVERALL_TIMEOUT_MS = 120_000;
const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
// crates.io refuses requests without a User-Agent; it asks for one that names the client.
const USER_AGENT = 'docdex (documentation indexer; package resolver)';

export interface RegistryResponse {
  status: number;
  /** The URL that answered, after redirects. */
  url: string;
  /** The answer came from a configured registry's own origin: its failures may be told in detail. */
  trusted: boolean;
  body: Dispatcher.ResponseData['body'];
  /** Releases the connection pool; call once the body is read or abandoned. */
  close(): Promise<void>;
}

/** A URL fit for messages: no credentials, no query. */
export function displayUrl(raw: string): string {
  try {
    const url = new URL(raw);
    url.username = '';
    url.password = '';
    url.search = '';
    return url.toString();
  } catch {
    return JSON.stringify(raw.slice(0, 200));
  }
}

function describeFailure(error: unknown): string {
  const network = networkFailure(error);
  if (network !== null) return network;
  const e = error as { message?: string; code?: string; cause?: { message?: string } } | null;
  const message = e?.cause?.message ?? e?.message ?? String(error);
  return message.slice(0, 300);
}

function nextHop(current: string, location: string | string[] | undefined): string | undefined {
  const target = Array.isArray(location) ? location[0] : location;
  if (!target) return undefined;
  try {
    const url = new URL(target, current);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.toString() : undefined;
  } catch {
    return undefined;
  }
}

/** The one reason a failed request off the registries' origins gives: no connection, a status and a bad body alike. */
export const UNREADABLE = 'it could not be read';

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** The origins of the registries the settings name: trusted for registry requests wherever they resolve. */
async function configuredRegistryOrigins(config: RegistryConfig): Promise<Set<string>> {
  const bases = [await npmRegistryBase(config), config.registry.pypiUrl, config.registry.cratesUrl, config.registry.goProxyUrl];
  return new Set(bases.flatMap((base) => originOf(base) ?? []));
}

/**
 * One dispatcher per origin trusted (its host allow-listed; only requests to that origin are ever given to it)
 * and one under the plain policy for everything else, all torn down together.
 */
function dispatchers(config: RegistryConfig, trusted: ReadonlySet<string>): { forUrl(url: string): Agent; destroy(): Promise<void> } {
  const agents = new Map<string, Agent>();
  const agentFor = (key: string, allow: readonly AllowEntry[]): Agent => {
    let agent = agents.get(key);
    if (!agent) {
      agent = createOutboundAgent({ allow, allowLoopback: false }, { timeout: CONNECT_TIMEOUT_MS, headersTimeout: HEADERS_TIMEOUT_MS, bodyTimeout: BODY_IDLE_TIMEOUT_MS });
      agents.set(key, agent);
    }
    return agent;
  };
  return {
    forUrl(url) {
      const origin = originOf(url);
      if (origin === undefined || !trusted.has(origin)) return agentFor('', config.outbound.allowHosts);
      return agentFor(origin, [...config.outbound.allowHosts, { kind: 'host', name: new URL(origin).hostname.toLowerCase() }]);
    },
    // destroy, not close: a body abandoned early (a README found, a cap passed) must not hold the pool open.
    destroy: async () => {
      await Promise.all([...agents.values()].map((agent) => agent.destroy().catch(() => undefined)));
    },
  };
}

/**
 * An answer docdex cannot use: bad_gateway with the reason from a registry's origin; off it, the one generic
 * registry_unavailable, since saying what was wrong would say that something answered.
 */
export function unusableAnswer(response: Pick<RegistryResponse, 'url' | 'trusted'>, reason: string): UserError {
  return response.trusted ? badRegistryAnswer(displayUrl(response.url), reason) : registryUnavailable(displayUrl(response.url), UNREADABLE);
}

/** Why a request failed, as the caller may be told: in detail on a registry's origin or for a policy refusal, else generic. */
function failureReason(trusted: boolean, error: unknown): string {
  return trusted || isOutboundRefusal(error) ? describeFailure(error) : UNREADABLE;
}

function hostnameOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** The setting that chose the registry `url` is on (PYPI_URL for pypi.org by default), for the hint of a failure. */
async function registrySetting(config: RegistryConfig, url: string): Promise<string | undefined> {
  const host = hostnameOf(url);
  if (host === undefined) return undefined;
  const settings: Array<[string, string]> = [
    ['NPM_REGISTRY_URL', await npmRegistryBase(config)],
    ['PYPI_URL', config.registry.pypiUrl],
    ['CRATES_URL', config.registry.cratesUrl],
    ['GO_PROXY_URL', config.registry.goProxyUrl],
  ];
  return settings.find(([, base]) => hostnameOf(base) === host)?.[0];
}

/** GET `url`, following redirects; throws registry_unavailable when it cannot be reached. */
export async function openRegistryUrl(config: RegistryConfig, url: string, accept: string, options: RegistryRequestOptions = {}): Promise<RegistryResponse> {
  const trustedOrigins = await configuredRegistryOrigins(config);
  const agents = dispatchers(config, trustedOrigins);
  const close = () => agents.destroy();
  const deadline = AbortSignal.timeout(OVERALL_TIMEOUT_MS);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  let current = url;
  try {
    for (let hop = 0; ; hop++) {
      const response = await request(current, { method: 'GET', dispatcher: agents.forUrl(current), signal, headers: { accept, 'user-agent': USER_AGENT } });
      const location = REDIRECTS.has(response.statusCode) ? nextHop(current, response.headers.location) : undefined;
      if (location === undefined) return { status: response.statusCode, url: current, trusted: trustedOrigins.has(originOf(current) ?? ''), body: response.body, close };
      await response.body.dump();
      if (hop >= MAX_REDIRECTS) throw badRegistryAnswer(displayUrl(url), `more than ${MAX_REDIRECTS} redirects`);
      current = location;
    }
  } catch (error) {
    await close();
    if ((error as { code?: string }).code === 'bad_gateway') throw error;
    const trusted = trustedOrigins.has(originOf(current) ?? '');
    throw registryUnavailable(displayUrl(current), failureReason(trusted, error), error, trusted ? await registrySetting(config, current) : undefined);
  }
}

/** Reads a whole body, refusing one over `maxBytes` (the registry answered with more than any real document). */
export async function readCapped(response: RegistryResponse, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBytes) {
        response.body.destroy();
        throw unusableAnswer(response, `the answer is larger than ${Math.round(maxBytes / 1024 / 1024)} MiB`);
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof UserError) throw error;
    throw registryUnavailable(displayUrl(response.url), failureReason(response.trusted, error), error);
  }
  return Buffer.concat(chunks);
}

/**
 * Throws for statuses that mean the registry is down or refuses us; 2xx, and on a registry's own origin 404 and
 * 410, are the caller's. Off it, any other status is the one generic reason.
 */
function assertUsableStatus(response: RegistryResponse): void {
  const { status } = response;
  if (status >= 200 && status < 300) return;
  if (!response.trusted) throw registryUnavailable(displayUrl(response.url), UNREADABLE);
  if (status === 404 || status === 410) return;
  const reason = status === 401 || status === 403 ? `it refused access (HTTP ${status}); docdex sends no registry credentials` : `it answered HTTP ${status}`;
  throw registryUnavailable(displayUrl(response.url), reason);
}

export interface JsonAnswer {
  /** 200-299, or 404/410 (then `json` is undefined: the caller says what was not found). */
  status: number;
  url: string;
  json: unknown;
}

/** GET a JSON document from a registry API. */
export async function getRegistryJson(config: RegistryConfig, url: string, maxBytes: number, options: RegistryRequestOptions = {}): Promise<JsonAnswer> {
  const response = await openRegistryUrl(config, url, 'application/json', options);
  try {
    assertUsableStatus(response);
    if (response.status === 404 || response.status === 410) {
      await response.body.dump().catch(() => undefined);
      return { status: response.status, url: response.url, json: undefined };
    }
    const bytes = await readCapped(response, maxBytes);
    try {
      return { status: response.status, url: response.url, json: JSON.parse(bytes.toString('utf8')) as unknown };
    } catch {
      throw unusableAnswer(response, 'the answer is not JSON');
    }
  } finally {
    await response.close();
  }
}
