import type pg from 'pg';
import { withTransaction } from '../db/transaction.js';
import { UserError } from '../errors.js';
import { checkAliases } from '../sources/aliases.js';
import { documentRowSchema, snippetRowSchema } from './format.js';
import {
  createRelationshipStage,
  deleteSourceRows,
  finishCounts,
  findSourceForUpdate,
  insertDocuments,
  insertImportJobs,
  insertRelationships,
  insertSnippets,
  insertSource,
  sourceDigest,
} from './install-rows.js';
import type { PageFindings } from './install-rows.js';
import { readRowBatches } from './ndjson-file.js';
import type { VerifiedLibrary } from './reader.js';

const DOCUMENT_BATCH = 500;
const SNIPPET_BATCH = 2000;

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

function startUrlsOf(library: VerifiedLibrary): string[] {
  const urls = library.source.crawlConfig.start_urls;
  if (Array.isArray(urls) && urls.every((u) => typeof u === 'string')) return urls.slice(0, 100);
  return library.source.baseUrl ? [library.source.baseUrl] : [];
}

async function writeRows(client: pg.ClientBase, library: VerifiedLibrary, sourceId: string, target: InstallTarget): Promise<void> {
  const jobs = await insertImportJobs(client, sourceId, target.name, target.version, startUrlsOf(library));
  const folder = library.entry.folder;
  const pages: PageFindings = new Map();
  for await (const batch of readRowBatches(library.files['documents.ndjson'], documentRowSchema, `${folder}/documents.ndjson`, DOCUMENT_BATCH)) {
    await insertDocuments(client, sourceId, jobs, batch, pages);
  }
  await createRelationshipStage(client);
  for await (const batch of readRowBatches(library.files['snippets.ndjson'], snippetRowSchema, `${folder}/snippets.ndjson`, SNIPPET_BATCH)) {
    await insertSnippets(client, sourceId, batch, pages);
  }
  await insertRelationships(client, sourceId);
  await finishCounts(client, sourceId, jobs, library.entry.documents, library.entry.snippets);
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
    const existing = await findSourceForUpdate(client, target.name, target.version);
    if (existing !== undefined) {
      if ((await sourceDigest(client, existing)) === library.entry.digest) return { ...target, status: 'unchanged', sourceId: existing, ...counts };
      if (!replace) {
        throw new UserError(`${target.name}@${target.version || '(unversioned)'} is already installed with different content.`, { code: 'pack_conflict' });
      }
      await deleteSourceRows(client, existing);
    }
    const sourceId = await insertSource(client, library.source, target.name, target.version, aliases);
    await writeRows(client, library, sourceId, target);
    return { ...target, status: existing === undefined ? 'installed' : 'replaced', sourceId, ...counts };
  });
}
