/**
 * URL identity for the crawler. Two forms:
 * - the fetch form (`cleanUrl`): what we request; the fragment is dropped and default ports go, nothing else
 *   changes, because servers differ on whether `/docs` and `/docs/` are the same resource;
 * - both keep a hash route (`#/guide/x`, `#!/x`): only a hash-routed site has them in its links (the extractor
 *   drops fragments; the renderer adds a rendered page's hash routes), and there each is a page of its own;
 * - the key (`normalizeUrl`): what deduplicates the frontier; `/docs`, `/docs/` and `/docs/index.html` are
 *   one page, tracking parameters are dropped and the query is kept otherwise.
 */

const INDEX_FILE = /(^|\/)index\.(html?|php|md)$/i;
// Analytics parameters never select different content; keeping them would crawl each page once per campaign.
const TRACKING_PARAM = /^(utm_[a-z]+|gclid|fbclid|mc_cid|mc_eid)$/i;

function parseHttp(raw: string | URL, base?: string | URL): URL | null {
  try {
    const url = typeof raw === 'string' ? new URL(raw.trim(), base) : new URL(raw.href);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    if (!url.hostname) return null;
    // A hash route (`#/guide/x`, `#!/x`) names a page of a hash-routed site; any other fragment is a place on the page.
    if (!/^#!?\//.test(url.hash)) url.hash = '';
    // WHATWG URL already lowercases the host and drops :80 / :443; a trailing dot names the same host.
    if (url.hostname.endsWith('.')) url.hostname = url.hostname.slice(0, -1);
    return url;
  } catch {
    return null;
  }
}

/** The URL to request: fragment stripped, default port dropped. Null for non-http(s) or unparsable input. */
export function cleanUrl(raw: string | URL, base?: string | URL): string | null {
  return parseHttp(raw, base)?.href ?? null;
}

/** The deduplication key of a page. Null for non-http(s) or unparsable input. */
export function normalizeUrl(raw: string | URL, base?: string | URL): string | null {
  const url = parseHttp(raw, base);
  if (!url) return null;
  let path = url.pathname.replace(/\/{2,}/g, '/');
  path = path.replace(INDEX_FILE, '$1');
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  if (path === '') path = '/';
  url.pathname = path;
  if (url.search) {
    const params = new URLSearchParams(url.search);
    for (const name of [...params.keys()]) if (TRACKING_PARAM.test(name)) params.delete(name);
    const rest = params.toString();
    url.search = rest ? `?${rest}` : '';
  }
  return url.href;
}

/** host[:port], the unit of politeness and of robots.txt. */
export function hostKey(url: string | URL): string {
  return (typeof url === 'string' ? new URL(url) : url).host;
}

export function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}
