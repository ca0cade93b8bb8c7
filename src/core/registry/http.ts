import { request } from 'undici';
import type { Dispatcher } from 'undici';
import { createOutboundAgent } from '../net/outbound.js';
import type { AllowEntry } from '../net/policy.js';
import { npmRegistryBase } from './npm-registry-url.js';
import { badRegistryAnswer, registryUnavailable } from './problems.js';
import type { RegistryConfig, RegistryRequestOptions } from './types.js';

/**
 * Registry requests: every connection through the one outbound policy (net/outbound.ts), each redirect hop
 * included, with a connect, header, idle-body and overall deadline, and a cap on the bytes read. The registries
 * themselves (NPM_REGISTRY_URL or npm's own configuration, PYPI_URL, CRATES_URL, GO_PROXY_URL) are the operator's choice,
 * as a CRAWL_ALLOW_HOSTS entry is: a private registry or mirror on an internal address works. Anything else
 * they point to (a tarball on another host, a redirect elsewhere) is held to the policy.
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

function hostEntry(base: string): AllowEntry[] {
  try {
    return [{ kind: 'host', name: new URL(base).hostname.toLowerCase() }];
  } catch {
    return [];
  }
}

/** The hosts of the registries the settings name: allowed for registry requests wherever they resolve. */
async function configuredRegistryHosts(config: RegistryConfig): Promise<AllowEntry[]> {
  return [await npmRegistryBase(config), config.registry.pypiUrl, config.registry.cratesUrl, config.registry.goProxyUrl].flatMap(hostEntry);
}

/** GET `url`, following redirects; throws registry_unavailable when it cannot be reached. */
export async function openRegistryUrl(config: RegistryConfig, url: string, accept: string, options: RegistryRequestOptions = {}): Promise<RegistryResponse> {
  const dispatcher = createOutboundAgent(
    { allow: [...config.outbound.allowHosts, ...(await configuredRegistryHosts(config))], allowLoopback: options.allowLoopback ?? false },
    { timeout: CONNECT_TIMEOUT_MS, headersTimeout: HEADERS_TIMEOUT_MS, bodyTimeout: BODY_IDLE_TIMEOUT_MS },
  );
  // destroy, not close: a body abandoned early (a README found, a cap passed) must not hold the pool open.
  const close = () => dispatcher.destroy().catch(() => undefined);
  const deadline = AbortSignal.timeout(OVERALL_TIMEOUT_MS);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  let current = url;
  try {
    for (let hop = 0; ; hop++) {
      const response = await request(current, { method: 'GET', dispatcher, signal, headers: { accept, 'user-agent': USER_AGENT } });
      const location = REDIRECTS.has(response.statusCode) ? nextHop(current, response.headers.location) : undefined;
      if (location === undefined) return { status: response.statusCode, url: current, body: response.body, close };
      await response.body.dump();
      if (hop >= MAX_REDIRECTS) throw badRegistryAnswer(displayUrl(url), `more than ${MAX_REDIRECTS} redirects`);
      current = location;
    }
  } catch (error) {
    await close();
    if ((error as { code?: string }).code === 'bad_gateway') throw error;
    throw registryUnavailable(displayUrl(current), describeFailure(error), error);
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
        throw badRegistryAnswer(displayUrl(response.url), `the answer is larger than ${Math.round(maxBytes / 1024 / 1024)} MiB`);
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if ((error as { code?: string }).code === 'bad_gateway') throw error;
    throw registryUnavailable(displayUrl(response.url), describeFailure(error), error);
  }
  return Buffer.concat(chunks);
}

/** Throws for statuses that mean the registry is down or refuses us; 2xx, 404 and 410 are the caller's. */
function assertUsableStatus(response: RegistryResponse): void {
  const { status } = response;
  if ((status >= 200 && status < 300) || status === 404 || status === 410) return;
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
      throw badRegistryAnswer(displayUrl(response.url), 'the answer is not JSON');
    }
  } finally {
    await response.close();
  }
}
