import type pg from 'pg';
import { UserError } from '../errors.js';
import { findLibraries, getLibrariesByName, getLibraryById } from './queries.js';
import type { LibraryRow } from './queries.js';
import { clearBestMatch } from '../sources/match.js';

/**
 * Turning what a model calls a library ("fastapi", "FastAPI@0.110", a UUID, "fast api") into one indexed
 * source, and deciding when a fuzzy search has one clear winner.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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

/** Resolves a library name, `name@version` or id. Throws a UserError naming the closest libraries otherwise. */
export async function resolveLibrary(pool: pg.Pool, ref: string): Promise<ResolvedLibrary> {
  const wanted = ref.trim();
  if (UUID.test(wanted)) {
    const library = await getLibraryById(pool, wanted);
    if (library) return { library };
    throw new UserError(`No library has id ${wanted}.`, {
      code: 'not_found',
      hint: 'Call search_libraries to list the indexed libraries and their ids, then call get_content again.',
    });
  }

  const at = /^(.+?)@([^@]+)$/.exec(wanted);
  if (at) {
    const [match] = await getLibrariesByName(pool, at[1]!.trim(), at[2]!.trim());
    if (match) return { library: match };
  }

  const exact = await getLibrariesByName(pool, wanted);
  if (exact[0]) {
    const others = exact.slice(1);
    return {
      library: exact[0],
      ...(others.length > 0
        ? {
            note: `Using ${libraryLabel(exact[0])}, the most recently crawled version. Other versions: ${others.map((o) => `${o.version || '(unversioned)'} (library_id "${o.name}@${o.version}" or ${o.id})`).join(', ')}.`,
          }
        : {}),
    };
  }

  const { items } = await findLibraries(pool, { query: wanted, limit: 5, offset: 0 });
  const best = clearBestMatch(items, wanted);
  if (best !== undefined) {
    const library = items[best]!;
    return { library, note: `No library is named exactly "${wanted}"; using the closest match, ${libraryLabel(library)} (id ${library.id}).` };
  }

  const suggestions = items.length > 0 ? items : (await findLibraries(pool, { query: wanted, limit: 5, offset: 0, threshold: 0 })).items;
  if (suggestions.length === 0) {
    throw new UserError(`No library matches "${wanted}": no libraries are indexed yet.`, {
      code: 'not_found',
      hint: 'Crawl a documentation site with init_crawl first, then call get_content once the crawl has stored snippets.',
    });
  }
  const ambiguous = items.length > 1;
  throw new UserError(
    ambiguous ? `"${wanted}" matches several libraries and none clearly: ${describeSuggestions(suggestions)}.` : `No library matches "${wanted}". Closest names: ${describeSuggestions(suggestions)}.`,
    {
      code: 'not_found',
      hint: 'Call get_content again with one of these names or ids as library_id, or call search_libraries to see every library.',
      details: suggestions.map((l) => ({ id: l.id, name: l.name, version: l.version, snippet_count: l.snippet_count })),
    },
  );
}
