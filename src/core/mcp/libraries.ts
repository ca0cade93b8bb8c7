import type pg from 'pg';
import { UserError } from '../errors.js';
import { parseLibraryRef } from '../library-ref.js';
import type { VersionSpec } from '../library-ref.js';
import { resolveLibrary, VersionNotIndexedError, versionLabel } from '../sources/resolve.js';
import type { ResolvedLibrary as ResolvedSource } from '../sources/resolve.js';
import { findLibraries, getLibrariesByName, getLibraryById } from './queries.js';
import type { LibraryRow } from './queries.js';
import { clearBestMatch } from '../sources/match.js';

/**
 * Turning what a model calls a library ("fastapi", "react@^18.2", "@scope/pkg@1.2", a UUID, "fast api") into
 * one indexed source, and deciding when a fuzzy search has one clear winner. The reference is parsed and the
 * version picked by the same code as the CLI's `--source` (library-ref.ts, sources/resolve.ts); what is said
 * to the model (notes, hints naming MCP tools) is this module's.
 */

export { clearBestMatch };

export function libraryLabel(lib: Pick<LibraryRow, 'name' | 'version'>): string {
  return lib.version ? `${lib.name} ${lib.version}` : lib.name;
}

function describeSuggestions(items: LibraryRow[]): string {
  return items.map((l) => `${libraryLabel(l)} (id ${l.id}, ${l.snippet_count} snippets)`).join('; ');
}

export interface ResolvedLibrary {
  library: LibraryRow;
  /** Said to the model when the match was not exact, or other versions exist. */
  note?: string;
}

/** The not-indexed answer for a model: the indexed versions, and how to index the one it asked for. */
function notIndexedForModel(error: VersionNotIndexedError): UserError {
  const other = error.indexed[0] === undefined ? '' : ` Or call get_content with library_id "${error.library}@${error.indexed[0]}" for an indexed version.`;
  return new UserError(error.message, {
    code: 'version_not_indexed',
    hint: `To index it, call add_library with ${error.addSpec === null ? `its package spec (npm:, pypi:, crates: or go: then ${error.library}@${error.requested}), its repository URL with @tag, or its docs URL` : `spec "${error.addSpec}"`}, then call get_content again.${other}`,
    ...(error.details ? { details: error.details } : {}),
  });
}

/** Which version of the library named exactly `name` the model gets, and what to tell it about the others. */
async function pickVersion(pool: pg.Pool, name: string, spec: VersionSpec | null): Promise<ResolvedLibrary & { source: ResolvedSource }> {
  let source: ResolvedSource;
  try {
    source = await resolveLibrary(pool, { kind: 'name', name, version: spec });
  } catch (error) {
    throw error instanceof VersionNotIndexedError ? notIndexedForModel(error) : error;
  }
  const library = await getLibraryById(pool, source.id);
  if (!library) throw new UserError(`Library ${name} was deleted meanwhile.`, { code: 'not_found', hint: 'Call search_libraries to list the indexed libraries.' });
  const others = source.versions.filter((v) => v.id !== source.id);
  if (others.length === 0) return { library, source };
  const list = others.map((o) => `${versionLabel(o.version)} (library_id "${o.name}@${o.version}")`).join(', ');
  const why = spec === null ? 'the latest version' : spec.text === source.version ? 'the version asked for' : `the newest indexed version matching "${spec.text}"`;
  return { library, source, note: `Using ${libraryLabel(library)}, ${why}. Other indexed versions: ${list}.` };
}

function noMatch(wanted: string, items: LibraryRow[], suggestions: LibraryRow[]): UserError {
  if (suggestions.length === 0) {
    return new UserError(`No library matches "${wanted}": no libraries are indexed yet.`, {
      code: 'not_found',
      hint: 'Crawl a documentation site with init_crawl first, then call get_content once the crawl has stored snippets.',
    });
  }
  const ambiguous = items.length > 1;
  return new UserError(
    ambiguous ? `"${wanted}" matches several libraries and none clearly: ${describeSuggestions(suggestions)}.` : `No library matches "${wanted}". Closest names: ${describeSuggestions(suggestions)}.`,
    {
      code: 'not_found',
      hint: 'Call get_content again with one of these names or ids as library_id, or call search_libraries to see every library.',
      details: suggestions.map((l) => ({ id: l.id, name: l.name, version: l.version, snippet_count: l.snippet_count })),
    },
  );
}

/** Resolves a library id, name or name@version (range). Throws a UserError naming the closest libraries otherwise. */
export async function resolveLibraryForModel(pool: pg.Pool, text: string): Promise<ResolvedLibrary> {
  const ref = parseLibraryRef(text);
  if (ref.kind === 'id') {
    const library = await getLibraryById(pool, ref.id);
    if (library) return { library };
    throw new UserError(`No library has id ${ref.id}.`, {
      code: 'not_found',
      hint: 'Call search_libraries to list the indexed libraries and their ids, then call get_content again.',
    });
  }

  const exact = await getLibrariesByName(pool, ref.name);
  if (exact[0]) return pickVersion(pool, exact[0].name, ref.version);

  const { items } = await findLibraries(pool, { query: ref.name, limit: 5, offset: 0 });
  const best = clearBestMatch(items, ref.name);
  if (best !== undefined) {
    const { library, note } = await pickVersion(pool, items[best]!.name, ref.version);
    const closest = `No library is named exactly "${ref.name}"; using the closest match, ${libraryLabel(library)} (id ${library.id}).`;
    return { library, note: note ? `${closest} ${note}` : closest };
  }

  const suggestions = items.length > 0 ? items : (await findLibraries(pool, { query: ref.name, limit: 5, offset: 0, threshold: 0 })).items;
  throw noMatch(ref.name, items, suggestions);
}
