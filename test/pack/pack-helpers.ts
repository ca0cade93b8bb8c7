import { createHash } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import tar from 'tar-stream';
import type pg from 'pg';
import { expect } from 'vitest';
import { isUserError } from '../../src/core/errors.js';
import { importPack } from '../../src/core/pack/import.js';
import type { ImportSummary } from '../../src/core/pack/import.js';
import type { TestDatabase } from '../helpers/db.js';
import { exportPack } from '../../src/core/pack/export.js';
import { parseLibraryRef } from '../../src/core/library-ref.js';
import { ContentDigest } from '../../src/core/pack/digest.js';

/** A pack exported into memory. */
export async function exportToBuffer(pool: pg.Pool, libraries: string[] | 'all'): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, cb) {
      chunks.push(chunk);
      cb();
    },
  });
  await exportPack(pool, { libraries: libraries === 'all' ? 'all' : libraries.map(parseLibraryRef) }, sink);
  return Buffer.concat(chunks);
}

/** A pack imported from memory into `db` (its own DOCDEX_HOME). */
export function importBuffer(db: TestDatabase, pack: Buffer, options: { replace?: boolean; as?: string } = {}): Promise<ImportSummary> {
  return importPack(db.pool, Readable.from([pack]), { home: db.home, maxBytes: 64 * 1024 * 1024, ...options });
}

/** The user error an import of `pack` is refused with (fails the test when it installs, or throws otherwise). */
export async function refusal(db: TestDatabase, pack: Buffer, options: { replace?: boolean } = {}): Promise<{ code: string; message: string }> {
  const error = await importBuffer(db, pack, options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isUserError(error), String(error)).toBe(true);
  return error as { code: string; message: string };
}

export interface TarFile {
  name: string;
  data: Buffer;
}

export async function unpackEntries(pack: Buffer): Promise<TarFile[]> {
  const extract = tar.extract();
  const files: TarFile[] = [];
  const reading = (async () => {
    for await (const entry of extract) {
      const parts: Buffer[] = [];
      for await (const c of entry) parts.push(c as Buffer);
      files.push({ name: entry.header.name, data: Buffer.concat(parts) });
    }
  })();
  Readable.from([zstdDecompressSync(pack)]).pipe(extract as unknown as NodeJS.WritableStream);
  await reading;
  return files;
}

/** A pack rebuilt from its entries after `mutate` changed them (sizes follow the new data). */
export async function repack(pack: Buffer, mutate: (files: TarFile[]) => void): Promise<Buffer> {
  const files = await unpackEntries(pack);
  mutate(files);
  const out = tar.pack();
  const chunks: Buffer[] = [];
  const done = (async () => {
    for await (const c of out) chunks.push(c as Buffer);
  })();
  for (const f of files) out.entry({ name: f.name, size: f.data.length }, f.data);
  out.finalize();
  await done;
  return zstdCompressSync(Buffer.concat(chunks));
}

type Json = Record<string, unknown>;

interface ForgedLibrary {
  documents: Json[];
  snippets: Json[];
}

/**
 * A pack rebuilt after `mutate` changed its rows, with a manifest that agrees (counts, sizes, SHA-256s and
 * content digests recomputed): what a hostile or buggy exporter would write, which only the install can refuse.
 */
export async function forge(pack: Buffer, mutate: (libraries: ForgedLibrary[]) => void): Promise<Buffer> {
  return repack(pack, (files) => {
    const manifestFile = files[0]!;
    const manifest = JSON.parse(manifestFile.data.toString()) as { libraries: Array<Json & { folder: string; parts: Record<string, { bytes: number; sha256: string }> }> };
    const rowsOf = (name: string) =>
      files
        .find((f) => f.name === name)!
        .data.toString()
        .split('\n')
        .filter((l) => l.length > 0)
        .map((l) => JSON.parse(l) as Json);
    const libraries = manifest.libraries.map((l) => ({ documents: rowsOf(`${l.folder}/documents.ndjson`), snippets: rowsOf(`${l.folder}/snippets.ndjson`) }));
    mutate(libraries);
    manifest.libraries.forEach((entry, i) => {
      const library = libraries[i]!;
      const digest = new ContentDigest();
      for (const d of library.documents) digest.addDocument(String(d.url), String(d.contentHash));
      for (const s of library.snippets) digest.addSnippet(String(s.codeHash), String(s.title), String(s.description), String(s.language));
      Object.assign(entry, { documents: library.documents.length, snippets: library.snippets.length, digest: digest.hex() });
      for (const [part, rows] of [
        ['documents.ndjson', library.documents],
        ['snippets.ndjson', library.snippets],
      ] as const) {
        const data = Buffer.from(rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
        files.find((f) => f.name === `${entry.folder}/${part}`)!.data = data;
        entry.parts[part] = { bytes: data.length, sha256: createHash('sha256').update(data).digest('hex') };
      }
    });
    manifestFile.data = Buffer.from(JSON.stringify(manifest));
  });
}
