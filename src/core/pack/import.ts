import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type pg from 'pg';
import { ValidationError } from '../errors.js';
import { indexUpkeepStage } from '../pipeline/index-upkeep.js';
import { libraryName, libraryVersion } from './format.js';
import { installLibrary } from './install.js';
import type { InstallTarget, InstalledLibrary } from './install.js';
import { readPack } from './reader.js';

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

/**
 * Imports an index pack (docs/pack-format.md) from `input`: the whole pack is unpacked to a private folder
 * under DOCDEX_HOME/tmp and verified (manifest, every SHA-256, every row, counts, digests) before anything is
 * written; then each library version is installed in its own transaction (installLibrary), and the search
 * indexes are settled as after a crawl, so its snippets are searchable at once, typo lexicon included.
 */
export async function importPack(pool: pg.Pool, input: Readable, options: ImportOptions): Promise<ImportSummary> {
  const target = options.as === undefined ? undefined : parseInstallTarget(options.as);
  const tmp = path.join(options.home, 'tmp');
  await mkdir(tmp, { recursive: true, mode: 0o700 });
  const dir = await mkdtemp(path.join(tmp, 'pack-'));
  try {
    const pack = await readPack(input, dir, { maxBytes: options.maxBytes });
    if (target && pack.libraries.length > 1) {
      throw new ValidationError(`--as names one library, and this pack holds ${pack.libraries.length}.`, { hint: 'Export the library alone, or import without --as.' });
    }
    const libraries: InstalledLibrary[] = [];
    for (const library of pack.libraries) {
      libraries.push(await installLibrary(pool, library, target ?? { name: library.source.name, version: library.source.version }, options.replace ?? false));
    }
    if (libraries.some((l) => l.status !== 'unchanged')) await indexUpkeepStage.beforeJobCompletes?.(pool);
    return { libraries };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
