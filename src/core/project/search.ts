import type pg from 'pg';
import { searchSnippetsShared } from '../search/shared.js';
import type { SearchResponse } from '../search/search.js';
import { libraryAtVersion, projectLibraries } from './libraries.js';
import type { ProjectLibrary, ProjectLibraryState } from './libraries.js';
import type { ScreeningMode } from '../search/screening.js';
import type { ProjectRecord } from './store.js';

/**
 * Searching a project: the snippets of its libraries at exactly the versions it records, ranked together. A
 * library whose version is not indexed is named in the answer (`not_indexed`), never answered from another
 * indexed version of the same library.
 */

export interface ProjectSearchOptions {
  /** The project's id, name or root directory (an absolute path inside a project also finds it). */
  project: string;
  query: string;
  limit?: number;
  offset?: number;
  language?: string;
  /** DOCDEX_SCREENING (search/screening.ts); default `flag`. */
  screening?: ScreeningMode;
}

/** A library the search could not cover: its exact version has no documents in the index. */
export interface NotIndexedLibrary {
  name: string;
  version: string;
  spec: string;
  state: Exclude<ProjectLibraryState, 'indexed'>;
  reason?: string;
  other_versions: string[];
}

export interface ProjectSearchResponse extends SearchResponse {
  project: ProjectRecord;
  /** How many of the project's libraries were searched (indexed at their version). */
  searched: number;
  not_indexed: NotIndexedLibrary[];
}

/** `name@version (state)`, with the reason for an unresolved or failed one: how every surface names it. */
export function describeNotIndexed(library: NotIndexedLibrary): string {
  const state =
    library.state === 'unresolved'
      ? `unresolved: ${library.reason ?? 'nothing to index'}`
      : library.state === 'failed'
        ? `failed: ${library.reason ?? 'its indexing job did not finish'}`
        : library.state;
  return `${libraryAtVersion(library)} (${state})`;
}

function notIndexed(library: ProjectLibrary): NotIndexedLibrary | null {
  if (library.state === 'indexed') return null;
  return {
    name: library.name,
    version: library.version,
    spec: library.spec,
    state: library.state,
    ...(library.reason === undefined ? {} : { reason: library.reason }),
    other_versions: library.other_versions,
  };
}

/**
 * Searches the project's libraries at their recorded versions (searchSnippets' ranking, shared with identical
 * searches in flight). `signal`: the caller went away; a search still waiting for its turn is then not run.
 * Throws ProjectNotFoundError for an unknown project and ValidationError for a bad query or paging.
 */
export async function searchProject(pool: pg.Pool, options: ProjectSearchOptions, signal?: AbortSignal): Promise<ProjectSearchResponse> {
  const { project, libraries } = await projectLibraries(pool, options.project);
  const sourceIds = libraries.flatMap((l) => (l.state === 'indexed' && l.source_id !== null ? [l.source_id] : []));
  const response = await searchSnippetsShared(
    pool,
    {
      query: options.query,
      sourceIds,
      ...(options.limit === undefined ? {} : { limit: options.limit }),
      ...(options.offset === undefined ? {} : { offset: options.offset }),
      ...(options.language === undefined ? {} : { language: options.language }),
      ...(options.screening === undefined ? {} : { screening: options.screening }),
    },
    signal,
  );
  return {
    ...response,
    project,
    searched: sourceIds.length,
    not_indexed: libraries.map(notIndexed).filter((l): l is NotIndexedLibrary => l !== null),
  };
}
