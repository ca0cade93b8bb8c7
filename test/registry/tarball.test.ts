import os from 'node:os';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { fetchTarballReadme } from '../../src/core/registry/index.js';
import { serveRegistry, failure, tarball } from './registry-server.js';
import type { RegistryServer } from './registry-server.js';

/** Package tarballs built here (tar-stream + gzip), served on loopback, read back as a stream. */

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
