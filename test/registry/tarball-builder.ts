import { createGzip } from 'node:zlib';
import tar from 'tar-stream';

/** Package tarballs built in tests (tar-stream + gzip), as npm publishes them: `package/<file>` entries. */

export type Entry = { name: string; content?: string | Buffer; type?: 'file' | 'symlink' | 'directory'; linkname?: string; size?: number; fill?: number };

/** A gzipped tar of `entries`; an entry with `size` and `fill` is that many bytes of `fill`, written in chunks. */
export async function tarball(entries: Entry[], trailing?: Buffer): Promise<Buffer> {
  const pack = tar.pack();
  const gzip = createGzip({ level: 1 });
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    gzip.on('data', (c: Buffer) => chunks.push(c));
    gzip.on('end', () => resolve());
    gzip.on('error', reject);
  });
  pack.pipe(gzip);
  for (const entry of entries) {
    if (entry.size !== undefined) {
      const sink = pack.entry({ name: entry.name, size: entry.size });
      const block = Buffer.alloc(1024 * 1024, entry.fill ?? 0);
      for (let left = entry.size; left > 0; left -= block.length) {
        if (!sink.write(left >= block.length ? block : block.subarray(0, left))) await new Promise<void>((r) => sink.once('drain', () => r()));
      }
      await new Promise<void>((resolve, reject) => sink.end((error?: Error | null) => (error ? reject(error) : resolve())));
    } else {
      await new Promise<void>((resolve, reject) =>
        pack.entry({ name: entry.name, type: entry.type ?? 'file', ...(entry.linkname ? { linkname: entry.linkname } : {}) }, entry.content ?? '', (error) => (error ? reject(error) : resolve())),
      );
    }
  }
  if (trailing) {
    // Bytes after the README that are not a tar entry: reading on would fail, so a reader that stops early succeeds.
    pack.push(trailing);
  }
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}
