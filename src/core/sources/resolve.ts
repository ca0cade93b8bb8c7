import type pg from 'pg';
import { NotFoundError, UserError, ValidationError } from '../errors.js';
import { editDistance } from '../edit-distance.js';
import { latestVersionFirst, parseLibraryRef, versionMatches, versionSpec } from '../library-ref.js';
import type { LibraryRef, VersionSpec } from '../library-ref.js';
import { aliasOf, clearBestMatch, NAME_MATCH_THRESHOLD, nameScoreSql } from './match.js';

/**
 * Naming a source: by UUID, or by a library reference (library-ref.ts: `name`, `name@18.3.1`, `name@^18.2`).
 * The name is matched exactly (case-insensitive) first and then fuzzily (aliases, prefixes, trigrams, a few
 * edits; see match.ts), as the spec asks for library names ("fast api" finds "FastAPI", "pg" finds
 * "postgresql"). A fuzzy name is taken only when it is the single or clearly best match; otherwise the error
 * lists the candidates. Then the version: a bare name means the latest version (latestVersionFirst), a version
 * the newest indexed one it matches; a version that is not indexed is an error listing the indexed ones,
 * never another version in its place.
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

interface VersionRow extends SourceRef {
  created_at: Date;
  last_crawled_at: Date | null;
  metadata: Record<string, unknown>;
}

const VERSION_COLUMNS = 'id, name, version, created_at, last_crawled_at, metadata';

/** Every version of the library named exactly `name` (case-insensitive), the latest first. */
async function versionsNamed(pool: pg.Pool | pg.ClientBase, name: string): Promise<VersionRow[]> {
  const { rows } = await pool.query<VersionRow>(`SELECT ${VERSION_COLUMNS} FROM sources WHERE lower(name) = lower($1)`, [name]);
  return rows.sort(latestVersionFirst);
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

/** How an indexed version is named in messages: its label, or "(unversioned)". */
export function versionLabel(version: string): string {
  return version === '' ? '(unversioned)' : version;
}

/**
 * What to index to get `requested`: the library's recorded origin (`metadata.origin`, the spec it was added
 * from, e.g. `npm:react@18.3.1`) with the requested version; null when no origin says which package it is
 * (`name@requested` is not a spec `add` takes: guessing a registry would index another library).
 */
export function addSpecFor(requested: string, versions: ReadonlyArray<{ metadata?: Record<string, unknown> }>): string | null {
  for (const { metadata } of versions) {
    const origin = metadata?.origin;
    if (typeof origin !== 'string' || origin.trim() === '') continue;
    // A trailing "@version" is the origin's own version; an "@" followed by a path (a scope, git@host:) is not.
    const at = origin.lastIndexOf('@');
    const tail = at > 0 ? origin.slice(at + 1) : '';
    const base = tail !== '' && !/[/:]/.test(tail) ? origin.slice(0, at) : origin.trim();
    // A repository's release tags keep their "v" (`repo.git@v1.2.0` asked for 2.0.0 is `repo.git@v2.0.0`).
    const prefix = /^v\d/.test(tail) && /^\d/.test(requested) ? 'v' : '';
    return `${base}@${prefix}${requested}`;
  }
  return null;
}

/** The asked version of a library is not among its indexed versions (details: name, requested, indexed). */
export class VersionNotIndexedError extends UserError {
  constructor(
    readonly library: string,
    readonly requested: string,
    readonly indexed: string[],
    /** A spec that would index the requested version (`docdex add`, MCP add_library), when the origin is known. */
    readonly addSpec: string | null,
  ) {
    super(`${library}@${requested} is not indexed; indexed versions: ${indexed.map(versionLabel).join(', ') || 'none'}.`, {
      code: 'version_not_indexed',
      hint: `Use one of the indexed versions (e.g. ${library}@${indexed[0] || '<version>'}), or index this one with \`docdex add ${addSpec ?? `<its package (npm:${library}@${requested}), repository URL@tag, or docs URL>`}\`.`,
      details: [{ name: library, requested, indexed }],
    });
  }
}

/**
 * The version `spec` picks among a library's versions (sorted latest first): a bare name the latest; the
 * version labelled exactly so; `latest` when no version is labelled so; else the newest in its range.
 */
export function selectVersion<T extends SourceRef & { metadata?: Record<string, unknown> }>(versions: readonly T[], spec: VersionSpec | null): T {
  const latest = versions[0];
  if (latest === undefined) throw new NotFoundError('The library has no indexed versions.');
  if (spec === null) return latest;
  const chosen = versions.find((v) => v.version === spec.text) ?? (spec.text.toLowerCase() === 'latest' ? latest : undefined) ?? versions.find((v) => versionMatches(v.version, spec));
  if (chosen) return chosen;
  throw new VersionNotIndexedError(
    latest.name,
    spec.text,
    versions.map((v) => v.version),
    addSpecFor(spec.text, versions),
  );
}

export interface ResolvedLibrary extends SourceRef {
  /** Every indexed version of the library, the latest first. */
  versions: SourceRef[];
  /** True when the name was not exact and the closest one was taken. */
  fuzzy: boolean;
}

/** A reference with the `--version` flag (REST `version`) folded in; giving two different versions is an error. */
function withVersion(text: string | LibraryRef, version: string | undefined): LibraryRef {
  const ref = typeof text === 'string' ? parseLibraryRef(text) : text;
  if (version === undefined || version.trim() === '') return ref;
  if (ref.kind === 'id') return ref;
  if (ref.version !== null && ref.version.text !== version.trim()) {
    throw new ValidationError(`Two versions were given: "${ref.version.text}" in the library reference and "${version.trim()}" as the version.`, {
      hint: 'Give the version once, e.g. --source react@18.3.1 without --version.',
    });
  }
  return { ...ref, version: versionSpec(version) };
}

async function byId(pool: pg.Pool | pg.ClientBase, id: string, version: string | undefined): Promise<ResolvedLibrary> {
  const { rows } = await pool.query<VersionRow>(`SELECT ${VERSION_COLUMNS} FROM sources WHERE id = $1`, [id]);
  const row = rows[0];
  if (!row) throw new NotFoundError(`Source ${id} not found.`, { hint: 'List sources with `docdex sources list`.' });
  if (version !== undefined && version.trim() !== '' && !versionMatches(row.version, versionSpec(version))) {
    throw new NotFoundError(`Source ${id} (${row.name}) has version "${row.version}", not "${version.trim()}".`);
  }
  return { id: row.id, name: row.name, version: row.version, versions: [{ id: row.id, name: row.name, version: row.version }], fuzzy: false };
}

/** The library's versions by exact name, else by the one clear fuzzy name. Throws NotFoundError. */
async function libraryVersions(pool: pg.Pool | pg.ClientBase, name: string): Promise<{ versions: VersionRow[]; fuzzy: boolean }> {
  const exact = await versionsNamed(pool, name);
  if (exact.length > 0) return { versions: exact, fuzzy: false };
  const closest = await closestName(pool, name);
  const versions = closest === null ? [] : await versionsNamed(pool, closest);
  if (versions.length === 0) throw new NotFoundError(`No source matches "${name}".`, { hint: 'List sources with `docdex sources list`.' });
  return { versions, fuzzy: true };
}

/**
 * The one source a library reference names (CLI `--source`, REST `source`, MCP `library_id`): by id, or a
 * name (exact, then the clear fuzzy match) and its version as selectVersion picks it (a bare name: the
 * latest). `version` is the separate version flag or parameter, if any. Throws ValidationError (bad or
 * ambiguous reference), NotFoundError (no such library) or VersionNotIndexedError.
 */
export async function resolveLibrary(pool: pg.Pool | pg.ClientBase, text: string | LibraryRef, version?: string): Promise<ResolvedLibrary> {
  const ref = withVersion(text, version);
  if (ref.kind === 'id') return byId(pool, ref.id, version);
  const { versions, fuzzy } = await libraryVersions(pool, ref.name);
  const chosen = selectVersion(versions, ref.version);
  return { id: chosen.id, name: chosen.name, version: chosen.version, versions: versions.map(({ id, name, version: v }) => ({ id, name, version: v })), fuzzy };
}

/**
 * Exactly one source, for changing or deleting it: like resolveLibrary, except that a bare name with several
 * versions is refused rather than read as the latest, so nothing is changed on a guess.
 */
export async function resolveSource(pool: pg.Pool | pg.ClientBase, text: string, version?: string): Promise<SourceRef> {
  const ref = withVersion(text, version);
  const resolved = await resolveLibrary(pool, text, version);
  if (ref.kind === 'name' && ref.version === null && resolved.versions.length > 1) {
    throw new ValidationError(`"${text.trim()}" names ${resolved.versions.length} versions of ${resolved.name}: ${resolved.versions.map((r) => versionLabel(r.version)).join(', ')}.`, {
      hint: `Pass --version, name@version (e.g. ${resolved.name}@${resolved.versions[0]!.version || '<version>'}), or the source id from \`docdex sources list\`.`,
    });
  }
  return { id: resolved.id, name: resolved.name, version: resolved.version };
}
