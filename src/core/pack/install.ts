import type pg from 'pg';
import { withTransaction } from '../db/transaction.js';
import { UserError } from '../errors.js';
import { checkAliases } from '../sources/aliases.js';
import { deleteLockedSource } from '../sources/manage.js';
import { writeLibraryRows } from './install-copy.js';
import { finishCounts, findSourceForUpdate, holdIndexEntriesForLibrary, insertImportJobs, insertSource, sourceDigest } from './install-rows.js';
import type { VerifiedLibrary } from './reader.js';

export interface InstallTarget {
  name: string;
  version: string;
}

export interface InstalledLibrary extends InstallTarget {
  /** installed: new; replaced: a different version of the same name@version was replaced; unchanged: identical, nothing written. */
  status: 'installed' | 'replaced' | 'unchanged';
  sourceId: string;
  documents: number;
  snippets: number;
}

/** What an installed name@version holds against a library of the pack. */
export type InstalledState = { state: 'absent' } | { state: 'unchanged' | 'differs'; sourceId: string };

function startUrlsOf(library: VerifiedLibrary): string[] {
  const urls = library.source.crawlConfig.start_urls;
  if (Array.isArray(urls) && urls.every((u) => typeof u === 'string')) return urls.slice(0, 100);
  return library.source.baseUrl ? [library.source.baseUrl] : [];
}

function conflictError(target: InstallTarget): UserError {
  return new UserError(`${target.name}@${target.version || '(unversioned)'} is already installed with different content.`, { code: 'pack_conflict' });
}

async function stateOf(client: pg.ClientBase, library: VerifiedLibrary, target: InstallTarget): Promise<InstalledState> {
  const sourceId = await findSourceForUpdate(client, target.name, target.version);
  if (sourceId === undefined) return { state: 'absent' };
  return { state: (await sourceDigest(client, sourceId)) === library.entry.digest ? 'unchanged' : 'differs', sourceId };
}

/**
 * What is installed under each library's target now, compared by content digest, read before anything of an
 * import is written: a conflict on any library of a pack (different content, no `replace`) throws
 * pack_conflict and writes none of them. installLibrary checks again under its row lock, since another
 * import may have installed the same name@version meanwhile.
 */
export async function checkConflicts(pool: pg.Pool, libraries: ReadonlyArray<{ library: VerifiedLibrary; target: InstallTarget }>, replace: boolean): Promise<InstalledState[]> {
  const states: InstalledState[] = [];
  for (const { library, target } of libraries) {
    const state = await withTransaction(pool, (client) => stateOf(client, library, target));
    if (state.state === 'differs' && !replace) throw conflictError(target);
    states.push(state);
  }
  return states;
}

/**
 * Installs one verified library version in one transaction. An installed version with the same content
 * digest is left as it is (unchanged); a different one is replaced only when `replace` is given, else
 * pack_conflict. A row the database refuses (a duplicate code hash, a snippet on a page the pack lacks)
 * rolls the whole version back.
 */
export async function installLibrary(pool: pg.Pool, library: VerifiedLibrary, target: InstallTarget, replace: boolean): Promise<InstalledLibrary> {
  const aliases = checkAliases(library.source.aliases);
  const counts = { documents: library.entry.documents, snippets: library.entry.snippets };
  return withTransaction(pool, async (client) => {
    const existing = await stateOf(client, library, target);
    if (existing.state === 'unchanged') return { ...target, status: 'unchanged', sourceId: existing.sourceId, ...counts };
    if (existing.state === 'differs') {
      if (!replace) throw conflictError(target);
      await deleteLockedSource(client, existing.sourceId);
    }
    await holdIndexEntriesForLibrary(client);
    const sourceId = await insertSource(client, library.source, target.name, target.version, aliases);
    const jobs = await insertImportJobs(client, sourceId, target.name, target.version, startUrlsOf(library));
    const folder = library.entry.folder;
    await writeLibraryRows(client, sourceId, jobs, {
      documents: { file: library.files['documents.ndjson'], where: `${folder}/documents.ndjson` },
      snippets: { file: library.files['snippets.ndjson'], where: `${folder}/snippets.ndjson` },
    });
    const snippets = await finishCounts(client, sourceId, jobs, counts.documents);
    return { ...target, status: existing.state === 'absent' ? 'installed' : 'replaced', sourceId, documents: counts.documents, snippets };
  });
}
