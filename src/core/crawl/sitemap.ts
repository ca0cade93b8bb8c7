import { gunzipSync } from 'node:zlib';
import { decodeXML } from 'entities';

/**
 * Sitemaps (sitemaps.org): a urlset lists pages, a sitemapindex lists further sitemaps. Only <loc> matters to
 * the crawler. Gzipped files (`sitemap.xml.gz`, served as a gzip file rather than with Content-Encoding) are
 * unpacked here.
 */

export interface ParsedSitemap {
  pages: string[];
  sitemaps: string[];
}

/** Protocol limit per file; also bounds what a hostile sitemap can push into the frontier. */
export const MAX_SITEMAP_URLS = 50_000;

export function parseSitemap(body: Buffer | string, maxBytes = 50 * 1024 * 1024): ParsedSitemap {
  let buf = typeof body === 'string' ? Buffer.from(body) : body;
  if (buf.length > 2 && buf[0] === 0x1f && buf[1] === 0x8b) buf = gunzipSync(buf, { maxOutputLength: maxBytes });
  const text = buf.toString('utf8');
  const isIndex = /<sitemapindex[\s>]/i.test(text);
  const locs: string[] = [];
  const re = /<loc>\s*(?:<!\[CDATA\[)?([\s\S]*?)(?:\]\]>)?\s*<\/loc>/gi;
  for (let m = re.exec(text); m && locs.length < MAX_SITEMAP_URLS; m = re.exec(text)) {
    const loc = decodeXML(m[1]!.trim());
    if (loc) locs.push(loc);
  }
  return isIndex ? { pages: [], sitemaps: locs } : { pages: locs, sitemaps: [] };
}
