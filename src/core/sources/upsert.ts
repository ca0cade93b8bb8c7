import type pg from 'pg';

/**
 * The crawler's side of sources: a crawl creates or updates the source keyed by (name, version). The crawl
 * configuration is stored so `sources recrawl` can repeat it; metadata is merged so a later crawl that
 * omits a key does not erase it; the description is replaced only by a non-empty one.
 */

export interface SourceCrawlConfig {
  start_urls: string[];
  max_depth: number;
  domain_filter: string | null;
  url_patterns: string[];
  exclude_patterns: string[];
  max_concurrent_crawls: number;
  use_sitemap: boolean;
  max_pages: number;
}

export interface SourceForCrawl {
  name: string;
  version: string;
  description: string;
  baseUrl: string;
  crawlConfig: SourceCrawlConfig;
  metadata: Record<string, unknown>;
}

export interface UpsertedSource {
  id: string;
  name: string;
  version: string;
  description: string;
  created: boolean;
}

/** Locks the source row until the caller's transaction ends, so one source gets one active crawl at a time. */
export async function upsertSourceForCrawl(client: pg.ClientBase, source: SourceForCrawl): Promise<UpsertedSource> {
  const { rows } = await client.query<UpsertedSource>(
    `INSERT INTO sources (name, version, description, base_url, kind, crawl_config, metadata)
     VALUES ($1, $2, $3, $4, 'crawl', $5, $6)
     ON CONFLICT (name, version) DO UPDATE SET
       description = CASE WHEN EXCLUDED.description <> '' THEN EXCLUDED.description ELSE sources.description END,
       base_url = EXCLUDED.base_url,
       crawl_config = EXCLUDED.crawl_config,
       metadata = sources.metadata || EXCLUDED.metadata,
       updated_at = now()
     RETURNING id, name, version, description, (xmax = 0) AS created`,
    [source.name, source.version, source.description, source.baseUrl, JSON.stringify(source.crawlConfig), JSON.stringify(source.metadata)],
  );
  return rows[0]!;
}

/** Fills in a description found on the start page when the source has none yet. */
export async function fillSourceDescription(client: pg.ClientBase | pg.Pool, sourceId: string, description: string): Promise<void> {
  if (!description.trim()) return;
  await client.query(`UPDATE sources SET description = $2, updated_at = now() WHERE id = $1 AND description = ''`, [sourceId, description.trim().slice(0, 2000)]);
}
