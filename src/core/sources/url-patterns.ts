import type pg from 'pg';
import { NotFoundError, ValidationError } from '../errors.js';

// The same bounds as updateSource's pattern check; a list longer than this is a paste accident.
const MAX_PATTERNS = 50;
const MAX_PATTERN_LENGTH = 500;

/**
 * Replaces a source's include URL patterns (crawl_config.url_patterns), used from the next recrawl on.
 * updateSource only adds patterns; an editor that shows the list must also be able to remove one.
 */
export async function setUrlPatterns(pool: pg.Pool, sourceId: string, patterns: string[]): Promise<string[]> {
  const clean = [...new Set(patterns.map((p) => p.trim()).filter((p) => p !== ''))];
  if (clean.length > MAX_PATTERNS) throw new ValidationError(`At most ${MAX_PATTERNS} URL patterns, got ${clean.length}.`);
  for (const p of clean) {
    if (p.length > MAX_PATTERN_LENGTH) throw new ValidationError(`URL patterns must be 1 to ${MAX_PATTERN_LENGTH} characters, got ${JSON.stringify(p)}.`);
  }
  const { rowCount } = await pool.query(`UPDATE sources SET crawl_config = jsonb_set(crawl_config, '{url_patterns}', $2::jsonb), updated_at = now() WHERE id = $1`, [sourceId, JSON.stringify(clean)]);
  if (!rowCount) throw new NotFoundError(`Source ${sourceId} not found.`, { hint: 'List sources with `docdex sources list`.' });
  return clean;
}
