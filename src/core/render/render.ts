import type { BrowserContext, Page, Route } from 'playwright-core';
import type { BrowserHost } from './browser.js';
import { isHashRoute } from './need.js';

/**
 * Renders one fetched page in the process's browser and returns the rendered DOM as HTML, for the same
 * extractor as any fetched page. Fail-closed: every request of the page is routed here and either fulfilled
 * from Node (the page's own document from the bytes the crawler already fetched, anything else through the
 * caller's `fetchSubresource`, which decides what the request may reach) or aborted. Images, fonts and media
 * are not loaded, only GET is fulfilled, service workers are blocked, downloads refused and dialogs dismissed.
 * An answer to a cross-origin request keeps the browser's same-origin protections (see `fulfil`). The whole
 * render is bounded by `timeoutMs`.
 */

export interface Resource {
  status: number;
  contentType: string | null;
  body: Buffer;
  /** The CORS response headers (CORS_HEADERS) its server sent. */
  cors?: Record<string, string>;
}

/** The response headers a browser's CORS check reads: an answer to a cross-origin request passes on its server's. */
export const CORS_HEADERS = ['access-control-allow-origin', 'access-control-allow-credentials', 'access-control-expose-headers'] as const;

/** One request of the page, for the caller to answer. */
export interface Subrequest {
  url: string;
  /** A navigation of the page's top frame (its own document excepted), which the caller may keep in the crawl's scope. */
  topNavigation: boolean;
}

/** A sub-resource through the crawler's own fetch path; null when it is refused or fails. */
export type FetchSubresource = (request: Subrequest, signal: AbortSignal) => Promise<Resource | null>;

export interface RenderRequest {
  /** The page's URL, hash route included. */
  url: string;
  /** The document the crawler fetched for `url`: served to the browser instead of fetching it again. */
  document: Resource;
  fetchSubresource: FetchSubresource;
  userAgent: string;
  timeoutMs: number;
  /** The rendered HTML's cap; a larger DOM fails the render. */
  maxHtmlBytes: number;
  signal?: AbortSignal;
}

export interface RenderedPage {
  html: Buffer;
  /** Hash-route links of the rendered page (`https://x/#/guide`), absolute, in document order. */
  hashRoutes: string[];
}

export class RenderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RenderError';
  }
}

const BLOCKED_TYPES = new Set(['image', 'font', 'media']);
/** How long the page may stay busy after `load` before its DOM is taken as it is. */
const IDLE_SHARE = 0.5;
/** Quiet time that counts as network idle: no request of the page in flight for this long. */
const QUIET_MS = 300;

/** The page's requests in flight, as routed here: network idle is this count staying at zero for QUIET_MS. */
class InFlight {
  private count = 0;
  private lastChange = performance.now();

  start(): void {
    this.count++;
    this.lastChange = performance.now();
  }

  end(): void {
    this.count--;
    this.lastChange = performance.now();
  }

  /** Resolves once nothing has been in flight for QUIET_MS, or after `limitMs` whatever the page does. */
  async idle(limitMs: number): Promise<void> {
    const until = performance.now() + limitMs;
    for (;;) {
      const now = performance.now();
      if (now >= until) return;
      const quietFor = now - this.lastChange;
      if (this.count === 0 && quietFor >= QUIET_MS) return;
      await new Promise((resolve) => setTimeout(resolve, Math.min(until - now, this.count === 0 ? QUIET_MS - quietFor : QUIET_MS)));
    }
  }
}

function withoutHash(url: string): string {
  const hash = url.indexOf('#');
  return hash < 0 ? url : url.slice(0, hash);
}

/**
 * Answers a routed request. Playwright makes the answer to a cross-origin CORS request (one with an `Origin`
 * other than its target's) readable by adding `Access-Control-Allow-Origin: <that origin>` whenever none is
 * given, which would hand a page whatever docdex fetched for it. So such an answer carries the CORS headers
 * its server sent, and when it sent none, its own origin as the only one allowed: Chromium's CORS check then
 * decides what the page may read, as it does on the web.
 */
function fulfil(route: Route, resource: Resource): Promise<void> {
  const headers: Record<string, string> = resource.contentType ? { 'content-type': resource.contentType } : {};
  const requester = route.request().headers()['origin'];
  const target = new URL(route.request().url()).origin;
  if (requester !== undefined && requester.trim() !== target) {
    Object.assign(headers, resource.cors);
    headers['access-control-allow-origin'] ??= target;
  }
  return route.fulfill({ status: resource.status, headers, body: resource.body });
}

/** Decides each request of the page: the page's own document, a sub-resource fetched from Node, or abort. */
function routeHandler(request: RenderRequest, signal: AbortSignal, inFlight: InFlight): (route: Route) => Promise<void> {
  const documentUrl = withoutHash(request.url);
  return async (route) => {
    const r = route.request();
    const target = r.url();
    inFlight.start();
    try {
      if (r.method() !== 'GET' || BLOCKED_TYPES.has(r.resourceType()) || !/^https?:/i.test(target)) return await route.abort('blockedbyclient');
      const topNavigation = r.isNavigationRequest() && r.frame().parentFrame() === null;
      if (topNavigation && withoutHash(target) === documentUrl) return await fulfil(route, request.document);
      const resource = await request.fetchSubresource({ url: target, topNavigation }, signal);
      if (resource === null) return await route.abort('blockedbyclient');
      await fulfil(route, resource);
    } catch {
      // The page or its context closed while this request waited: nothing is left to answer.
      await route.abort('blockedbyclient').catch(() => undefined);
    } finally {
      inFlight.end();
    }
  };
}

async function openContext(host: BrowserHost, request: RenderRequest, signal: AbortSignal, inFlight: InFlight): Promise<BrowserContext> {
  const browser = await host.browser();
  const context = await browser.newContext({ serviceWorkers: 'block', acceptDownloads: false, userAgent: request.userAgent, javaScriptEnabled: true });
  await context.route('**/*', routeHandler(request, signal, inFlight));
  context.on('page', (page) => {
    page.on('dialog', (dialog) => void dialog.dismiss().catch(() => undefined));
  });
  return context;
}

/** Hash-route links of the rendered page, resolved against it; hostile hrefs are dropped. */
async function hashRoutesOf(page: Page, pageUrl: string): Promise<string[]> {
  const hrefs = await page.$$eval('a[href]', (anchors) => anchors.slice(0, 5000).map((a) => a.getAttribute('href') ?? ''));
  const routes: string[] = [];
  for (const href of hrefs) {
    if (typeof href !== 'string' || !href.includes('#')) continue;
    try {
      const url = new URL(href, pageUrl);
      if ((url.protocol === 'http:' || url.protocol === 'https:') && isHashRoute(url.href)) routes.push(url.href);
    } catch {
      // Not a URL: not a route.
    }
  }
  return [...new Set(routes)];
}

/** Loads the page, waits for the network to go idle (bounded), and reads its DOM. */
async function loadAndRead(context: BrowserContext, request: RenderRequest, inFlight: InFlight): Promise<RenderedPage> {
  const page = await context.newPage();
  await page.goto(request.url, { waitUntil: 'load', timeout: request.timeoutMs });
  // Idle as this page's own requests show it (Playwright's networkidle waits on the whole browser's traffic).
  // A page that keeps polling never goes idle: its DOM is taken as it is when the wait runs out.
  await inFlight.idle(Math.round(request.timeoutMs * IDLE_SHARE));
  const html = Buffer.from(await page.content(), 'utf8');
  if (html.length > request.maxHtmlBytes) throw new RenderError(`rendered page larger than ${Math.round(request.maxHtmlBytes / 1024 / 1024)} MB`);
  return { html, hashRoutes: await hashRoutesOf(page, page.url()) };
}

/** Renders `request.url`. Throws RenderError when the page cannot be rendered in time; rejects with the signal's reason when it aborts. */
export async function renderPage(host: BrowserHost, request: RenderRequest): Promise<RenderedPage> {
  // The time a page waits for a free slot is not its render time: pages queue there when all slots are busy.
  const release = await host.takePageSlot();
  const deadline = AbortSignal.timeout(request.timeoutMs);
  const signal = request.signal ? AbortSignal.any([request.signal, deadline]) : deadline;
  const inFlight = new InFlight();
  let context: BrowserContext | null = null;
  try {
    signal.throwIfAborted();
    context = await openContext(host, request, signal, inFlight);
    const aborted = new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }));
    return await Promise.race([loadAndRead(context, request, inFlight), aborted]);
  } catch (error) {
    if (request.signal?.aborted) throw request.signal.reason;
    if (error instanceof RenderError) throw error;
    const message = deadline.aborted ? `render took longer than ${Math.round(request.timeoutMs / 1000)} s` : `render failed: ${(error as Error).message.split('\n')[0]}`;
    throw new RenderError(message);
  } finally {
    await context?.close().catch(() => undefined);
    release();
  }
}
