import type pg from 'pg';
import type { SourceCrawlConfig } from '../crawl-request.js';
import { allUnderBaseUrl, distinguishedName } from './site.js';

/**
 * The crawler's side of sources: a crawl creates or joins the source keyed by (name, version). It joins an
 * existing source only when its name was given, or when its start URLs fall under that source's base URL
 * (the same site); a detected name that another site's source holds gets a distinguishing suffix instead
 * (see `distinguishedName`). Another site's configuration is never overwritten: joining it by name adds the
 * start URLs and keeps its base URL and description. Metadata is merged so a later crawl that omits a key
 * does not erase it; the description is replaced only by a non-empty one.
 */

/** Derived from the crawl request's schema: every field about how the source is crawled (see STORED_FIELDS). */
export type { SourceCrawlConfig };

export interface SourceForCrawl {
  name: string;
  /** False when the name was detected from the site: then only the same site's source is joined. */
  nameGiven: boolean;
  version: string;
  description: string;
  baseUrl: string;
  crawlConfig: SourceCrawlConfig;
  metadata: Record<string, unknown>;
  /** The local user typed the start URLs (net/provenance.ts): stored with them, for recrawls. */
  typedByUser: boolean;
}

export interface UpsertedSource {
  id: string;
  name: string;
  version: string;
  description: string;
  created: boolean;
}

interface ExistingSource {
  id: string;
  base_url: string | null;
  crawl_config: Partial<SourceCrawlConfig>;
}

/** Enough tries for any realistic number of sites sharing one detected name. */
const MAX_NAME_ATTEMPTS = 50;

async function lockSourceByName(client: pg.ClientBase, name: string, version: string): Promise<ExistingSource | null> {
  const { rows } = await client.query<ExistingSource>('SELECT id, base_url, crawl_config FROM sources WHERE name = $1 AND version = $2 FOR UPDATE', [name, version]);
  return rows[0] ?? null;
}

/** Inserts a new source; null when another transaction created that name meanwhile. */
async function insertSource(client: pg.ClientBase, source: SourceForCrawl): Promise<UpsertedSource | null> {
  const { rows } = await client.query<UpsertedSource>(
    `INSERT INTO sources (name, version, description, base_url, kind, crawl_config, metadata, typed_by_user)
     VALUES ($1, $2, $3, $4, 'crawl', $5, $6, $7)
     ON CONFLICT (name, version) DO NOTHING
     RETURNING id, name, version, description, true AS created`,
    [source.name, source.version, source.description, source.baseUrl, JSON.stringify(source.crawlConfig), JSON.stringify(source.metadata), source.typedByUser],
  );
  return rows[0] ?? null;
}

/**
 * Updates a joined source. The base URL stays (it already covers the same site, and another site's crawl
 * must not move it). For the same site the crawl's configuration replaces the stored one; for another site
 * (joined by its given name) the start URLs are added to the stored ones so a recrawl fetches both, and the
 * description is only filled in when there is none. The source's URLs count as typed by the user only when all
 * of them were: this crawl's replace the stored ones only for the same site of a source without a repository.
 */
async function updateJoinedSource(client: pg.ClientBase, existing: ExistingSource, source: SourceForCrawl, sameSite: boolean): Promise<UpsertedSource> {
  const startUrls = sameSite ? source.crawlConfig.start_urls : [...new Set([...(existing.crawl_config.start_urls ?? []), ...source.crawlConfig.start_urls])];
  const { rows } = await client.query<UpsertedSource>(
    `UPDATE sources SET
       description = CASE WHEN $2 <> '' AND ($5 OR description = '') THEN $2 ELSE description END,
       base_url = coalesce(base_url, $3),
       -- A git source joined by name (a package's docs site beside its repository) keeps its checkout origin.
       crawl_config = $4::jsonb || CASE WHEN crawl_config ? 'git' THEN jsonb_build_object('git', crawl_config->'git') ELSE '{}'::jsonb END,
       metadata = metadata || $6,
       typed_by_user = $7 AND (($5 AND NOT crawl_config ? 'git') OR typed_by_user),
       updated_at = now()
     WHERE id = $1
     RETURNING id, name, version, description, false AS created`,
    [existing.id, source.description, source.baseUrl, JSON.stringify({ ...source.crawlConfig, start_urls: startUrls }), sameSite, JSON.stringify(source.metadata), source.typedByUser],
  );
  return rows[0]!;
}

/** Locks the source row until the caller's transaction ends, so one source gets one active crawl at a time. */
export async function upsertSourceForCrawl(client: pg.ClientBase, source: SourceForCrawl): Promise<UpsertedSource> {
  let attempt = 0;
  for (let tries = 0; tries < MAX_NAME_ATTEMPTS * 2; tries++) {
    const name = attempt === 0 ? source.name : distinguishedName(source.name, source.baseUrl, attempt);
    const existing = await lockSourceByName(client, name, source.version);
    if (!existing) {
      const created = await insertSource(client, { ...source, name });
      if (created) return created;
      continue; // Created meanwhile by a concurrent crawl: look at it again under the lock.
    }
    const sameSite = allUnderBaseUrl(source.crawlConfig.start_urls, existing.base_url);
    if (sameSite || source.nameGiven) return updateJoinedSource(client, existing, { ...source, name }, sameSite);
    attempt += 1;
    if (attempt > MAX_NAME_ATTEMPTS) break;
  }
  throw new Error(`no free source name for ${source.name} (${source.baseUrl})`);
}

/** Fills in a description found on the start page when the source has none yet. */
export async function fillSourceDescription(client: pg.ClientBase | pg.Pool, sourceId: string, description: string): Promise<void> {
  if (!description.trim()) return;
  await client.query(`UPDATE sources SET description = $2, updated_at = now() WHERE id = $1 AND description = ''`, [sourceId, description.trim().slice(0, 2000)]);
}
