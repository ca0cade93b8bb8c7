import os from 'node:os';
import { createGzip, gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { fetchTarballReadme } from '../../src/core/registry/index.js';
import { serveRegistry, failure } from './registry-server.js';
import type { RegistryServer } from './registry-server.js';

/** Package tarballs built here (tar-stream + gzip), served on loopback, read back as a stream. */

type Entry = { name: string; content?: string | Buffer; type?: 'file' | 'symlink' | 'directory'; linkname?: string; size?: number; fill?: number };

/** A gzipped tar of `entries`; an entry with `size` and `fill` is that many bytes of `fill`, written in chunks. */
async function tarball(entries: Entry[], trailing?: Buffer): Promise<Buffer> {
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

const README = '# widgets\n\nInstall with `npm install widgets`.\n\n```js\nimport { widget } from "widgets";\n```\n';
let registry: RegistryServer;
const tgz = (body: Buffer) => ({ body, type: 'application/octet-stream' });

beforeAll(async () => {
  const files: Record<string, Buffer> = {
    'ok.tgz': await tarball([
      { name: 'package/package.json', content: '{"name":"widgets"}' },
      { name: 'package/README.md', content: `\uFEFF${README}` },
      { name: 'package/lib/index.js', content: 'export {}' },
    ]),
    'early.tgz': await tarball([{ name: 'package/README.md', content: README }], Buffer.alloc(4096, 0x41)),
    'hostile.tgz': await tarball([
      { name: '../README.md', content: 'escape' },
      { name: '/README.md', content: 'absolute' },
      { name: 'package/docs/README.md', content: 'nested' },
      { name: 'package/README', type: 'symlink', linkname: '/etc/passwd' },
      { name: 'package/README.md/', type: 'directory' },
      { name: 'package/readme.markdown', content: 'the real one' },
    ]),
    'none.tgz': await tarball([{ name: 'package/index.js', content: 'module.exports = 1' }]),
    'huge-readme.tgz': await tarball([
      { name: 'package/README.md', size: 5 * 1024 * 1024, fill: 0x61 },
      { name: 'package/README.txt', content: 'small one' },
    ]),
    'bomb.tgz': await tarball([
      { name: 'package/zeros.bin', size: 300 * 1024 * 1024 },
      { name: 'package/README.md', content: README },
    ]),
  };
  registry = await serveRegistry(() => ({
    ...Object.fromEntries(Object.entries(files).map(([name, body]) => [`/widgets/-/${name}`, tgz(body)])),
    '/widgets/-/plain.tgz': tgz(Buffer.from('this is not gzip at all')),
    '/widgets/-/not-tar.tgz': tgz(gzipSync(Buffer.alloc(2048, 0x7a))),
    '/widgets/-/moved.tgz': { status: 302, body: '', headers: { location: '/widgets/-/ok.tgz' } },
  }));
});
afterAll(() => registry?.close());

const config = () => loadConfig({ HOME: os.tmpdir(), CRAWL_ALLOW_HOSTS: '127.0.0.1' });
const readme = (file: string) => fetchTarballReadme(config(), `${registry.base}/widgets/-/${file}`);

describe('fetchTarballReadme', () => {
  it('returns package/README* from the tarball (byte order mark dropped), also after a redirect', async () => {
    expect(await readme('ok.tgz')).toEqual({ filename: 'README.md', content: README });
    expect(await readme('moved.tgz')).toEqual({ filename: 'README.md', content: README });
  });

  it('stops reading once the README is found', async () => {
    expect(await readme('early.tgz')).toEqual({ filename: 'README.md', content: README });
  });

  it('never takes ../, absolute, nested, symlinked or directory entries for the README', async () => {
    expect(await readme('hostile.tgz')).toEqual({ filename: 'readme.markdown', content: 'the real one' });
  });

  it('returns undefined for a tarball without a README, and skips a README over its cap', async () => {
    expect(await readme('none.tgz')).toBeUndefined();
    expect(await readme('huge-readme.tgz')).toEqual({ filename: 'README.txt', content: 'small one' });
  });

  it('refuses a tarball that unpacks past its cap (a gzip bomb) with bad_gateway', async () => {
    const error = await failure(readme('bomb.tgz'));
    expect(error.code).toBe('bad_gateway');
    expect(error.message).toMatch(/larger than 256 MiB/);
  }, 60_000);

  it('answers bad_gateway for bytes that are not a gzipped tar, package_not_found for a 404', async () => {
    expect((await failure(readme('plain.tgz'))).code).toBe('bad_gateway');
    expect((await failure(readme('not-tar.tgz'))).code).toBe('bad_gateway');
    expect((await failure(readme('missing.tgz'))).code).toBe('package_not_found');
  });

  it('refuses a URL that is not http(s), and a loopback tarball the policy does not admit', async () => {
    expect((await failure(fetchTarballReadme(config(), 'file:///etc/passwd'))).code).toBe('validation_error');
    const strict = loadConfig({ HOME: os.tmpdir(), CRAWL_ALLOW_HOSTS: '' });
    const refused = await failure(fetchTarballReadme(strict, `${registry.base}/widgets/-/ok.tgz`));
    expect(refused.code).toBe('registry_unavailable');
  });
});
