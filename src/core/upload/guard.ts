import type pg from 'pg';
import { getDomain } from 'tldts';
import { ConflictError } from '../errors.js';

/**
 * An upload may only write into an upload source, and may not claim a URL on a site a crawled source documents:
 * otherwise anyone who can upload could put their own text under a trusted library's name or address.
 */

interface SourceUrls {
  name: string;
  version: string;
  base_url: string | null;
  start_urls: string[] | null;
}

/** The source an upload would write into, locked until the upload's transaction ends. */
async function lockTargetSource(client: pg.ClientBase, name: string, version: string): Promise<{ kind: string } | undefined> {
  const { rows } = await client.query<{ kind: string }>('SELECT kind FROM sources WHERE name = $1 AND version = $2 FOR UPDATE', [name, version]);
  return rows[0];
}

/**
 * The addresses crawled sources are known by: base URL and start URLs. A crawl fetched its pages from that
 * site; an upload's source URL is only a claim, so other uploads' claims are not protected.
 */
async function crawledSourcesUrls(client: pg.ClientBase): Promise<SourceUrls[]> {
  const { rows } = await client.query<SourceUrls>(
    `SELECT name, version, base_url,
            CASE WHEN jsonb_typeof(crawl_config->'start_urls') = 'array'
                 THEN ARRAY(SELECT jsonb_array_elements_text(crawl_config->'start_urls')) END AS start_urls
       FROM sources
      WHERE kind <> 'upload'`,
  );
  return rows;
}

/** The registrable domain of a URL (`docs.python.org` → `python.org`), or its host name for IPs and local names. */
function siteOf(url: string): string | undefined {
  try {
    const { hostname } = new URL(url);
    return getDomain(hostname, { allowPrivateDomains: true }) ?? hostname;
  } catch {
    return undefined;
  }
}

export async function assertUploadTargetAllowed(client: pg.ClientBase, upload: { name: string; version: string; sourceUrl: string | undefined }): Promise<void> {
  const target = await lockTargetSource(client, upload.name, upload.version);
  if (target !== undefined && target.kind !== 'upload') {
    throw new ConflictError(`Source "${upload.name}" (${upload.version}) is a crawled library: uploads cannot add pages to it.`, {
      hint: 'Upload under another name (--name / the "name" field).',
    });
  }
  if (upload.sourceUrl === undefined) return;
  const site = siteOf(upload.sourceUrl);
  for (const other of await crawledSourcesUrls(client)) {
    const urls = [other.base_url, ...(other.start_urls ?? [])].filter((u): u is string => u !== null);
    if (site !== undefined && urls.some((u) => siteOf(u) === site)) {
      throw new ConflictError(`The source URL ${upload.sourceUrl} is on ${site}, which source "${other.name}" (${other.version}) documents: an upload cannot claim another library's site.`, {
        hint: 'Leave source_url out, or use an address of your own.',
      });
    }
  }
}
