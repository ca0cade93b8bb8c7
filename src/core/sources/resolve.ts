import type pg from 'pg';
import { NotFoundError, ValidationError } from '../errors.js';
import { editDistance } from '../search/typo.js';

/**
 * Naming a source: by UUID, or by name, matched exactly (case-insensitive) first and then fuzzily through the
 * trigram index on sources.name, as the spec asks for library names ("fast api" finds "FastAPI"). A name
 * covers every version of the library unless a version is given.
 */

export interface SourceRef {
  id: string;
  name: string;
  version: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// Below this trigram similarity a "fuzzy" match is a different library, not a spelling of this one.
const MIN_SIMILARITY = 0.3;

export function isUuid(text: string): boolean {
  return UUID.test(text);
}

async function byName(pool: pg.Pool | pg.ClientBase, name: string, version: string | undefined): Promise<SourceRef[]> {
  const { rows } = await pool.query<SourceRef>(
    `SELECT id, name, version FROM sources WHERE lower(name) = lower($1) AND ($2::text IS NULL OR version = $2)
      ORDER BY version DESC`,
    [name, version ?? null],
  );
  return rows;
}

async function closestName(pool: pg.Pool | pg.ClientBase, text: string): Promise<string | null> {
  // Containment counts as a match too ("node" in "node.js"), ranked after closer spellings.
  const { rows } = await pool.query<{ name: string }>(
    `SELECT name FROM sources
      WHERE similarity(lower(name), lower($1)) >= $2
         OR (length($1) >= 3 AND (strpos(lower(name), lower($1)) > 0 OR strpos(lower($1), lower(name)) > 0))
      ORDER BY similarity(lower(name), lower($1)) DESC, length(name), name
      LIMIT 1`,
    [text, MIN_SIMILARITY],
  );
  if (rows[0]) return rows[0].name;
  // Trigrams miss swapped letters in short names ("djnago"); a handful of edits still names the library.
  // There are few sources, so comparing with every name is cheap.
  const all = await pool.query<{ name: string }>('SELECT DISTINCT name FROM sources');
  const wanted = text.toLowerCase();
  const maxEdits = wanted.length < 4 ? 0 : wanted.length < 8 ? 1 : 2;
  let best: { name: string; d: number } | null = null;
  for (const { name } of all.rows) {
    const d = editDistance(wanted, name.toLowerCase(), maxEdits);
    if (d <= maxEdits && (best === null || d < best.d || (d === best.d && name < best.name))) best = { name, d };
  }
  return best?.name ?? null;
}

/** Every source the reference names (several when a name has several versions). Throws NotFoundError. */
export async function resolveSources(pool: pg.Pool | pg.ClientBase, ref: string, version?: string): Promise<SourceRef[]> {
  const text = ref.trim();
  if (text.length === 0) throw new ValidationError('Source name or id must not be empty.');
  if (isUuid(text)) {
    const { rows } = await pool.query<SourceRef>('SELECT id, name, version FROM sources WHERE id = $1', [text]);
    if (rows.length === 0) throw new NotFoundError(`Source ${text} not found.`, { hint: 'List sources with `docdex sources list`.' });
    if (version !== undefined && rows[0]!.version !== version) {
      throw new NotFoundError(`Source ${text} (${rows[0]!.name}) has version "${rows[0]!.version}", not "${version}".`);
    }
    return rows;
  }
  let rows = await byName(pool, text, version);
  if (rows.length === 0) {
    const name = await closestName(pool, text);
    if (name !== null) rows = await byName(pool, name, version);
  }
  if (rows.length === 0) {
    throw new NotFoundError(`No source matches "${text}"${version === undefined ? '' : ` with version "${version}"`}.`, {
      hint: 'List sources with `docdex sources list`.',
    });
  }
  return rows;
}

/** Exactly one source: a name with several versions needs the version (or the id). */
export async function resolveSource(pool: pg.Pool | pg.ClientBase, ref: string, version?: string): Promise<SourceRef> {
  const rows = await resolveSources(pool, ref, version);
  if (rows.length > 1) {
    throw new ValidationError(`"${ref}" names ${rows.length} versions of ${rows[0]!.name}: ${rows.map((r) => r.version || '(unversioned)').join(', ')}.`, {
      hint: 'Pass --version, or the source id from `docdex sources list`.',
    });
  }
  return rows[0]!;
}
