import type pg from 'pg';
import { NotFoundError, ValidationError } from '../errors.js';
import { editDistance } from '../edit-distance.js';
import { aliasOf, clearBestMatch, NAME_MATCH_THRESHOLD, nameScoreSql } from './match.js';

/**
 * Naming a source: by UUID, or by name, matched exactly (case-insensitive) first and then fuzzily (aliases,
 * prefixes, trigrams, a few edits; see match.ts), as the spec asks for library names ("fast api" finds
 * "FastAPI", "pg" finds "postgresql"). A fuzzy name is taken only when it is the single or clearly best match;
 * otherwise the error lists the candidates. A name covers every version of the library unless a version is given.
 */

export interface SourceRef {
  id: string;
  name: string;
  version: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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

interface Candidate {
  name: string;
  score: number;
  snippet_count: number;
}

/** Source names matching `text` (or its alias), best first, their versions' snippets summed; content first. */
async function candidateNames(pool: pg.Pool | pg.ClientBase, text: string): Promise<Candidate[]> {
  const { rows } = await pool.query<Candidate>(
    `SELECT s.name, max(${nameScoreSql('$1', '$3')})::float8 AS score, sum(s.snippet_count)::int AS snippet_count
       FROM sources s GROUP BY s.name
     HAVING max(${nameScoreSql('$1', '$3')}) >= $2
      ORDER BY sum(s.snippet_count) > 0 DESC, 2 DESC, length(s.name), s.name
      LIMIT 10`,
    [text, NAME_MATCH_THRESHOLD, aliasOf(text)],
  );
  return rows;
}

/** Names a handful of edits away: trigrams miss swapped letters in short names ("djnago"). */
async function namesWithinEdits(pool: pg.Pool | pg.ClientBase, text: string): Promise<string[]> {
  // There are few sources, so comparing with every name is cheap.
  const all = await pool.query<{ name: string }>('SELECT DISTINCT name FROM sources');
  const wanted = text.toLowerCase();
  const maxEdits = wanted.length < 4 ? 0 : wanted.length < 8 ? 1 : 2;
  let best: { names: string[]; d: number } | null = null;
  for (const { name } of all.rows) {
    const d = editDistance(wanted, name.toLowerCase(), maxEdits);
    if (d > maxEdits) continue;
    if (best === null || d < best.d) best = { names: [name], d };
    else if (d === best.d) best.names.push(name);
  }
  return best?.names.sort() ?? [];
}

function ambiguous(text: string, candidates: Candidate[]): ValidationError {
  const list = candidates.map((c) => `${c.name} (${c.snippet_count} snippet${c.snippet_count === 1 ? '' : 's'})`).join(', ');
  return new ValidationError(`"${text}" matches ${candidates.length} sources and none clearly: ${list}.`, {
    hint: 'Pass the exact name or the id (`docdex sources list`).',
    details: candidates.map((c) => ({ name: c.name, snippet_count: c.snippet_count, score: Math.round(c.score * 1000) / 1000 })),
  });
}

/**
 * The one name `text` stands for when it is no exact name: the only candidate, or the clear best one (see
 * clearBestMatch); null when nothing matches. Several candidates and no clear one is an error listing them.
 */
async function closestName(pool: pg.Pool | pg.ClientBase, text: string): Promise<string | null> {
  const candidates = await candidateNames(pool, text);
  if (candidates.length === 1) return candidates[0]!.name;
  if (candidates.length > 1) {
    const best = clearBestMatch(candidates, text);
    if (best === undefined) throw ambiguous(text, candidates);
    return candidates[best]!.name;
  }
  const close = await namesWithinEdits(pool, text);
  if (close.length > 1)
    throw ambiguous(
      text,
      close.map((name) => ({ name, score: 0, snippet_count: 0 })),
    );
  return close[0] ?? null;
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
