import { compileGlob } from './request.js';

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
}

/**
 * The forms a glob is matched against, so `https://x/docs/**`, `x/docs/**` and `/docs/**` all work: the
 * full URL, the URL without its scheme, and the path (with and without the query).
 */
function candidates(url: URL): string[] {
  const pathAndQuery = url.pathname + url.search;
  return [url.href, `${url.host}${pathAndQuery}`, pathAndQuery, url.pathname];
}

export function createScope(config: ScopeConfig): Scope {
  const hosts = new Set(config.startUrls.map((u) => new URL(u).hostname));
  const include = config.urlPatterns.map(compileGlob);
  const exclude = config.excludePatterns.map(compileGlob);
  const domain = config.domainFilter;
  return {
    allows(url: URL): boolean {
      const host = url.hostname;
      if (domain ? host !== domain && !host.endsWith(`.${domain}`) : !hosts.has(host)) return false;
      const forms = candidates(url);
      if (include.length > 0 && !include.some((re) => forms.some((f) => re.test(f)))) return false;
      if (exclude.some((re) => forms.some((f) => re.test(f)))) return false;
      return true;
    },
  };
}
