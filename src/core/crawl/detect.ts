import type pg from 'pg';
import type { Config } from '../config.js';
import { extractDocument } from '../extract/index.js';
import { PageFetcher } from './fetch.js';
import { confirmHostRequest, waitForHostSlot } from './politeness.js';
import { hostKey } from './url.js';

export interface DetectedSite {
  /** The site's common name (python, node), else its host. */
  name: string;
  /** The version the site states, '' when none. */
  version: string;
  description: string;
}

/** The host as a name: `www.` dropped, since it names the server, not the library. */
export function nameFromHost(url: string): string {
  return new URL(url).hostname.replace(/^www\./, '');
}

/**
 * The name and version of a crawl request that lacks them, from its start page (extract/site-identity.ts:
 * "json — Python 3.13 documentation" gives python@3.13, "Index | Node.js v18.20.4 Documentation"
 * node@18.20.4), else the host and no version. The page's meta description, else the site's own title, comes
 * along for the source. A start page that cannot be fetched still gives the host, so a request is never
 * refused for a name.
 */
export async function detectSite(pool: pg.Pool, config: Config, url: string, options: { timeoutMs?: number; allowLoopback?: boolean } = {}): Promise<DetectedSite> {
  const fallback = { name: nameFromHost(url), version: '', description: '' };
  const timeoutMs = options.timeoutMs ?? 15_000;
  const fetcher = new PageFetcher({
    maxRetries: 0,
    totalTimeoutMs: timeoutMs,
    headersTimeoutMs: timeoutMs,
    connectTimeoutMs: Math.min(timeoutMs, 10_000),
    allowHosts: config.outbound.allowHosts,
  });
  try {
    // The same outbound policy as the crawl it names: a refused start page gives the host as the name.
    const result = await fetcher.fetch(url, {
      allowLoopback: options.allowLoopback ?? false,
      signal: AbortSignal.timeout(timeoutMs + 1000),
      beforeRequest: (u, signal) => waitForHostSlot(pool, hostKey(u), config.crawl.delaySeconds, signal),
      afterSend: (u) => confirmHostRequest(pool, hostKey(u), config.crawl.delaySeconds),
    });
    if (result.kind !== 'ok') return fallback;
    const { page } = extractDocument({ url: result.url, contentType: result.contentType, body: result.body });
    const site = page.site;
    return { name: site?.name || fallback.name, version: site?.version ?? '', description: page.description.trim() || (site?.title ?? '') };
  } catch {
    return fallback;
  } finally {
    await fetcher.close();
  }
}
