import picomatch from 'picomatch';
import { isUserError } from '../errors.js';
import { resolvePackage } from '../registry/index.js';
import type { Config } from '../config.js';
import type { ExtraSource } from './config-file.js';
import type { ManifestReadResult, ProjectDependency, SkippedDependency } from './dependency.js';
import { listIndexedVersions, sourceState } from '../sources/indexed.js';
import type { IndexedVersion } from '../sources/indexed.js';
import type { ProjectEcosystem } from './store.js';
import type pg from 'pg';

/**
 * What `docdex sync` would do, before it does anything: each dependency at its exact version (the lockfile's,
 * else the newest release satisfying the manifest's range), what the index holds of it, and the `docdex add`
 * spec that would index it. Planning writes nothing.
 */

/**
 * - `indexed`: a source of exactly this version holds documents; `indexing`: its source exists but holds none
 *   yet (a job is running or produced nothing): never refetched either way.
 * - `failed`: its source holds no documents and its newest job failed or was cancelled (`reason`): queued again.
 * - `missing`: no version indexed; `other_versions`: only other versions (never answered in its place).
 * - `queued`: sync queued its jobs; `unresolved`: it cannot be indexed, `reason` says why.
 * The one list, for every schema.
 */
export const LIBRARY_STATES = ['indexed', 'indexing', 'failed', 'missing', 'other_versions', 'queued', 'unresolved'] as const;
export type LibraryState = (typeof LIBRARY_STATES)[number];

/** Whether sync queues a library in this state: nothing of its version is indexed, or its last try failed. */
export function needsQueueing(state: LibraryState): boolean {
  return state === 'missing' || state === 'other_versions' || state === 'failed';
}

export interface PlannedLibrary {
  ecosystem: ProjectEcosystem;
  name: string;
  /** The exact version; null for an extra source not yet indexed (its version comes from the ref or crawl). */
  version: string | null;
  range: string | null;
  direct: boolean;
  /** The file it was read from (`.docdex.yml` for an extra source). */
  manifest: string;
  /** What `docdex add` is given to index it. */
  spec: string;
  state: LibraryState;
  other_versions: string[];
  reason: string | null;
  /** The next step for an `unresolved` library, when its error gave one (a registry's setting, a credential). */
  hint: string | null;
  source_id: string | null;
  /** What the source of exactly this version holds (0 without one): an indexed library without snippets has nothing to search. */
  document_count: number;
  snippet_count: number;
}

export interface SyncOptions {
  /** Transitive dependencies too (default: only what the project's own manifests name). */
  all?: boolean;
  /** Only names matching one of these globs (picomatch), when any are given. */
  include?: readonly string[];
  /** Never names matching one of these globs. */
  exclude?: readonly string[];
  /** Extra sources from `.docdex.yml`. */
  sources?: readonly ExtraSource[];
}

export interface SyncPlan {
  name: string;
  root: string | null;
  files: string[];
  /** Dependencies that are not registry packages, with why. */
  skipped: SkippedDependency[];
  /** What the readers left out and why (a local replacement, an include outside the project), one line each. */
  notes: string[];
  libraries: PlannedLibrary[];
  /** The specs sync queues: every library that is `missing` or has `other_versions` only. */
  to_add: string[];
}

export interface PlanInput {
  name: string;
  root: string | null;
  dependencies: ManifestReadResult;
  options: SyncOptions;
}

const RESOLVE_CONCURRENCY = 4;

/** Direct dependencies (or all), through the include and exclude globs, each ecosystem, name and version once. */
export function selectDependencies(dependencies: readonly ProjectDependency[], options: SyncOptions): ProjectDependency[] {
  const include = options.include?.length ? picomatch([...options.include], { nocase: true }) : null;
  const exclude = options.exclude?.length ? picomatch([...options.exclude], { nocase: true }) : null;
  const chosen = new Map<string, ProjectDependency>();
  for (const dep of dependencies) {
    if (!dep.direct && options.all !== true) continue;
    if ((include && !include(dep.name)) || exclude?.(dep.name)) continue;
    const key = `${dep.ecosystem}\0${dep.name}\0${dep.version ?? `range:${dep.range ?? ''}`}`;
    if (!chosen.has(key) || dep.direct) chosen.set(key, dep);
  }
  return [...chosen.values()];
}

/** Why a library cannot be indexed, and what to do about it, from a UserError; anything else is a bug. */
export function unresolvedBy(error: unknown): { reason: string; hint: string | null } {
  if (isUserError(error)) return { reason: error.message.replace(/\.$/, ''), hint: error.hint ?? null };
  throw error;
}

/** A dependency with only a range: the newest release that satisfies it, from its registry (registry/http.ts trusts it). */
async function resolveVersion(config: Config, dep: ProjectDependency): Promise<{ version: string } | { reason: string; hint: string | null }> {
  if (dep.version !== null) return { version: dep.version };
  if (dep.ecosystem === 'go') return { reason: 'go.mod names no exact version for it', hint: null };
  try {
    const range = dep.range === null || dep.range === '' || dep.range === '*' ? undefined : dep.range;
    const resolved = await resolvePackage(config, { ecosystem: dep.ecosystem, name: dep.name, ...(range === undefined ? {} : { version: range }) });
    return { version: resolved.version };
  } catch (error) {
    return unresolvedBy(error);
  }
}

/** `fn` over `items` with at most `limit` running at once; results in the items' order. */
export async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

type IndexState = Pick<PlannedLibrary, 'state' | 'other_versions' | 'source_id' | 'reason' | 'document_count' | 'snippet_count'>;

function stateOf(version: string | null, indexed: readonly IndexedVersion[]): IndexState {
  const exact = version === null ? indexed[indexed.length - 1] : indexed.find((v) => v.version === version);
  const others = indexed.filter((v) => v !== exact).map((v) => v.version);
  if (exact) {
    const state = sourceState(exact);
    return {
      state,
      other_versions: others,
      source_id: exact.source_id,
      reason: state === 'failed' ? exact.failure : null,
      document_count: exact.document_count,
      snippet_count: exact.snippet_count,
    };
  }
  return { state: others.length > 0 ? 'other_versions' : 'missing', other_versions: others, source_id: null, reason: null, document_count: 0, snippet_count: 0 };
}

function packageLibrary(dep: ProjectDependency, resolved: { version: string } | { reason: string; hint: string | null }): PlannedLibrary {
  const version = 'version' in resolved ? resolved.version : dep.version;
  const base = { ecosystem: dep.ecosystem, name: dep.name, version, range: dep.range, direct: dep.direct, manifest: dep.manifest };
  const spec = `${dep.ecosystem}:${dep.name}${version === null ? '' : `@${version}`}`;
  const none = { other_versions: [], source_id: null, document_count: 0, snippet_count: 0 };
  if ('reason' in resolved) return { ...base, spec, state: 'unresolved', reason: resolved.reason, hint: resolved.hint, ...none };
  return { ...base, spec, state: 'missing', reason: null, hint: null, ...none };
}

function extraLibrary(source: ExtraSource): PlannedLibrary {
  const ecosystem = source.spec.kind === 'git' ? 'git' : 'url';
  return {
    ecosystem,
    name: source.name,
    version: null,
    range: null,
    direct: true,
    manifest: '.docdex.yml',
    spec: source.spec.spec,
    state: 'missing',
    other_versions: [],
    reason: null,
    hint: null,
    source_id: null,
    document_count: 0,
    snippet_count: 0,
  };
}

/**
 * The plan for a project: its selected dependencies resolved to exact versions (registry errors make a
 * dependency `unresolved` with the reason, never fail the plan), its extra sources, and what the index holds
 * of each. Reads the registry for range-only dependencies and the database; writes nothing.
 */
export async function planProjectSync(pool: pg.Pool, config: Config, input: PlanInput): Promise<SyncPlan> {
  const selected = selectDependencies(input.dependencies.dependencies, input.options);
  const resolved = await mapLimited(selected, RESOLVE_CONCURRENCY, (dep) => resolveVersion(config, dep));
  const libraries = [...selected.map((dep, i) => packageLibrary(dep, resolved[i]!)), ...(input.options.sources ?? []).map(extraLibrary)];
  const indexed = await listIndexedVersions(
    pool,
    libraries.map((l) => l.name),
  );
  for (const library of libraries) {
    if (library.state === 'unresolved') continue;
    const matches = indexed.get(library.name.toLowerCase()) ?? [];
    Object.assign(library, stateOf(library.version, matches));
    if (library.version === null && library.source_id !== null) library.version = matches.find((m) => m.source_id === library.source_id)!.version;
  }
  return {
    name: input.name,
    root: input.root,
    files: input.dependencies.files,
    skipped: input.dependencies.skipped ?? [],
    notes: input.dependencies.notes ?? [],
    libraries,
    to_add: libraries.filter((l) => needsQueueing(l.state)).map((l) => l.spec),
  };
}
