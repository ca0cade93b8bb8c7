import { compileGlob } from '../crawl-request.js';

/**
 * Which discovered URLs a job follows. Without a domain filter a crawl stays on the hosts of its start URLs
 * (a documentation crawl must not wander off to GitHub). A domain filter admits that domain and its
 * subdomains. url_patterns, when given, must match; exclude_patterns must not. Start URLs are always crawled:
 * they were asked for explicitly.
 */
export interface ScopeConfig {
  startUrls: string[];
  domainFilter: string | null;
  urlPatterns: string[];
  excludePatterns: string[];
}

export interface Scope {
  allows(url: URL): boolean;
  /** The scheme, host and port part of `allows` alone (no URL patterns): where sitemaps may be read. */
  allowsOrigin(url: URL): boolean;
}

/**
 * The forms a glob is matched against, so `https://x/docs/**`, `x/docs/**` and `/docs/**` all work: the
 * full URL, the URL without its scheme, and the path (with and without the query).
 */
function candidates(url: URL): string[] {
  const pathAndQuery = url.pathname + url.search;
  return [url.href, `${url.host}${pathAndQuery}`, pathAndQuery, url.pathname];
}

/**
 * Without a domain filter, a URL must share a start URL's origin: scheme, host and port, so a start URL on
 * :8000 admits nothing on :9000 of the same host. An http start URL also admits its https twin (sites move
 * to https), and the reverse, on the default ports. With a domain filter, any http(s) URL on that domain or
 * a subdomain of it.
 */
function originMatcher(config: ScopeConfig): (url: URL) => boolean {
  const domain = config.domainFilter;
  if (domain) {
    return (url) => (url.protocol === 'http:' || url.protocol === 'https:') && (url.hostname === domain || url.hostname.endsWith(`.${domain}`));
  }
  const origins = new Set<string>();
  for (const raw of config.startUrls) {
    const start = new URL(raw);
    origins.add(start.origin);
    if (start.port === '') origins.add(`${start.protocol === 'https:' ? 'http:' : 'https:'}//${start.host}`);
  }
  return (url) => origins.has(url.origin);
}

export function createScope(config: ScopeConfig): Scope {
  const include = config.urlPatterns.map(compileGlob);
  const exclude = config.excludePatterns.map(compileGlob);
  const allowsOrigin = originMatcher(config);
  return {
    allowsOrigin,
    allows(url: URL): boolean {
      if (!allowsOrigin(url)) return false;
      const forms = candidates(url);
      if (include.length > 0 && !include.some((re) => forms.some((f) => re.test(f)))) return false;
      if (exclude.some((re) => forms.some((f) => re.test(f)))) return false;
      return true;
    },
  };
}
