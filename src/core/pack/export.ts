import { createReadStream } from 'node:fs';
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { constants, createZstdCompress } from 'node:zlib';
import type pg from 'pg';
import tar from 'tar-stream';
import { latestMigrationId } from '../db/migrate.js';
import { ValidationError } from '../errors.js';
import type { LibraryRef } from '../library-ref.js';
import { resolveLibrary } from '../sources/resolve.js';
import { ContentDigest } from './digest.js';
import { allSourceIds, readPackDocuments, readPackSnippets, readPackSource } from './export-rows.js';
import { PACK_FORMAT, PACK_FORMAT_VERSION } from './format.js';
import type { ManifestLibrary, PackManifest, PartName } from './format.js';
import { PartWriter } from './part-writer.js';
import type { WrittenPart } from './part-writer.js';
import { docdexVersion } from './version.js';

export interface ExportOptions {
  /** The library versions to export (each as `resolveLibrary` reads it), or every source. */
  libraries: LibraryRef[] | 'all';
  /** Where parts are spooled before the tar is written (default: the system's temp folder). */
  tmpDir?: string;
}

export interface ExportSummary {
  libraries: Array<{ name: string; version: string; documents: number; snippets: number; sections: number }>;
}

interface SpooledLibrary {
  entry: ManifestLibrary;
  files: Record<PartName, string>;
  /** Of the entry's snippet rows, how many are page sections (the rest are code snippets, as a source counts them). */
  sections: number;
}

async function sourceIdsFor(pool: pg.Pool, libraries: LibraryRef[] | 'all'): Promise<string[]> {
  if (libraries === 'all') return allSourceIds(pool);
  const ids: string[] = [];
  for (const ref of libraries) ids.push((await resolveLibrary(pool, ref)).id);
  return [...new Set(ids)];
}

/** Rows written as NDJSON to `file`; `each` sees every row first (the digest). */
async function spoolRows<T>(file: string, batches: AsyncIterable<T[]>, each: (row: T) => void): Promise<WrittenPart> {
  const part = new PartWriter(file);
  try {
    for await (const batch of batches) {
      for (const row of batch) {
        each(row);
        await part.writeLine(row);
      }
    }
  } catch (error) {
    await part.close().catch(() => undefined);
    throw error;
  }
  return part.close();
}

/** One library version's parts written to `dir`, with its manifest entry, all read from one snapshot. */
async function spoolLibrary(pool: pg.Pool, sourceId: string, index: number, dir: string): Promise<SpooledLibrary> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const spooled = await spoolLibraryParts(client, sourceId, index, dir);
    await client.query('COMMIT');
    return spooled;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

async function spoolLibraryParts(client: pg.ClientBase, sourceId: string, index: number, dir: string): Promise<SpooledLibrary> {
  const folder = path.join(dir, String(index));
  await mkdir(folder);
  const source = await readPackSource(client, sourceId);
  const sourcePart = new PartWriter(path.join(folder, 'source.json'));
  await sourcePart.write(JSON.stringify(source));
  const sourceWritten = await sourcePart.close();
  const digest = new ContentDigest();
  const documents = await spoolRows(path.join(folder, 'documents.ndjson'), readPackDocuments(client, sourceId), (d) => digest.addDocument(d.url, d.contentHash));
  let sections = 0;
  const snippets = await spoolRows(path.join(folder, 'snippets.ndjson'), readPackSnippets(client, sourceId), (s) => {
    digest.addSnippet(s.codeHash, s.title, s.description, s.language);
    if (s.kind === 'section') sections++;
  });
  const part = (w: WrittenPart) => ({ bytes: w.bytes, sha256: w.sha256 });
  return {
    entry: {
      name: source.name,
      version: source.version,
      folder: `libraries/${index}`,
      documents: documents.lines,
      snippets: snippets.lines,
      digest: digest.hex(),
      parts: { 'source.json': part(sourceWritten), 'documents.ndjson': part(documents), 'snippets.ndjson': part(snippets) },
    },
    files: { 'source.json': sourceWritten.path, 'documents.ndjson': documents.path, 'snippets.ndjson': snippets.path },
    sections,
  };
}

async function addEntry(pack: tar.Pack, name: string, size: number, file: string): Promise<void> {
  const entry = pack.entry({ name, size, mode: 0o644, mtime: new Date(0) });
  await pipeline(createReadStream(file), entry);
}

/** The tar, manifest first, then every part, compressed with zstd into `output`. */
async function writeContainer(manifest: PackManifest, libraries: SpooledLibrary[], output: Writable): Promise<void> {
  const pack = tar.pack();
  const zstd = createZstdCompress({ params: { [constants.ZSTD_c_compressionLevel]: 3 } });
  const done = pipeline(pack, zstd, output);
  const written = (async () => {
    pack.entry({ name: 'manifest.json', mode: 0o644, mtime: new Date(0) }, JSON.stringify(manifest, null, 2));
    for (const library of libraries) {
      for (const name of Object.keys(library.files) as PartName[]) {
        await addEntry(pack, `${library.entry.folder}/${name}`, library.entry.parts[name].bytes, library.files[name]);
      }
    }
    pack.finalize();
  })();
  await Promise.all([done, written.catch((error: unknown) => (pack.destroy(error as Error), Promise.reject(error)))]);
}

/**
 * Writes an index pack (docs/pack-format.md) of the given library versions to `output`: each part spooled
 * to a temporary file from batched reads (memory stays flat), then the zstd tar with the manifest first.
 * Throws NotFoundError / VersionNotIndexedError for a library that is not indexed, before writing anything.
 */
export async function exportPack(pool: pg.Pool, options: ExportOptions, output: Writable): Promise<ExportSummary> {
  const ids = await sourceIdsFor(pool, options.libraries);
  if (ids.length === 0) throw new ValidationError('There is no library to export.', { hint: 'Index one first: docdex add <url|package> --wait.' });
  const dir = await mkdtemp(path.join(options.tmpDir ?? tmpdir(), 'docdex-export-'));
  try {
    const libraries: SpooledLibrary[] = [];
    for (const [index, id] of ids.entries()) libraries.push(await spoolLibrary(pool, id, index, dir));
    const manifest: PackManifest = {
      format: PACK_FORMAT,
      formatVersion: PACK_FORMAT_VERSION,
      docdexVersion: docdexVersion(),
      schemaVersion: latestMigrationId(),
      createdAt: new Date().toISOString(),
      libraries: libraries.map((l) => l.entry),
    };
    await writeContainer(manifest, libraries, output);
    // The code snippets, as a source and an import count them; the manifest's count is of every row.
    return { libraries: libraries.map(({ entry: e, sections }) => ({ name: e.name, version: e.version, documents: e.documents, snippets: e.snippets - sections, sections })) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
