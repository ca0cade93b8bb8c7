// semver's functions one by one: its index loads every module of the package, and every search reads a library ref.
import type { SemVer } from 'semver';
import coerce from 'semver/functions/coerce.js';
import parse from 'semver/functions/parse.js';
import rcompare from 'semver/functions/rcompare.js';
import satisfies from 'semver/functions/satisfies.js';
import validRange from 'semver/ranges/valid.js';
import { z } from 'zod';
import { ValidationError } from './errors.js';

/**
 * The one definition of a library reference, as a person or a model names a library everywhere (CLI
 * `--source`, REST `source`, MCP `library_id`): a source id (UUID), `name` (its latest version), or
 * `name@version` where the version is an exact label (`18.3.1`, `main`, `3.12`, `abc1234`) or an npm-style
 * range (`18` for the newest 18.x, `^18.2`, `~18.2.1`). Scoped npm names keep their leading `@`
 * (`@scope/pkg@1.2`). It sits at the root of core because the sources, search and MCP folders all read it.
 */

export const MAX_LIBRARY_NAME_CHARS = 200;
export const MAX_LIBRARY_VERSION_CHARS = 100;

export interface VersionSpec {
  /** The version as typed, matched exactly first. */
  text: string;
  /** The semver range it also stands for (`>=18.0.0 <19.0.0-0` for `18`), or null for a label like `main`. */
  range: string | null;
}

export type LibraryRef = { kind: 'id'; id: string } | { kind: 'name'; name: string; version: VersionSpec | null };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// C0/C1 control characters, and line or paragraph separators: no library name or version has them.
const CONTROL = /[\p{Cc}\u2028\u2029]/u;

/** A version as asked for: exact text, plus the range it denotes when semver reads it as one. */
export function versionSpec(text: string): VersionSpec {
  const version = text.trim();
  if (version.length === 0) throw new ValidationError('The version after "@" is empty.', { hint: 'Write name@version, e.g. react@18.3.1 or react@^18.2, or just the name for its latest version.' });
  if (version.length > MAX_LIBRARY_VERSION_CHARS) throw new ValidationError(`A version is at most ${MAX_LIBRARY_VERSION_CHARS} characters, got ${version.length}.`);
  if (CONTROL.test(version)) throw new ValidationError('A version must not contain control characters or line breaks.');
  let range: string | null = null;
  try {
    range = validRange(version);
  } catch {
    // semver refuses some inputs by throwing (its own length limits): such a version is a plain label.
  }
  return { text: version, range };
}

/** Splits `name@version` at the last `@` that is not the first character (a scoped npm name starts with `@`). */
function splitAtVersion(text: string): { name: string; version: string | null } {
  const at = text.lastIndexOf('@');
  if (at <= 0) return { name: text, version: null };
  return { name: text.slice(0, at).trim(), version: text.slice(at + 1) };
}

/**
 * Parses a library reference. Throws a ValidationError, with a hint, for anything that cannot name a
 * library (empty, too long, control characters, an empty name or version around `@`); never anything else.
 */
export function parseLibraryRef(text: string): LibraryRef {
  if (typeof text !== 'string') throw new ValidationError('A library reference must be a string.');
  const ref = text.trim();
  if (ref.length === 0) throw new ValidationError('The library name or id is empty.', { hint: 'Write a name (react), name@version (react@18.3.1, react@^18.2) or a source id.' });
  if (UUID.test(ref)) return { kind: 'id', id: ref.toLowerCase() };
  if (CONTROL.test(ref)) throw new ValidationError('A library reference must not contain control characters or line breaks.');
  const { name, version } = splitAtVersion(ref);
  if (name.length === 0 || name === '@') throw new ValidationError(`"${ref}" has no library name.`, { hint: 'Write name@version, e.g. react@18.3.1.' });
  if (name.length > MAX_LIBRARY_NAME_CHARS) throw new ValidationError(`A library name is at most ${MAX_LIBRARY_NAME_CHARS} characters, got ${name.length}.`);
  return { kind: 'name', name, version: version === null ? null : versionSpec(version) };
}

/** The reference written back as text: the id, `name`, or `name@version`. */
export function formatLibraryRef(ref: LibraryRef): string {
  if (ref.kind === 'id') return ref.id;
  return ref.version ? `${ref.name}@${ref.version.text}` : ref.name;
}

/** A library reference in a zod schema (REST bodies, MCP arguments): the text, checked and parsed. */
export const libraryRefSchema = z
  .string()
  .max(MAX_LIBRARY_NAME_CHARS + MAX_LIBRARY_VERSION_CHARS + 1)
  .transform((text, context) => {
    try {
      return parseLibraryRef(text);
    } catch (error) {
      context.addIssue({ code: 'custom', message: error instanceof Error ? error.message : String(error) });
      return z.NEVER;
    }
  })
  .describe('A library: its source id, its name (the latest version), or name@version (exact, 18 for the newest 18.x, ^18.2, ~18.2.1).');

// A plain release number, `v` allowed: "3.12" reads as 3.12.0 and "18" as 18.0.0 without guessing. Labels like
// "abc1234", "2.0.0rc1" or "main" are not read as numbers (semver.coerce would turn "abc1234" into 1234.0.0).
const PLAIN_RELEASE = /^v?\d{1,15}(\.\d{1,15}){0,2}$/;

/** The semver a version label stands for, or null when it is no version number (`main`, `abc1234`, ''). */
export function semverOf(version: string): SemVer | null {
  const text = version.trim();
  if (text.length === 0 || text.length > MAX_LIBRARY_VERSION_CHARS) return null;
  const exact = parse(text);
  if (exact) return exact;
  return PLAIN_RELEASE.test(text) ? coerce(text) : null;
}

/** Whether an indexed version is what `spec` asks for: the same label, or a version number in its range. */
export function versionMatches(version: string, spec: VersionSpec): boolean {
  if (version === spec.text) return true;
  if (spec.range === null) return false;
  const parsed = semverOf(version);
  return parsed !== null && satisfies(parsed, spec.range);
}

export interface Versioned {
  version: string;
  last_crawled_at?: Date | string | null;
  created_at?: Date | string | null;
}

function timeOf(value: Date | string | null | undefined): number {
  if (value === null || value === undefined) return Number.NEGATIVE_INFINITY;
  const time = new Date(value).getTime();
  return Number.isNaN(time) ? Number.NEGATIVE_INFINITY : time;
}

/**
 * Comparator for `Array.sort`: the latest version first. Version numbers by semver precedence, newest first,
 * before labels that are not version numbers (`main`, a commit, unversioned); then the most recently crawled,
 * then created; then the label, so the order is total.
 */
export function latestVersionFirst(a: Versioned, b: Versioned): number {
  const va = semverOf(a.version);
  const vb = semverOf(b.version);
  if (va && vb) {
    const order = rcompare(va, vb);
    if (order !== 0) return order;
  } else if (va || vb) {
    return va ? -1 : 1;
  }
  const crawled = timeOf(b.last_crawled_at) - timeOf(a.last_crawled_at);
  if (crawled !== 0 && !Number.isNaN(crawled)) return crawled > 0 ? 1 : -1;
  const created = timeOf(b.created_at) - timeOf(a.created_at);
  if (created !== 0 && !Number.isNaN(created)) return created > 0 ? 1 : -1;
  return a.version < b.version ? 1 : a.version > b.version ? -1 : 0;
}
