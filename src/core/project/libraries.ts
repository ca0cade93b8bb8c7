import path from 'node:path';
import type pg from 'pg';
import { UserError, ValidationError } from '../errors.js';
import { sourceState } from '../sources/indexed.js';
import { findProject, listProjectLibraries, listProjects } from './store.js';
import type { ProjectEcosystem, ProjectLibraryRow, ProjectRecord } from './store.js';

/**
 * A project's libraries as the asking surfaces (MCP, CLI, REST) show them: each recorded library at its exact
 * version with one state read from the index now. Only a source of exactly that version counts as the library;
 * other indexed versions are listed, never used in its place.
 */

/**
 * `indexed`: a source of exactly this version has documents. `indexing`: the source exists but has no documents
 * yet (its job is queued or running, or found nothing). `failed`: the source has no documents and its newest job
 * failed or was cancelled (`reason` says why; sync queues it again). `missing`: nothing of this version is
 * indexed. `unresolved`: sync could not find what to index (`reason` says why). The one list, for every schema.
 */
export const PROJECT_LIBRARY_STATES = ['indexed', 'indexing', 'failed', 'missing', 'unresolved'] as const;
export type ProjectLibraryState = (typeof PROJECT_LIBRARY_STATES)[number];

export interface ProjectLibrary {
  ecosystem: ProjectEcosystem;
  name: string;
  version: string;
  spec: string;
  direct: boolean;
  state: ProjectLibraryState;
  /** Why sync could not resolve it (`unresolved`), or why its indexing job did not finish (`failed`). */
  reason?: string;
  /** The source of exactly this version, when one exists (`indexed`, `indexing` or `failed`). */
  source_id: string | null;
  snippet_count: number;
  /** Other indexed versions of the same library: never answered in its place. */
  other_versions: string[];
}

export interface ProjectLibraries {
  project: ProjectRecord;
  libraries: ProjectLibrary[];
}

/** A project reference: longer than any root the schema accepts is not one. */
export const MAX_PROJECT_REF_CHARS = 4096;
// Known projects are listed in a not-found error only when there are this few: a long list helps nobody.
const LIST_KNOWN_UP_TO = 10;

/** No project matches the reference; `known` lists the recorded ones when there are few. */
export class ProjectNotFoundError extends UserError {
  constructor(
    readonly ref: string,
    readonly known: ProjectRecord[],
  ) {
    const list = known.map(describeProject).join(', ');
    super(`No project is recorded for ${JSON.stringify(ref)}.${known.length > 0 ? ` Known projects: ${list}.` : ' No project has been synced yet.'}`, {
      code: 'project_not_found',
      details: known.map((p) => ({ id: p.id, name: p.name, root: p.root })),
    });
  }
}

export function describeProject(project: Pick<ProjectRecord, 'name' | 'root'>): string {
  return project.root === null || project.root === project.name ? project.name : `${project.name} (${project.root})`;
}

/** Projects to name in a not-found error: all of them when there are few, none otherwise. */
export async function fewKnownProjects(pool: pg.Pool | pg.ClientBase): Promise<ProjectRecord[]> {
  const all = await listProjects(pool);
  return all.length <= LIST_KNOWN_UP_TO ? all : [];
}

function checkProjectRef(ref: string): string {
  const text = ref.trim();
  if (text === '' || text.length > MAX_PROJECT_REF_CHARS || text.includes('\0')) {
    throw new ValidationError(`project must be a project's name, id or root directory (1 to ${MAX_PROJECT_REF_CHARS} characters), got ${JSON.stringify(ref.slice(0, 80))}.`);
  }
  return text;
}

/** The path and each of its ancestors, nearest first. */
function selfAndAncestors(dir: string): string[] {
  const out: string[] = [];
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    out.push(at);
    if (path.dirname(at) === at) return out;
  }
}

/** The project whose root is this directory or the nearest directory above it (a subfolder of a project is in it). */
async function findProjectContaining(pool: pg.Pool | pg.ClientBase, dir: string): Promise<ProjectRecord | null> {
  const { rows } = await pool.query<ProjectRecord>(`SELECT id, name, root, created_at, synced_at FROM projects WHERE root = ANY($1::text[]) ORDER BY length(root) DESC LIMIT 1`, [
    selfAndAncestors(dir),
  ]);
  return rows[0] ?? null;
}

/**
 * The project a reference names: its id, name or root; an absolute path also finds the project whose root
 * contains it. Throws ProjectNotFoundError (listing the known projects when there are few).
 */
export async function resolveProject(pool: pg.Pool | pg.ClientBase, ref: string): Promise<ProjectRecord> {
  const text = checkProjectRef(ref);
  const found = (await findProject(pool, text)) ?? (path.isAbsolute(text) ? await findProjectContaining(pool, text) : null);
  if (found) return found;
  throw new ProjectNotFoundError(text, await fewKnownProjects(pool));
}

function stateOf(row: ProjectLibraryRow): ProjectLibraryState {
  if (row.source_id !== null) return sourceState(row);
  return row.unresolved !== null ? 'unresolved' : 'missing';
}

function toProjectLibrary(row: ProjectLibraryRow): ProjectLibrary {
  const state = stateOf(row);
  return {
    ecosystem: row.ecosystem,
    name: row.name,
    version: row.version,
    spec: row.spec,
    direct: row.direct,
    state,
    ...(state === 'unresolved' && row.unresolved !== null ? { reason: row.unresolved } : {}),
    ...(state === 'failed' && row.failure !== null ? { reason: row.failure } : {}),
    source_id: row.source_id,
    snippet_count: Number(row.snippet_count),
    other_versions: row.other_versions,
  };
}

/** The project (by id, name or root; see resolveProject) and its libraries in use, each with its state now. */
export async function projectLibraries(pool: pg.Pool | pg.ClientBase, projectRef: string): Promise<ProjectLibraries> {
  const project = await resolveProject(pool, projectRef);
  const rows = await listProjectLibraries(pool, project.id);
  return { project, libraries: rows.map(toProjectLibrary) };
}

/** `name@version`, or the name alone for an unversioned source. */
export function libraryAtVersion(library: Pick<ProjectLibrary, 'name' | 'version'>): string {
  return library.version === '' ? library.name : `${library.name}@${library.version}`;
}
