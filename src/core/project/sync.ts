import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.js';
import { withTransaction } from '../db/transaction.js';
import { UserError } from '../errors.js';
import { addLibraries } from '../library/add.js';
import type { AddedJob, AddOutcome } from '../library/outcome.js';
import type { QueueDb } from '../upload/queue.js';
import { readProjectConfig } from './config-file.js';
import { readProjectDependencies } from './manifests/index.js';
import { mapLimited, needsQueueing, planProjectSync, unresolvedBy } from './sync-plan.js';
import type { PlanInput, PlannedLibrary, SyncOptions, SyncPlan } from './sync-plan.js';
import { findProject, pruneProjectLibraries, recordProjectLibraries, upsertProject } from './store.js';
import type { ProjectLibraryEntry, ProjectRecord } from './store.js';

/**
 * `docdex sync [DIR]`, MCP `sync_project` and REST `POST /api/projects/sync`: a project's manifests read,
 * planned (`sync-plan.ts`), each missing library queued through `addLibraries` (the one way anything is
 * indexed), and the project recorded with its libraries in one transaction.
 *
 * Everything a project's files name (packages, `.docdex.yml` sources) is third-party text, whoever runs sync: a
 * cloned project's files are someone else's (net/provenance.ts). So sync takes no permission from its caller,
 * and what it queues is held to the remote rules.
 */

export type { PlannedLibrary, SyncOptions, SyncPlan } from './sync-plan.js';

/** Libraries resolved and queued at once: each asks its registry and lists its repository's tags. */
const QUEUE_CONCURRENCY = 4;

export interface SyncResult extends SyncPlan {
  /** Null for a dry run: nothing was queued or recorded. */
  project_id: string | null;
  dry_run: boolean;
  /** Each queued library's add outcome (what `docdex add --wait` follows). */
  added: AddOutcome[];
  /** Every job queued, with the library it indexes. */
  jobs: Array<AddedJob & { library: string }>;
}

export interface SyncRequest {
  /** The project directory (absolute, or relative to the process's working directory). */
  dir: string;
  /** Settings given by the caller; `.docdex.yml`'s are added to them. */
  options?: SyncOptions;
  dryRun?: boolean;
}

/** The project directory, real and absolute; anything else is a clear error before a file is read. */
export async function resolveProjectRoot(dir: string): Promise<string> {
  if (typeof dir !== 'string' || dir.length === 0 || dir.length > 4096 || dir.includes('\0')) throw new UserError('The project directory is not a valid path.', { code: 'validation_error' });
  const root = await realpath(path.resolve(dir)).catch(() => null);
  if (root === null || !(await stat(root)).isDirectory()) {
    throw new UserError(`${dir} is not a directory.`, { code: 'not_found', hint: 'Give the project directory: docdex sync [DIR].' });
  }
  return root;
}

/** The manifests and `.docdex.yml` of a project directory, merged with the caller's settings. */
export async function readProjectForSync(root: string, options: SyncOptions = {}): Promise<PlanInput> {
  const file = await readProjectConfig(root);
  const dependencies = await readProjectDependencies(root);
  return {
    name: file.name ?? path.basename(root),
    root,
    dependencies,
    options: {
      all: options.all === true || file.all === true,
      include: [...file.include, ...(options.include ?? [])],
      exclude: [...file.exclude, ...(options.exclude ?? [])],
      sources: [...file.sources, ...(options.sources ?? [])],
    },
  };
}

function addInput(library: PlannedLibrary): { specs: string[]; name?: string } {
  // An extra source is named by .docdex.yml; a package names itself.
  return library.ecosystem === 'url' || library.ecosystem === 'git' ? { specs: [library.spec], name: library.name } : { specs: [library.spec] };
}

/** Queues one library; its failure (no repository, docs or README; a registry refusing) makes it unresolved. */
async function queueLibrary(db: QueueDb, config: Config, library: PlannedLibrary): Promise<AddOutcome | null> {
  try {
    const [outcome] = await addLibraries(db, config, addInput(library), 'third_party');
    if (outcome?.status === 'indexed') {
      // Indexed under another spelling or alias than the plan looked for: nothing to fetch.
      Object.assign(library, {
        state: 'indexed',
        reason: null,
        source_id: outcome.source_id,
        document_count: outcome.document_count,
        snippet_count: outcome.snippet_count,
        version: library.version ?? outcome.version,
      });
      return null;
    }
    if (outcome?.status !== 'queued') return null;
    library.state = 'queued';
    library.reason = null;
    library.version ??= outcome.version;
    return outcome;
  } catch (error) {
    Object.assign(library, { state: 'unresolved', ...unresolvedBy(error) });
    return null;
  }
}

function entryOf(library: PlannedLibrary): ProjectLibraryEntry {
  return {
    ecosystem: library.ecosystem,
    name: library.name,
    version: library.version ?? '',
    spec: library.spec,
    direct: library.direct,
    unresolved: library.state === 'unresolved' ? library.reason : null,
  };
}

/** Records the project and what it uses now, all or nothing; versions no longer used are kept, marked unused. */
async function recordProject(db: QueueDb, plan: SyncPlan): Promise<ProjectRecord> {
  return withTransaction(db.pool, async (client) => {
    // Two directories may share a base name: the second is told apart by its path.
    const named = await findProject(client, plan.name);
    const name = named !== null && named.root !== plan.root ? `${plan.name} (${plan.root ?? ''})`.slice(0, 200) : plan.name;
    const project = await upsertProject(client, { name, root: plan.root });
    const entries = new Map(plan.libraries.map((l) => [`${l.ecosystem}\0${l.name}\0${l.version ?? ''}`, entryOf(l)]));
    await recordProjectLibraries(client, project.id, [...entries.values()]);
    return project;
  });
}

/**
 * Runs a plan: each library that is missing (or only indexed at other versions, or whose last job failed) is
 * queued through `addLibraries`, each on its own (a few at a time) so one library's failure is only its own; then
 * the project is recorded.
 * Already-indexed versions are never queued again.
 */
export async function syncProject(db: QueueDb, config: Config, plan: SyncPlan): Promise<SyncResult> {
  const wanted = plan.libraries.filter((l) => needsQueueing(l.state));
  const outcomes = await mapLimited(wanted, QUEUE_CONCURRENCY, (library) => queueLibrary(db, config, library));
  const added = outcomes.filter((o): o is AddOutcome => o !== null);
  const project = await recordProject(db, plan);
  const jobs = added.flatMap((o) => (o.status === 'queued' ? o.jobs.map((job) => ({ ...job, library: o.version ? `${o.name}@${o.version}` : o.name })) : []));
  return { ...plan, project_id: project.id, dry_run: false, added, jobs };
}

/** The one call behind `docdex sync [DIR]`: read, plan, and unless it is a dry run, queue and record. */
export async function syncProjectDirectory(db: QueueDb, config: Config, request: SyncRequest): Promise<SyncResult> {
  const root = await resolveProjectRoot(request.dir);
  const input = await readProjectForSync(root, request.options);
  const plan = await planProjectSync(db.pool, config, input);
  if (request.dryRun === true) return { ...plan, project_id: null, dry_run: true, added: [], jobs: [] };
  return syncProject(db, config, plan);
}

/**
 * Syncs a project already recorded (by id, root or name) from its recorded root: what a remote client may
 * ask, since the server then reads only a directory the local CLI synced before, never one the client names.
 */
export async function syncRecordedProject(db: QueueDb, config: Config, ref: string, request: Omit<SyncRequest, 'dir'>): Promise<SyncResult> {
  const project = await findProject(db.pool, ref);
  if (project === null) throw new UserError(`No project ${JSON.stringify(ref.slice(0, 200))} is recorded.`, { code: 'project_not_found' });
  if (project.root === null) throw new UserError(`Project ${project.name} has no directory to read.`, { code: 'project_not_found', hint: 'Run `docdex sync` in its directory.' });
  return syncProjectDirectory(db, config, { ...request, dir: project.root });
}

/** `docdex prune`: forgets the libraries a project no longer uses (their indexed sources stay). */
export async function pruneProject(db: QueueDb, ref: { dir?: string; name?: string }): Promise<{ project: ProjectRecord; pruned: number }> {
  const key = ref.name ?? (await resolveProjectRoot(ref.dir ?? '.'));
  const project = await findProject(db.pool, key);
  if (project === null) throw new UserError(`No project ${JSON.stringify(key.slice(0, 200))} is recorded.`, { code: 'project_not_found' });
  return { project, pruned: await pruneProjectLibraries(db.pool, project.id) };
}
