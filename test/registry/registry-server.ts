import { expect } from 'vitest';
import { UserError } from '../../src/core/errors.js';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createGzip } from 'node:zlib';
import tar from 'tar-stream';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'registry');

/** A recorded registry answer (test/fixtures/registry/<file>), with `{{BASE}}` replaced by the server's URL. */
export function fixture(file: string): string {
  return readFileSync(path.join(FIXTURES, file), 'utf8');
}

export interface Answer {
  status?: number;
  body: string | Buffer;
  type?: string;
  headers?: Record<string, string>;
}

export interface RegistryServer {
  base: string;
  /** Paths asked, with their User-Agent, in order. */
  hits: Array<{ path: string; userAgent: string | undefined }>;
  close(): Promise<void>;
}

/**
 * A registry on 127.0.0.1 answering `routes` (request path, query included, → answer); everything else is
 * 404 with `notFound`'s body, as the real registries answer an unknown package.
 */
export async function serveRegistry(routes: (base: string) => Record<string, Answer>, notFound: Answer = { status: 404, body: '{"error":"Not found"}' }): Promise<RegistryServer> {
  const hits: RegistryServer['hits'] = [];
  let table: Record<string, Answer> = {};
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    hits.push({ path: url, userAgent: req.headers['user-agent'] });
    const answer = table[url] ?? notFound;
    res.writeHead(answer.status ?? 200, { 'content-type': answer.type ?? 'application/json', ...answer.headers }).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  table = routes(base);
  return {
    base,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The UserError a registry call rejects with (a resolved call fails the test). */
export async function failure(promise: Promise<unknown>): Promise<UserError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UserError);
  return error as UserError;
}

/** An entry of a package tarball built by `tarball` (tar-stream + gzip) to serve on loopback. */
export type TarEntry = { name: string; content?: string | Buffer; type?: 'file' | 'symlink' | 'directory'; linkname?: string; size?: number; fill?: number };

/** A gzipped tar of `entries`; an entry with `size` and `fill` is that many bytes of `fill`, written in chunks. */
export async function tarball(entries: TarEntry[], trailing?: Buffer): Promise<Buffer> {
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
