import diagnosticsChannel from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { request } from 'undici';
import type { Agent } from 'undici';
import { createOutboundAgent } from '../net/outbound.js';
import { isOutboundRefusal } from '../net/policy.js';
import type { AllowEntry, OutboundPolicy, Resolve } from '../net/policy.js';
import { onTypedSite } from '../net/provenance.js';
import type { Dispatcher } from 'undici';
import { normalizeUrl } from './url.js';
import { sleep } from './sleep.js';

/**
 * Fetching one page over undici: redirects followed by hand (each hop takes its own politeness slot, and a
 * loop is recognised by normalised URL), connect/header/body timeouts plus a total deadline, a body cap
 * applied after decompression, only the content types the extractor handles, retries with backoff for 429
 * and 5xx honouring Retry-After, and conditional GET so an unchanged page costs no body.
 */

function packageVersion(): string {
  try {
    // src/core/crawl and dist/core/crawl are both three levels below package.json.
    return (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return '0';
  }
}

const pkgVersion = packageVersion();
/** Names docdex and where to read about it, so a site operator can identify and, if needed, block us. */
export const USER_AGENT = `docdex/${pkgVersion} (+https://github.com/docdex/docdex; documentation code indexer)`;

export interface FetchSettings {
  userAgent: string;
  connectTimeoutMs: number;
  /** Time to the response headers after the request is sent (the "read" timeout for a silent server). */
  headersTimeoutMs: number;
  /** Longest silence between body chunks. */
  bodyTimeoutMs: number;
  /** Whole request, headers and body, so a server dripping one byte per second cannot hold a worker. */
  totalTimeoutMs: number;
  /** Whole page: every attempt, retry wait and redirect hop together (politeness waits excluded). */
  pageTimeoutMs: number;
  maxBodyBytes: number;
  maxRedirects: number;
  /** Extra attempts after the first for 429, 5xx, timeouts and dropped connections. */
  maxRetries: number;
  retryBaseMs: number;
  /** A Retry-After longer than this gives up instead of parking a worker (e.g. "come back in an hour"). */
  maxRetryAfterMs: number;
  /** CRAWL_ALLOW_HOSTS: the outbound policy's allow-list (every connection is checked at connect time). */
  allowHosts: readonly AllowEntry[];
  /** Test seam: a resolver standing in for DNS in the outbound connector. */
  resolve?: Resolve;
}

export const DEFAULT_FETCH_SETTINGS: FetchSettings = {
  userAgent: USER_AGENT,
  connectTimeoutMs: 10_000,
  headersTimeoutMs: 30_000,
  bodyTimeoutMs: 30_000,
  totalTimeoutMs: 60_000,
  pageTimeoutMs: 90_000,
  maxBodyBytes: 10 * 1024 * 1024,
  maxRedirects: 10,
  maxRetries: 3,
  retryBaseMs: 1000,
  maxRetryAfterMs: 60_000,
  allowHosts: [],
};

export type PageFormatKind = 'html' | 'markdown' | 'text';

export type FetchOutcome =
  | {
      kind: 'ok';
      url: string;
      status: number;
      contentType: string | null;
      body: Buffer;
      etag: string | null;
      lastModified: string | null;
      redirects: string[];
      /** The response headers `FetchRequest.keepHeaders` named that it carried. */
      headers?: Record<string, string>;
    }
  | { kind: 'not_modified'; url: string; status: 304; etag: string | null; lastModified: string | null; redirects: string[] }
  | { kind: 'http_error'; url: string; status: number; message: string; redirects: string[] }
  | { kind: 'skipped'; url: string; status: number; reason: string; redirects: string[] }
  | { kind: 'error'; url: string; message: string; retryable: boolean; redirects: string[]; refused?: boolean };

export interface FetchRequest {
  etag?: string | null;
  lastModified?: string | null;
  signal?: AbortSignal;
  /** Called before every request (each hop and each retry): politeness lives here. */
  beforeRequest?: (url: URL, signal?: AbortSignal) => Promise<void>;
  /** Called when the request headers are written to the socket (not awaited): politeness records it. */
  afterSend?: (url: URL) => void;
  /** Which content types are accepted: the page types (default), or anything (robots.txt, sitemaps). */
  accept?: 'page' | 'any';
  maxBodyBytes?: number;
  /** Whether to follow a redirect to this URL; a refused one ends as `skipped` without requesting it. */
  allowRedirect?: (url: URL) => boolean;
  /**
   * The URL asked for is one the local user typed (a CLI- or TUI-started crawl's site, net/provenance.ts): it may
   * be on loopback (never other internal ranges). The permission covers that URL's site only: a redirect to
   * another origin was named by the server, and is held to the remote rules.
   */
  allowLoopback?: boolean;
  /** Response headers (lower-case names) an `ok` outcome returns in `headers` when the response has them. */
  keepHeaders?: readonly string[];
}

const REDIRECT = new Set([301, 302, 303, 307, 308]);
const RETRY_STATUS = new Set([429, 500, 502, 503, 504]);
const RETRYABLE_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'TOTAL_TIMEOUT',
]);

export function classifyContentType(contentType: string | null, url: string): PageFormatKind | null {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html';
  if (type === 'text/markdown' || type === 'text/x-markdown') return 'markdown';
  if (type === 'text/plain') return /\.(md|markdown|mdx)$/i.test(new URL(url).pathname) ? 'markdown' : 'text';
  if (type === '' || type === 'application/octet-stream') {
    // No declared type: trust the extension only for the formats we index.
    const path = new URL(url).pathname.toLowerCase();
    if (/\.(html?|xhtml)$/.test(path) || path.endsWith('/')) return 'html';
    if (/\.(md|markdown|mdx)$/.test(path)) return 'markdown';
    if (/\.txt$/.test(path)) return 'text';
  }
  return null;
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | null {
  const value = headers[name];
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}

function keptHeaders(headers: Record<string, string | string[] | undefined>, names: readonly string[]): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of names) {
    const value = header(headers, name);
    if (value !== null) kept[name] = value;
  }
  return kept;
}

/** Retry-After as seconds or an HTTP date; null when absent or unparsable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/**
 * The moment a request actually goes out: undici publishes it on a diagnostics channel right before writing
 * the headers, after DNS and connect (which on a loaded machine can take tens of milliseconds). Callers
 * waiting for it are keyed by origin and path.
 */
const sendWaiters = new Map<string, Array<() => void>>();
let listeningForSends = false;

function onSendHeaders(message: unknown): void {
  const r = (message as { request?: { origin?: unknown; path?: unknown } }).request;
  if (!r) return;
  const key = `${String(r.origin)}${String(r.path)}`;
  const list = sendWaiters.get(key);
  const next = list?.shift();
  if (list && list.length === 0) sendWaiters.delete(key);
  next?.();
}

function waitForSend(url: URL, callback: () => void): () => void {
  if (!listeningForSends) {
    listeningForSends = true;
    diagnosticsChannel.subscribe('undici:client:sendHeaders', onSendHeaders);
  }
  const key = `${url.origin}${url.pathname}${url.search}`;
  const list = sendWaiters.get(key) ?? [];
  list.push(callback);
  sendWaiters.set(key, list);
  return () => {
    const current = sendWaiters.get(key);
    if (!current) return;
    const i = current.indexOf(callback);
    if (i >= 0) current.splice(i, 1);
    if (current.length === 0) sendWaiters.delete(key);
  };
}

class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`body larger than ${Math.round(limit / 1024 / 1024)} MB`);
  }
}

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const inflateRaw = promisify(zlib.inflateRaw);
const brotli = promisify(zlib.brotliDecompress);

async function decode(body: Buffer, encoding: string | null, limit: number): Promise<Buffer> {
  const enc = (encoding ?? '').trim().toLowerCase();
  try {
    if (enc === 'gzip' || enc === 'x-gzip') return await gunzip(body, { maxOutputLength: limit });
    if (enc === 'br') return await brotli(body, { maxOutputLength: limit });
    if (enc === 'deflate') {
      try {
        return await inflate(body, { maxOutputLength: limit });
      } catch (error) {
        if (error instanceof RangeError) throw error;
        return await inflateRaw(body, { maxOutputLength: limit });
      }
    }
  } catch (error) {
    // zlib reports exceeding maxOutputLength as a RangeError: a compressed body that inflates past the cap.
    if (error instanceof RangeError || (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw new BodyTooLarge(limit);
    throw error;
  }
  return body;
}

async function readCapped(body: Dispatcher.ResponseData['body'], limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    const buf = chunk as Buffer;
    total += buf.length;
    if (total > limit) {
      body.destroy();
      throw new BodyTooLarge(limit);
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks, total);
}

function errorCode(error: unknown): string | undefined {
  const e = error as { code?: string; cause?: { code?: string } };
  return e.code ?? e.cause?.code;
}

/** How a failed DNS lookup is described; robots-store reports it as it is rather than as a robots.txt problem. */
export const UNRESOLVED_HOST = 'could not resolve host';

function describeError(error: unknown): string {
  const code = errorCode(error);
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN': {
      const e = error as { hostname?: string; cause?: { hostname?: string } };
      const host = e.hostname ?? e.cause?.hostname;
      return `${UNRESOLVED_HOST}${host ? ` ${host}` : ''}`;
    }
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'connect timeout';
    case 'UND_ERR_HEADERS_TIMEOUT':
      return 'timeout waiting for response headers';
    case 'UND_ERR_BODY_TIMEOUT':
      return 'timeout reading the response body';
    case 'TOTAL_TIMEOUT':
      return 'request took longer than the total timeout';
    default: {
      const message = (error as Error).message || String(error);
      return code && !message.includes(code) ? `${message} (${code})` : message;
    }
  }
}

export class PageFetcher {
  readonly settings: FetchSettings;
  private readonly agents = new Map<boolean, Agent>();

  constructor(settings: Partial<FetchSettings> = {}) {
    this.settings = { ...DEFAULT_FETCH_SETTINGS, ...settings };
  }

  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((agent) => agent.close().catch(() => undefined)));
  }

  private backoff(attempt: number): number {
    const base = this.settings.retryBaseMs * 2 ** attempt;
    return Math.round(base * (0.75 + Math.random() * 0.5));
  }

  /** The dispatcher for one policy: loopback admitted or not, the allow-list always. */
  private agentFor(allowLoopback: boolean): Agent {
    let agent = this.agents.get(allowLoopback);
    if (!agent) {
      const policy: OutboundPolicy = { allow: this.settings.allowHosts, allowLoopback };
      agent = createOutboundAgent(policy, {
        timeout: this.settings.connectTimeoutMs,
        ...(this.settings.resolve ? { resolve: this.settings.resolve } : {}),
        headersTimeout: this.settings.headersTimeoutMs,
        bodyTimeout: this.settings.bodyTimeoutMs,
        keepAliveTimeout: 10_000,
        connections: 32,
      });
      this.agents.set(allowLoopback, agent);
    }
    return agent;
  }

  /**
   * Throws only when `signal` aborts; every other failure is an outcome. The page's network time (every
   * attempt, retry wait and redirect hop, not the politeness waits in `beforeRequest`) is bounded by
   * pageTimeoutMs, so a server that drips its answer cannot hold a worker slot for attempts times the
   * per-request timeout.
   */
  async fetch(rawUrl: string, req: FetchRequest = {}): Promise<FetchOutcome> {
    const s = this.settings;
    const budget = new PageBudget(s.pageTimeoutMs);
    const redirects: string[] = [];
    const seen = new Set<string>();
    const asked = new URL(rawUrl);
    let url = asked;
    for (let hop = 0; ; hop++) {
      const hopRequest = req.allowLoopback && !onTypedSite(url, asked) ? { ...req, allowLoopback: false } : req;
      const key = normalizeUrl(url) ?? url.href;
      if (seen.has(key)) return { kind: 'error', url: url.href, message: `redirect loop at ${url.href}`, retryable: false, redirects };
      seen.add(key);
      for (let attempt = 0; ; attempt++) {
        req.signal?.throwIfAborted();
        await req.beforeRequest?.(url, req.signal);
        if (budget.left() <= 0) return budget.exhausted(url, redirects);
        const step = await budget.time(() => this.attempt(url, hopRequest, hop, redirects, budget.left()));
        if ('outcome' in step) return step.outcome;
        if ('next' in step) {
          redirects.push(url.href);
          url = step.next;
          break;
        }
        const failure = step.failure;
        if (failure.pageTimeout) return budget.exhausted(url, redirects);
        if (!failure.retryable || attempt >= s.maxRetries) return failedOutcome(url, failure, attempt, redirects);
        const waitMs = failure.waitMs ?? this.backoff(attempt);
        if (waitMs > s.maxRetryAfterMs) {
          return { kind: 'http_error', url: url.href, status: failure.status ?? 0, message: `${failure.message}; Retry-After ${Math.round(waitMs / 1000)} s is too long`, redirects };
        }
        if (waitMs >= budget.left()) return budget.exhausted(url, redirects);
        await budget.time(() => sleep(waitMs, req.signal));
      }
    }
  }

  /** One request: an outcome, the next hop of a redirect, or a failure that may be retried. */
  private async attempt(url: URL, req: FetchRequest, hop: number, redirects: string[], pageLeftMs: number): Promise<AttemptResult> {
    const s = this.settings;
    const limit = req.maxBodyBytes ?? s.maxBodyBytes;
    const perRequest = AbortSignal.timeout(s.totalTimeoutMs);
    const pageLeft = AbortSignal.timeout(Math.max(1, Math.ceil(pageLeftMs)));
    const signal = AbortSignal.any([...(req.signal ? [req.signal] : []), perRequest, pageLeft]);
    try {
      const sentUrl = url;
      const forget = req.afterSend ? waitForSend(url, () => req.afterSend!(sentUrl)) : null;
      let res: Dispatcher.ResponseData;
      try {
        res = await request(url, { method: 'GET', headers: this.requestHeaders(req), dispatcher: this.agentFor(req.allowLoopback ?? false), signal });
      } finally {
        forget?.();
      }
      return await this.readResponse(url, res, req, hop, redirects, limit);
    } catch (error) {
      if (req.signal?.aborted) throw req.signal.reason;
      if (error instanceof BodyTooLarge) return { outcome: { kind: 'skipped', url: url.href, status: 200, reason: error.message, redirects } };
      if (isOutboundRefusal(error)) return { outcome: { kind: 'error', url: url.href, message: (error as Error).message, retryable: false, refused: true, redirects } };
      if (pageLeft.aborted && !perRequest.aborted) return { failure: { message: 'page time exhausted', retryable: false, pageTimeout: true } };
      const code = perRequest.aborted ? 'TOTAL_TIMEOUT' : errorCode(error);
      return {
        failure: { message: perRequest.aborted ? describeError({ code }) : describeError(error), retryable: code !== undefined && RETRYABLE_CODES.has(code) },
      };
    }
  }

  private requestHeaders(req: FetchRequest): Record<string, string> {
    const headers: Record<string, string> = {
      'user-agent': this.settings.userAgent,
      accept: req.accept === 'any' ? '*/*' : 'text/html,application/xhtml+xml,text/markdown,text/plain;q=0.9,*/*;q=0.1',
      'accept-encoding': 'gzip, deflate, br',
    };
    if (req.etag) headers['if-none-match'] = req.etag;
    if (req.lastModified) headers['if-modified-since'] = req.lastModified;
    return headers;
  }

  /** What a response means: redirect, not modified, retryable status, error status, or a page read within the cap. */
  private async readResponse(url: URL, res: Dispatcher.ResponseData, req: FetchRequest, hop: number, redirects: string[], limit: number): Promise<AttemptResult> {
    const status = res.statusCode;
    const etag = header(res.headers, 'etag');
    const lastModified = header(res.headers, 'last-modified');
    if (REDIRECT.has(status)) {
      await res.body.dump().catch(() => undefined);
      return this.redirectTarget(url, status, header(res.headers, 'location'), req, hop, redirects);
    }
    if (status === 304) {
      await res.body.dump().catch(() => undefined);
      return { outcome: { kind: 'not_modified', url: url.href, status: 304, etag: etag ?? req.etag ?? null, lastModified: lastModified ?? req.lastModified ?? null, redirects } };
    }
    if (RETRY_STATUS.has(status)) {
      await res.body.dump().catch(() => undefined);
      return { failure: { message: `HTTP ${status}`, retryable: true, status, waitMs: parseRetryAfter(header(res.headers, 'retry-after')) ?? undefined } };
    }
    if (status < 200 || status >= 300) {
      await res.body.dump().catch(() => undefined);
      return { outcome: { kind: 'http_error', url: url.href, status, message: `HTTP ${status}`, redirects } };
    }
    const contentType = header(res.headers, 'content-type');
    if (req.accept !== 'any' && classifyContentType(contentType, url.href) === null) {
      await res.body.dump().catch(() => undefined);
      return { outcome: { kind: 'skipped', url: url.href, status, reason: `unsupported content type ${contentType ?? '(none)'}`, redirects } };
    }
    const declared = Number(header(res.headers, 'content-length') ?? NaN);
    if (Number.isFinite(declared) && declared > limit) {
      res.body.destroy();
      return { outcome: { kind: 'skipped', url: url.href, status, reason: new BodyTooLarge(limit).message, redirects } };
    }
    const raw = await readCapped(res.body, limit);
    const body = await decode(raw, header(res.headers, 'content-encoding'), limit);
    const kept = req.keepHeaders ? { headers: keptHeaders(res.headers, req.keepHeaders) } : {};
    return { outcome: { kind: 'ok', url: url.href, status, contentType, body, etag, lastModified, redirects, ...kept } };
  }

  private redirectTarget(url: URL, status: number, location: string | null, req: FetchRequest, hop: number, redirects: string[]): AttemptResult {
    if (!location) return { outcome: { kind: 'http_error', url: url.href, status, message: `HTTP ${status} without a Location header`, redirects } };
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      return { outcome: { kind: 'error', url: url.href, message: `bad redirect Location ${JSON.stringify(location)}`, retryable: false, redirects } };
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') {
      return { outcome: { kind: 'error', url: url.href, message: `redirect to a non-http URL ${next.href}`, retryable: false, redirects } };
    }
    if (hop + 1 > this.settings.maxRedirects) {
      return { outcome: { kind: 'error', url: url.href, message: `more than ${this.settings.maxRedirects} redirects`, retryable: false, redirects } };
    }
    next.hash = '';
    if (req.allowRedirect && !req.allowRedirect(next)) {
      return { outcome: { kind: 'skipped', url: url.href, status, reason: `redirected out of scope to ${next.href}`, redirects } };
    }
    return { next };
  }
}

interface AttemptFailure {
  message: string;
  retryable: boolean;
  waitMs?: number | undefined;
  status?: number;
  /** The page's whole time ran out during this attempt. */
  pageTimeout?: boolean;
}

type AttemptResult = { outcome: FetchOutcome } | { next: URL } | { failure: AttemptFailure };

function failedOutcome(url: URL, failure: AttemptFailure, attempt: number, redirects: string[]): FetchOutcome {
  return failure.status
    ? { kind: 'http_error', url: url.href, status: failure.status, message: `${failure.message} after ${attempt + 1} attempts`, redirects }
    : { kind: 'error', url: url.href, message: attempt > 0 ? `${failure.message} after ${attempt + 1} attempts` : failure.message, retryable: failure.retryable, redirects };
}

/** The network time one page may take, summed over its attempts, retry waits and redirect hops. */
class PageBudget {
  private spentMs = 0;

  constructor(private readonly limitMs: number) {}

  left(): number {
    return this.limitMs - this.spentMs;
  }

  async time<T>(work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.spentMs += performance.now() - started;
    }
  }

  exhausted(url: URL, redirects: string[]): FetchOutcome {
    const seconds = Math.round(this.limitMs / 100) / 10;
    return { kind: 'error', url: url.href, message: `page took longer than ${seconds} s in total (retries and redirects included)`, retryable: false, redirects };
  }
}
