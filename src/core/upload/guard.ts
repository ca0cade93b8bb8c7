import type pg from 'pg';
import { ConflictError } from '../errors.js';
import { directoryOf, siteLabel } from '../sources/site.js';

/**
 * An upload may only write into an upload source, and may not claim a URL on a site a crawled source documents
 * (its origin and base path): otherwise anyone who can upload could put their own text under a trusted
 * library's name or address.
 */

interface SourceUrls {
  name: string;
  version: string;
  base_url: string | null;
  start_urls: string[] | null;
  domain_filter: string | null;
}

/** The source an upload would write into, locked until the upload's transaction ends. */
async function lockTargetSource(client: pg.ClientBase, name: string, version: string): Promise<{ kind: string } | undefined> {
  const { rows } = await client.query<{ kind: string }>('SELECT kind FROM sources WHERE name = $1 AND version = $2 FOR UPDATE', [name, version]);
  return rows[0];
}

/**
 * The addresses crawled sources are known by: base URL, start URLs and domain filter. A crawl fetched its pages
 * from that site; an upload's source URL is only a claim, so other uploads' claims are not protected.
 */
async function crawledSourcesUrls(client: pg.ClientBase): Promise<SourceUrls[]> {
  const { rows } = await client.query<SourceUrls>(
    `SELECT name, version, base_url,
            CASE WHEN jsonb_typeof(crawl_config->'start_urls') = 'array'
                 THEN ARRAY(SELECT jsonb_array_elements_text(crawl_config->'start_urls')) END AS start_urls,
            crawl_config->>'domain_filter' AS domain_filter
       FROM sources
      WHERE kind <> 'upload'`,
  );
  return rows;
}

function parsed(url: string): URL | undefined {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u : undefined;
  } catch {
    return undefined;
  }
}

/** The origin, with http and https on their default ports counted as one site (as a crawl's scope counts them). */
function siteOrigin(url: URL): string {
  return url.port === '' ? `//${url.hostname}` : url.origin;
}

/**
 * Whether `claim` overlaps the site a crawled source documents: on the same origin (another port of the host is
 * another site) as its base URL or one of its start URLs, with either path under the other's (a directory upload's
 * files go below its source URL, so a claim above a site's folder covers it too); or on its domain filter's domain.
 * A registry's tarball on the same host as a crawled site, on another port or path, is therefore not that site.
 */
function claimsSiteOf(claim: URL, other: SourceUrls): boolean {
  const domain = other.domain_filter?.toLowerCase();
  if (domain && (claim.hostname === domain || claim.hostname.endsWith(`.${domain}`))) return true;
  const claimed = claim.pathname.endsWith('/') ? claim.pathname : `${claim.pathname}/`;
  return [other.base_url, ...(other.start_urls ?? [])].some((raw) => {
    const site = raw === null ? undefined : parsed(raw);
    if (site === undefined || siteOrigin(site) !== siteOrigin(claim)) return false;
    const folder = directoryOf(site.pathname);
    return claim.pathname.startsWith(folder) || folder.startsWith(claimed);
  });
}

export interface UploadTarget {
  name: string;
  version: string;
  sourceUrl: string | undefined;
  /**
   * docdex itself read the content from `sourceUrl` (a package's README from its registry's tarball): the URL is
   * where the text came from, not a claim, so no crawled site's rule applies to it.
   */
  sourceUrlFetched?: boolean;
}

export async function assertUploadTargetAllowed(client: pg.ClientBase, upload: UploadTarget): Promise<void> {
  const target = await lockTargetSource(client, upload.name, upload.version);
  if (target !== undefined && target.kind !== 'upload') {
    throw new ConflictError(`Source "${upload.name}" (${upload.version}) is a crawled library: uploads cannot add pages to it.`, {
      hint: 'Upload under another name (--name / the "name" field).',
    });
  }
  const claim = upload.sourceUrl === undefined || upload.sourceUrlFetched === true ? undefined : parsed(upload.sourceUrl);
  if (claim === undefined) return;
  for (const other of await crawledSourcesUrls(client)) {
    if (claimsSiteOf(claim, other)) {
      throw new ConflictError(
        `The source URL ${upload.sourceUrl} is on ${siteLabel(claim.href)}, which source "${other.name}" (${other.version}) documents: an upload cannot claim another library's site.`,
        { hint: 'Leave source_url out, or use an address of your own.' },
      );
    }
  }
}
