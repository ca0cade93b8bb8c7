import type pg from 'pg';
import { NEWEST_JOB_FAILURE_SQL } from '../sources/indexed.js';

/**
 * The project records `docdex sync` keeps (migration 027): a project (its root directory, or only a name) and
 * the libraries its manifests name at exact versions. Whether a library is indexed is never stored: it is
 * read from `sources` (the library's name or an alias, and the exact version) on every read.
 */

export type ProjectEcosystem = 'npm' | 'pypi' | 'crates' | 'go' | 'url' | 'git';

export interface ProjectRecord {
  id: string;
  name: string;
  /** The absolute path of the project directory, when it was synced from disk. */
  root: string | null;
  created_at: Date;
  synced_at: Date | null;
}

/** One library of a project at one exact version, as sync records it. */
export interface ProjectLibraryEntry {
  ecosystem: ProjectEcosystem;
  /** The library's name in the index: the package name, or the name `.docdex.yml` gives an extra source. */
  name: string;
  /** The exact version; '' for an unversioned extra source. */
  version: string;
  /** What `docdex add` is given to index it (`npm:semver@7.6.3`, a git URL@ref, a docs URL). */
  spec: string;
  direct: boolean;
  /** Why it could not be queued, when it could not. */
  unresolved: string | null;
}

/** A recorded library with what the index holds of it now. */
export interface ProjectLibraryRow extends ProjectLibraryEntry {
  in_use: boolean;
  /** The indexed source of exactly this name and version, if any. */
  source_id: string | null;
  document_count: number;
  snippet_count: number;
  /** Why the source has no documents, when its newest job failed or was cancelled (NEWEST_JOB_FAILURE_SQL). */
  failure: string | null;
  /** Other indexed versions of the same library (never answered in its place). */
  other_versions: string[];
}

const PROJECT_COLUMNS = 'id, name, root, created_at, synced_at';

/** Creates the project, or returns the one with this root (or, without a root, this name). */
export async function upsertProject(client: pg.Pool | pg.ClientBase, project: { name: string; root: string | null }): Promise<ProjectRecord> {
  const conflict = project.root === null ? '(name)' : '(root)';
  const { rows } = await client.query<ProjectRecord>(
    `INSERT INTO projects (name, root) VALUES ($1, $2)
     ON CONFLICT ${conflict} DO UPDATE SET root = EXCLUDED.root
     RETURNING ${PROJECT_COLUMNS}`,
    [project.name, project.root],
  );
  return rows[0]!;
}

/** The project with this id, root path or name (tried in that order), or null. */
export async function findProject(pool: pg.Pool | pg.ClientBase, ref: string): Promise<ProjectRecord | null> {
  const { rows } = await pool.query<ProjectRecord>(
    `SELECT ${PROJECT_COLUMNS} FROM projects
      WHERE id::text = $1 OR root = $1 OR name = $1
      ORDER BY id::text = $1 DESC, root = $1 DESC NULLS LAST
      LIMIT 1`,
    [ref],
  );
  return rows[0] ?? null;
}

export async function listProjects(pool: pg.Pool | pg.ClientBase): Promise<ProjectRecord[]> {
  const { rows } = await pool.query<ProjectRecord>(`SELECT ${PROJECT_COLUMNS} FROM projects ORDER BY name`);
  return rows;
}

/**
 * Records what the project's manifests name now: these entries are in use (inserted or updated), every
 * other recorded version is kept but marked unused (for `docdex prune`), and the sync time is set. Run it in
 * the caller's transaction so a sync's record is all or nothing.
 */
export async function recordProjectLibraries(client: pg.ClientBase, projectId: string, entries: readonly ProjectLibraryEntry[]): Promise<void> {
  await client.query(
    `INSERT INTO project_libraries (project_id, ecosystem, name, version, spec, direct, unresolved, in_use)
     SELECT $1, e.ecosystem, e.name, e.version, e.spec, e.direct, e.unresolved, true
       FROM jsonb_to_recordset($2::jsonb) AS e(ecosystem text, name text, version text, spec text, direct boolean, unresolved text)
     ON CONFLICT (project_id, ecosystem, name, version) DO UPDATE
        SET spec = EXCLUDED.spec, direct = EXCLUDED.direct, unresolved = EXCLUDED.unresolved, in_use = true, updated_at = now()`,
    [projectId, JSON.stringify(entries)],
  );
  await client.query(
    `UPDATE project_libraries pl SET in_use = false, updated_at = now()
      WHERE pl.project_id = $1 AND pl.in_use
        AND NOT EXISTS (SELECT 1 FROM jsonb_to_recordset($2::jsonb) AS e(ecosystem text, name text, version text)
                         WHERE e.ecosystem = pl.ecosystem AND e.name = pl.name AND e.version = pl.version)`,
    [projectId, JSON.stringify(entries)],
  );
  await client.query('UPDATE projects SET synced_at = now() WHERE id = $1', [projectId]);
}

/** The project's recorded libraries (in use only, unless asked) with what the index holds of each. */
export async function listProjectLibraries(pool: pg.Pool | pg.ClientBase, projectId: string, options: { includeUnused?: boolean } = {}): Promise<ProjectLibraryRow[]> {
  const { rows } = await pool.query<ProjectLibraryRow>(
    `SELECT pl.ecosystem, pl.name, pl.version, pl.spec, pl.direct, pl.unresolved, pl.in_use,
            s.id AS source_id, coalesce(s.document_count, 0) AS document_count, coalesce(s.snippet_count, 0) AS snippet_count,
            ${NEWEST_JOB_FAILURE_SQL} AS failure,
            coalesce((SELECT array_agg(o.version ORDER BY o.version)
                        FROM sources o
                       WHERE (lower(o.name) = lower(pl.name) OR lower(pl.name) = ANY (SELECT lower(a) FROM unnest(o.aliases) a))
                         AND o.version <> pl.version), '{}') AS other_versions
       FROM project_libraries pl
       LEFT JOIN LATERAL (
            SELECT s.id, s.document_count, s.snippet_count FROM sources s
             WHERE (lower(s.name) = lower(pl.name) OR lower(pl.name) = ANY (SELECT lower(a) FROM unnest(s.aliases) a))
               AND s.version = pl.version
             ORDER BY lower(s.name) = lower(pl.name) DESC
             LIMIT 1) s ON true
      WHERE pl.project_id = $1 AND (pl.in_use OR $2)
      ORDER BY pl.ecosystem, lower(pl.name), pl.version`,
    [projectId, options.includeUnused === true],
  );
  return rows;
}

/** Deletes the libraries the project no longer uses; returns how many. The indexed sources stay. */
export async function pruneProjectLibraries(client: pg.Pool | pg.ClientBase, projectId: string): Promise<number> {
  const { rowCount } = await client.query('DELETE FROM project_libraries WHERE project_id = $1 AND NOT in_use', [projectId]);
  return rowCount ?? 0;
}
