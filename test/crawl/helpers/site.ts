import { createHash } from 'node:crypto';
import { createReadStream, existsSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

/**
 * A real HTTP server on 127.0.0.1 for crawler tests. Routes are plain objects (status, headers, body, delay)
 * or functions; every request is logged with its arrival time, Host header and conditional headers, and the
 * server tracks how many requests are in flight at once. `localhost` reaches the same server, which gives
 * tests a second host for domain filters and per-host politeness.
 */

export interface Route {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Milliseconds before the response headers are sent. */
  delayMs?: number;
  /** Send an ETag (md5 of the body) and answer If-None-Match with 304. */
  etag?: boolean;
  /** Send this Last-Modified and answer If-Modified-Since with 304 when equal. */
  lastModified?: string;
  /** Stream this many bytes of filler without a Content-Length. */
  streamBytes?: number;
  /** Serve this file (static corpus). */
  staticFile?: string;
  contentType?: string;
}

export type RouteFn = (req: http.IncomingMessage) => Route;

export interface LoggedRequest {
  /** performance.now() at arrival, in ms. */
  t: number;
  method: string;
  path: string;
  host: string;
  userAgent: string;
  ifNoneMatch: string | null;
  ifModifiedSince: string | null;
  status: number;
}

export class TestSite {
  readonly log: LoggedRequest[] = [];
  inFlight = 0;
  maxInFlight = 0;
  private readonly routes = new Map<string, Route | RouteFn>();
  private server!: http.Server;
  port = 0;
  /** Serve files from this directory for paths without a route (real corpus tests). */
  staticRoot: string | null = null;

  static async start(routes: Record<string, Route | RouteFn> = {}): Promise<TestSite> {
    const site = new TestSite();
    for (const [p, r] of Object.entries(routes)) site.routes.set(p, r);
    site.server = http.createServer((req, res) => site.handle(req, res));
    site.server.keepAliveTimeout = 5000;
    await new Promise<void>((resolve) => site.server.listen(0, '127.0.0.1', resolve));
    site.port = (site.server.address() as AddressInfo).port;
    return site;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  url(p: string, host = '127.0.0.1'): string {
    return `http://${host}:${this.port}${p}`;
  }

  set(p: string, route: Route | RouteFn): void {
    this.routes.set(p, route);
  }

  delete(p: string): void {
    this.routes.delete(p);
  }

  requests(p?: string, host?: string): LoggedRequest[] {
    return this.log.filter((r) => (p === undefined || r.path === p) && (host === undefined || r.host.startsWith(host)));
  }

  count(p: string): number {
    return this.requests(p).length;
  }

  resetLog(): void {
    this.log.length = 0;
    this.maxInFlight = 0;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const t = performance.now();
    const url = new URL(req.url ?? '/', 'http://x');
    const entry: LoggedRequest = {
      t,
      method: req.method ?? 'GET',
      path: url.pathname + url.search,
      host: req.headers.host ?? '',
      userAgent: req.headers['user-agent'] ?? '',
      ifNoneMatch: (req.headers['if-none-match'] as string | undefined) ?? null,
      ifModifiedSince: (req.headers['if-modified-since'] as string | undefined) ?? null,
      status: 0,
    };
    this.log.push(entry);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    let counted = true;
    const done = () => {
      if (counted) {
        counted = false;
        this.inFlight--;
      }
    };
    res.on('finish', done);
    res.on('close', done);
    const found = this.routes.get(url.pathname + url.search) ?? this.routes.get(url.pathname);
    const route: Route | null = typeof found === 'function' ? found(req) : (found ?? this.staticRoute(url.pathname));
    const respond = () => {
      if (!route) {
        entry.status = 404;
        res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>not found</body></html>');
        return;
      }
      if (route.staticFile) {
        entry.status = 200;
        res.writeHead(200, { 'content-type': route.contentType ?? 'application/octet-stream', 'content-length': String(statSync(route.staticFile).size) });
        createReadStream(route.staticFile).pipe(res);
        return;
      }
      const body = route.body ?? '';
      const headers: Record<string, string> = { 'content-type': 'text/html; charset=utf-8', ...route.headers };
      if (route.etag) {
        const tag = `"${createHash('md5').update(body).digest('hex')}"`;
        headers.etag = tag;
        if (req.headers['if-none-match'] === tag) {
          entry.status = 304;
          res.writeHead(304, headers).end();
          return;
        }
      }
      if (route.lastModified) {
        headers['last-modified'] = route.lastModified;
        if (req.headers['if-modified-since'] === route.lastModified) {
          entry.status = 304;
          res.writeHead(304, headers).end();
          return;
        }
      }
      const status = route.status ?? 200;
      entry.status = status;
      if (route.streamBytes) {
        res.writeHead(status, headers);
        const chunk = Buffer.alloc(64 * 1024, 'a');
        let sent = 0;
        const pump = () => {
          while (sent < route.streamBytes!) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('close', () => (sent = route.streamBytes!));
        pump();
        return;
      }
      res.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)) }).end(body);
    };
    if (route?.delayMs) setTimeout(respond, route.delayMs);
    else respond();
  }

  private staticRoute(p: string): Route | null {
    if (!this.staticRoot) return null;
    const file = path.join(this.staticRoot, decodeURIComponent(p));
    if (!file.startsWith(this.staticRoot)) return null;
    if (existsSync(file) && statSync(file).isDirectory()) {
      if (!p.endsWith('/')) return { status: 301, headers: { location: `${p}/` } };
      return this.staticRoute(`${p}index.html`);
    }
    if (!existsSync(file)) return null;
    const ext = path.extname(file).toLowerCase();
    const types: Record<string, string> = {
      '.html': 'text/html; charset=utf-8',
      '.txt': 'text/plain; charset=utf-8',
      '.css': 'text/css',
      '.js': 'text/javascript',
      '.png': 'image/png',
      '.svg': 'image/svg+xml',
    };
    return { staticFile: file, contentType: types[ext] ?? 'application/octet-stream' };
  }
}

/** A documentation-like page with one unique code block per page (so snippet counts are predictable). */
export function docPage(opts: { title: string; links?: string[]; code?: string | string[]; siteName?: string; head?: string; description?: string }): string {
  const codes = opts.code === undefined ? [`print(${JSON.stringify(opts.title)})`] : Array.isArray(opts.code) ? opts.code : [opts.code];
  return `<!doctype html><html><head><meta charset="utf-8"><title>${opts.title}${opts.siteName ? ` — ${opts.siteName}` : ''}</title>
${opts.description ? `<meta name="description" content="${opts.description}">` : ''}${opts.head ?? ''}</head>
<body><main><h1>${opts.title}</h1><p>Some text about ${opts.title} that explains the example below in words.</p>
${codes.map((c) => `<pre><code class="language-python">${c.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</code></pre>`).join('\n')}
<ul>${(opts.links ?? []).map((l) => `<li><a href="${l}">${l}</a></li>`).join('')}</ul></main></body></html>`;
}

/** A site from a link graph: each key is a path, its value the paths it links to. */
export function graphRoutes(graph: Record<string, string[]>, extra: Partial<Route> = {}): Record<string, Route> {
  const routes: Record<string, Route> = {};
  for (const [p, links] of Object.entries(graph)) routes[p] = { ...extra, body: docPage({ title: `Page ${p}`, links }) };
  return routes;
}

/** Pages reachable from `start` within `depth` link hops: what a crawl of that depth must store. */
export function reachable(graph: Record<string, string[]>, start: string, depth: number): Set<string> {
  const seen = new Set([start]);
  let frontier = [start];
  for (let d = 0; d < depth; d++) {
    const next: string[] = [];
    for (const p of frontier) {
      for (const l of graph[p] ?? []) {
        if (seen.has(l) || graph[l] === undefined) continue;
        seen.add(l);
        next.push(l);
      }
    }
    frontier = next;
  }
  return seen;
}

/** The site-wide files a crawl reads besides its pages: robots.txt, and llms.txt / llms-full.txt at any level. */
export function isSiteFile(p: string): boolean {
  return p === '/robots.txt' || /\/llms(-full)?\.txt$/.test(p);
}
