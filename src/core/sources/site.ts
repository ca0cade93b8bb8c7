/**
 * Which site a crawl belongs to. A site is a scheme, host, port and path prefix: two ports of one host, or two
 * GitHub Pages projects of one user, are different sites, so a crawl whose name was detected (not given)
 * must not join the other's source.
 */

function parse(url: string): URL | null {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed : null;
  } catch {
    return null;
  }
}

/** The directory part of a URL's path, always ending in '/': "/docs/3/index.html" gives "/docs/3/". */
export function directoryOf(pathname: string): string {
  return pathname.slice(0, pathname.lastIndexOf('/') + 1) || '/';
}

/**
 * Whether `url` falls under `baseUrl`: same scheme, host and port, and a path within the base URL's
 * directory. Unparsable URLs fall under nothing.
 */
export function isUnderBaseUrl(url: string, baseUrl: string): boolean {
  const u = parse(url);
  const base = parse(baseUrl);
  if (!u || !base) return false;
  if (u.protocol !== base.protocol || u.hostname !== base.hostname || u.port !== base.port) return false;
  return u.pathname.startsWith(directoryOf(base.pathname));
}

/** Whether every start URL falls under the base URL (the crawl is of that site). */
export function allUnderBaseUrl(urls: readonly string[], baseUrl: string | null): boolean {
  return baseUrl !== null && urls.length > 0 && urls.every((u) => isUnderBaseUrl(u, baseUrl));
}

/**
 * A readable label that tells a site apart from others on its host: the host without `www.`, `-port` when
 * the URL names a port, and `/path` for its directory: "127.0.0.1-8001", "user.github.io/project",
 * "docs.example.com/v2/api". Empty for an unparsable URL.
 */
export function siteLabel(url: string): string {
  const u = parse(url);
  if (!u) return '';
  const host = u.hostname.replace(/^www\./, '').replace(/^\[|\]$/g, '');
  const port = u.port ? `-${u.port}` : '';
  const dir = directoryOf(u.pathname).replace(/^\/+|\/+$/g, '');
  return `${host}${port}${dir ? `/${dir}` : ''}`.slice(0, 150);
}

/**
 * The name for a detected-name crawl whose name another site's source holds. A name that is the bare host
 * becomes the site label ("127.0.0.1" → "127.0.0.1-8001"); any other name gets the label in parentheses
 * ("Python docs (127.0.0.1-8001)"). `attempt` > 1 adds a counter for the rare label collision.
 */
export function distinguishedName(name: string, url: string, attempt = 1): string {
  const label = siteLabel(url);
  const counter = attempt > 1 ? ` ${attempt}` : '';
  const host = parse(url)?.hostname.replace(/^www\./, '');
  if (label && (name === host || name === label)) return `${label}${counter}`.slice(0, 200);
  return `${name} (${label || 'site'}${counter})`.slice(0, 200);
}
