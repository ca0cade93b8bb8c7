import { Readable, Writable } from 'node:stream';
import { zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import tar from 'tar-stream';
import type pg from 'pg';
import { exportPack } from '../../src/core/pack/export.js';
import { parseLibraryRef } from '../../src/core/library-ref.js';

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
