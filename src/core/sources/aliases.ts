import type pg from 'pg';
import { NotFoundError, ValidationError } from '../errors.js';
import { MAX_LIBRARY_NAME_CHARS } from '../library-ref.js';
import { isUuid } from './resolve.js';

/** Other names a library is known by (migration 023): name resolution and search_libraries match them too. */

export const MAX_ALIASES = 20;
const CONTROL = /[\p{Cc}\u2028\u2029]/u;

/** The aliases checked, trimmed and without duplicates (case-insensitive), in their given order. */
export function checkAliases(aliases: readonly string[]): string[] {
  const kept = new Map<string, string>();
  for (const raw of aliases) {
    if (typeof raw !== 'string') throw new ValidationError('Aliases must be strings.');
    const alias = raw.trim();
    if (alias.length === 0 || alias.length > MAX_LIBRARY_NAME_CHARS) throw new ValidationError(`An alias must be 1 to ${MAX_LIBRARY_NAME_CHARS} characters, got ${JSON.stringify(raw)}.`);
    if (CONTROL.test(alias)) throw new ValidationError(`An alias must not contain control characters or line breaks, got ${JSON.stringify(raw)}.`);
    if (!kept.has(alias.toLowerCase())) kept.set(alias.toLowerCase(), alias);
  }
  if (kept.size > MAX_ALIASES) throw new ValidationError(`A library has at most ${MAX_ALIASES} aliases, got ${kept.size}.`);
  return [...kept.values()];
}

/**
 * Replaces a source's aliases (e.g. a registry package's repository name: `add npm:acme-js` sets `acme`), so
 * `search_libraries acme` and `--source acme` find the package. An alias equal to the source's own name is
 * dropped. Runs on the caller's client, so it can join the transaction that creates the source.
 */
export async function setSourceAliases(client: pg.Pool | pg.ClientBase, sourceId: string, aliases: readonly string[]): Promise<string[]> {
  if (!isUuid(sourceId)) throw new ValidationError(`A source id must be a UUID, got ${JSON.stringify(sourceId)}.`);
  const checked = checkAliases(aliases);
  const { rows } = await client.query<{ aliases: string[] }>(
    `UPDATE sources SET aliases = ARRAY(SELECT a FROM unnest($2::text[]) WITH ORDINALITY AS t(a, n) WHERE lower(a) <> lower(name) ORDER BY n),
            updated_at = now()
      WHERE id = $1 RETURNING aliases`,
    [sourceId, checked],
  );
  if (!rows[0]) throw new NotFoundError(`Source ${sourceId} not found.`);
  return rows[0].aliases;
}

/**
 * Records what a library was added as: the registry spec it came from (`metadata.origin`, which the
 * not-indexed answer turns into the spec for another version) and the names it is also known by.
 */
export async function recordPackageOrigin(pool: pg.Pool, library: { name: string; version: string }, origin: string, aliases: readonly string[]): Promise<void> {
  const id = await recordOrigin(pool, library, origin);
  if (id !== undefined) await setSourceAliases(pool, id, aliases);
}

/** Records the spec a library version was added from (`metadata.origin`); its id, or undefined when it is gone. */
export async function recordOrigin(pool: pg.Pool, library: { name: string; version: string }, origin: string): Promise<string | undefined> {
  const { rows } = await pool.query<{ id: string }>(
    `UPDATE sources SET metadata = metadata || jsonb_build_object('origin', $3::text), updated_at = now() WHERE name = $1 AND version = $2 RETURNING id`,
    [library.name, library.version, origin],
  );
  return rows[0]?.id;
}
