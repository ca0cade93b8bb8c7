import type { Readable } from 'node:stream';
import type pg from 'pg';
import { ValidationError } from '../errors.js';
import { indexUpkeepStage } from '../pipeline/index-upkeep.js';
import { libraryName, libraryVersion } from './format.js';
import { checkConflicts, installLibrary } from './install.js';
import type { InstallTarget, InstalledLibrary } from './install.js';
import { readPack } from './reader.js';
import { createPackTempDir } from './temp-dir.js';

const INSTALL_WRITERS = 2;

export interface ImportOptions {
  /** Replace an installed name@version whose content differs. */
  replace?: boolean;
  /** Install the pack's one library under this `name@version` (or `name` for unversioned). */
  as?: string;
  /** DOCDEX_HOME: the pack is unpacked and verified under its tmp folder. */
  home: string;
  /** The most bytes the pack may unpack to (DOCDEX_PACK_MAX_MB). */
  maxBytes: number;
}

export interface ImportSummary {
  libraries: InstalledLibrary[];
}

/** `name@version` for --as: the last @ after the first character separates them (scoped names keep theirs). */
export function parseInstallTarget(text: string): InstallTarget {
  const at = text.lastIndexOf('@');
  const [name, version] = at > 0 ? [text.slice(0, at), text.slice(at + 1)] : [text, ''];
  const checked = { name: libraryName.safeParse(name), version: libraryVersion.safeParse(version) };
  if (!checked.name.success || !checked.version.success) {
    throw new ValidationError(`--as must be name@version (or a name), got ${JSON.stringify(text.slice(0, 300))}.`, { hint: 'For example --as acme-docs@2.1.' });
  }
  return { name: checked.name.data, version: checked.version.data };
}

/** An identical version already installed: its own counts (code snippets, as a source counts them), nothing written. */
async function unchangedLibrary(pool: pg.Pool, target: InstallTarget, sourceId: string, documents: number): Promise<InstalledLibrary> {
  const { rows } = await pool.query<{ snippet_count: number }>('SELECT snippet_count FROM sources WHERE id = $1', [sourceId]);
  return { ...target, status: 'unchanged', sourceId, documents, snippets: rows[0]?.snippet_count ?? 0 };
}

/**
 * Each library installed by one of INSTALL_WRITERS connections at a time: PostgreSQL computes every row's search
 * vectors on the writing connection's core, so two libraries install in about the time of one. Results keep
 * the pack's order; the first failure is thrown once the installs in flight have ended.
 */
async function installAll<T, R>(items: readonly T[], install: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const writer = async () => {
    while (failure === undefined && next < items.length) {
      const index = next++;
      try {
        results[index] = await install(items[index]!);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(INSTALL_WRITERS, items.length) }, writer));
  if (failure) throw failure.error;
  return results;
}

/**
 * Imports an index pack (docs/pack-format.md) from `input`: the whole pack is unpacked to a private folder
 * under DOCDEX_HOME/tmp (temp-dir.ts: the folders of killed imports are removed first) and verified (manifest,
 * every SHA-256, every row, counts, digests) before anything is written; every library's installed state is
 * checked next, so a conflict writes nothing; then each library version is installed in its own transaction
 * (installLibrary), and the search indexes are settled as after a crawl, so its snippets are searchable at
 * once, typo lexicon included.
 */
export async function importPack(pool: pg.Pool, input: Readable, options: ImportOptions): Promise<ImportSummary> {
  const target = options.as === undefined ? undefined : parseInstallTarget(options.as);
  const temp = await createPackTempDir(options.home);
  try {
    const pack = await readPack(input, temp.dir, { maxBytes: options.maxBytes });
    if (target && pack.libraries.length > 1) {
      throw new ValidationError(`--as names one library, and this pack holds ${pack.libraries.length}.`, { hint: 'Export the library alone, or import without --as.' });
    }
    const replace = options.replace ?? false;
    const planned = pack.libraries.map((library) => ({ library, target: target ?? { name: library.source.name, version: library.source.version } }));
    const states = await checkConflicts(pool, planned, replace);
    const libraries = await installAll(
      planned.map((p, i) => ({ ...p, state: states[i]! })),
      ({ library, target: t, state }): Promise<InstalledLibrary> =>
        state.state === 'unchanged' ? unchangedLibrary(pool, t, state.sourceId, library.entry.documents) : installLibrary(pool, library, t, replace),
    );
    if (libraries.some((l) => l.status !== 'unchanged')) await indexUpkeepStage.beforeJobCompletes?.(pool);
    return { libraries };
  } finally {
    await temp.remove();
  }
}
