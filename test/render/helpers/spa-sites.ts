import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Generated documentation sites in three client-rendered shapes, each with a pre-rendered twin serving the
 * same content as plain HTML: what a crawl of the rendered site must index is what a fetch of the twin gives.
 */

export interface SitePage {
  /** The route: `guide/install` (history path `/guide/install`, hash route `#/guide/install`). */
  route: string;
  title: string;
  prose: string;
  code: string;
}

export type SiteShape = 'history' | 'hash' | 'mixed';

export interface ServedSite {
  url: string;
  /** Paths requested, in order (fragments never reach a server). */
  hits: string[];
  close(): Promise<void>;
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** `count` pages with distinct code, linked from the first. */
export function sitePages(prefix: string, count: number): SitePage[] {
  return Array.from({ length: count }, (_, i) => ({
    route: i === 0 ? '' : `guide/page-${i}`,
    title: `${prefix} page ${i}`,
    prose: `How to use the ${prefix} feature number ${i}, explained in a sentence or two of documentation prose.`,
    code: `import ${prefix}\n${prefix}.feature_${i}(option=${i}, verbose=True)\nprint("${prefix} ${i} done")`,
  }));
}

function href(shape: SiteShape, route: string): string {
  return shape === 'hash' ? `#/${route}` : `/${route}`;
}

/** The page's content as the app draws it and as the twin serves it: one string for both. */
function contentHtml(shape: SiteShape, page: SitePage, pages: SitePage[]): string {
  const nav = pages.map((p) => `<li><a href="${href(shape, p.route)}">${escapeHtml(p.title)}</a></li>`).join('');
  return `<nav><ul>${nav}</ul></nav><main><h1>${escapeHtml(page.title)}</h1><p>${escapeHtml(page.prose)}</p><pre><code class="language-python">${escapeHtml(page.code)}</code></pre></main>`;
}

function document(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body>${body}</body></html>`;
}

/** The app: the route from the path or the hash, its content drawn into #root, redrawn on hash changes. */
function appScript(shape: SiteShape, pages: SitePage[]): string {
  const bodies = Object.fromEntries(pages.map((p) => [p.route, { title: p.title, html: contentHtml(shape, p, pages) }]));
  const routeExpr = shape === 'hash' ? "location.hash.replace(/^#\\/?/, '')" : "location.pathname.replace(/^\\//, '')";
  return `const PAGES = ${JSON.stringify(bodies)};
function draw() {
  const page = PAGES[${routeExpr}] || { title: 'Not found', html: '<p>Not found</p>' };
  document.title = page.title;
  // Content arrives a moment later, as from an API: the renderer must wait for the page to settle.
  setTimeout(() => { document.getElementById('root').innerHTML = page.html; }, 50);
}
window.addEventListener('hashchange', draw);
draw();
`;
}

const SHELL = document('Loading…', '<div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript><script src="/app.js"></script>');

/** Which pages of a mixed site are client-rendered: every odd one. */
export function isShellPage(shape: SiteShape, index: number): boolean {
  return shape !== 'mixed' || index % 2 === 1;
}

function listen(handler: (path: string) => { type: string; body: string } | null, extra?: (req: http.IncomingMessage) => void): Promise<ServedSite> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits.push(path);
    extra?.(req);
    if (path === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
    const answer = handler(path);
    if (!answer) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    res.writeHead(200, { 'content-type': answer.type }).end(answer.body);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      resolve({ url, hits, close: () => new Promise<void>((done) => server.close(() => done())) });
    });
  });
}

/** The client-rendered site: shells and app.js (a mixed site serves its even pages as plain HTML). */
export function serveRenderedSite(shape: SiteShape, pages: SitePage[], extraScript = ''): Promise<ServedSite> {
  const byPath = new Map(pages.map((p, i) => [`/${p.route}`, i]));
  return listen((path) => {
    if (path === '/app.js') return { type: 'application/javascript', body: appScript(shape, pages) + extraScript };
    const index = shape === 'hash' ? (path === '/' ? 0 : undefined) : byPath.get(path);
    if (index === undefined) return null;
    if (isShellPage(shape, index)) return { type: 'text/html; charset=utf-8', body: SHELL };
    const page = pages[index]!;
    return { type: 'text/html; charset=utf-8', body: document(page.title, `<div id="root">${contentHtml(shape, page, pages)}</div>`) };
  });
}

/** The pre-rendered twin: every page as plain HTML at its history path. */
export function servePrerenderedSite(pages: SitePage[]): Promise<ServedSite> {
  const byPath = new Map(pages.map((p) => [`/${p.route}`, p]));
  return listen((path) => {
    const page = byPath.get(path);
    return page ? { type: 'text/html; charset=utf-8', body: document(page.title, `<div id="root">${contentHtml('history', page, pages)}</div>`) } : null;
  });
}
