import { lookup } from 'node:dns/promises';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { refusalFor } from '../../src/core/net/policy.js';
import { fetchTarballReadme, resolvePackage } from '../../src/core/registry/index.js';
import { serveRegistry, failure } from './registry-server.js';
import type { RegistryServer } from './registry-server.js';

/** npm package documents (the full document, as `GET <registry>/<name>` answers) on loopback, and one real package. */

function manifest(base: string, name: string, version: string, fields: Record<string, unknown>) {
  const file = `${name.split('/').pop()}-${version}.tgz`;
  return {
    name,
    version,
    description: 'Fixture package.',
    main: 'index.js',
    license: 'MIT',
    ...fields,
    _id: `${name}@${version}`,
    _nodeVersion: '20.11.0',
    _npmVersion: '10.2.4',
    dist: { integrity: 'sha512-AAAA', shasum: '0000000000000000000000000000000000000000', tarball: `${base}/${name}/-/${file}`, fileCount: 4, unpackedSize: 5120 },
    _npmUser: { name: 'acme-bot', email: 'bot@example.org' },
    maintainers: [{ name: 'acme-bot', email: 'bot@example.org' }],
    directories: {},
    _hasShrinkwrap: false,
  };
}

function packageDocument(base: string, name: string, distTags: Record<string, string>, versions: string[], fields: Record<string, unknown>) {
  return JSON.stringify({
    _id: name,
    _rev: '12-abcdef',
    name,
    'dist-tags': distTags,
    versions: Object.fromEntries(versions.map((v) => [v, manifest(base, name, v, fields)])),
    time: { created: '2024-01-01T00:00:00.000Z', modified: '2024-06-01T00:00:00.000Z', ...Object.fromEntries(versions.map((v) => [v, '2024-03-01T00:00:00.000Z'])) },
    maintainers: [{ name: 'acme-bot', email: 'bot@example.org' }],
    readme: '# Fixture',
    readmeFilename: 'README.md',
    license: 'MIT',
  });
}

const WIDGETS = {
  repository: { type: 'git', url: 'git+https://github.com/acme/widgets.git', directory: 'packages/core' },
  homepage: 'https://github.com/acme/widgets/tree/main/packages/core#readme',
  bugs: { url: 'https://github.com/acme/widgets/issues' },
};

let registry: RegistryServer;
beforeAll(async () => {
  registry = await serveRegistry((base) => ({
    '/@acme%2fwidgets-core': { body: packageDocument(base, '@acme/widgets-core', { latest: '2.1.0', next: '3.0.0-rc.0' }, ['1.0.0', '2.0.0', '2.0.1', '2.1.0', '3.0.0-rc.0'], WIDGETS) },
    '/gizmo': { body: packageDocument(base, 'gizmo', { latest: '1.4.2' }, ['1.4.2'], { repository: 'github:acme/gizmo', homepage: 'https://gizmo.dev/docs' }) },
    '/mirror/path/gizmo': { body: packageDocument(base, 'gizmo', { latest: '1.4.2' }, ['1.4.2'], { repository: 'acme/gizmo' }) },
    '/gone': { body: JSON.stringify({ _id: 'gone', name: 'gone', time: { created: '2020-01-01T00:00:00.000Z', unpublished: { time: '2020-02-01T00:00:00.000Z', versions: ['1.0.0'] } } }) },
    '/garbled': { body: JSON.stringify({ name: 'garbled', versions: ['1.0.0'] }) },
    '/weird': { body: JSON.stringify({ name: 'weird', 'dist-tags': 7, versions: { '1.0.0': { repository: { url: 17 }, homepage: ['x'], dist: 'none' } } }) },
  }));
});
afterAll(() => registry?.close());

const config = (registryUrl = registry.base) => loadConfig({ HOME: os.tmpdir(), NPM_REGISTRY_URL: registryUrl, CRAWL_ALLOW_HOSTS: '127.0.0.1' });
const resolve = (name: string, version?: string) => resolvePackage(config(), { ecosystem: 'npm', name, ...(version === undefined ? {} : { version }) });

describe('npm resolution on a loopback registry', () => {
  it('resolves a scoped monorepo package: latest dist-tag, repository with its folder, no repository page as homepage', async () => {
    expect(await resolve('@acme/widgets-core')).toEqual({
      ecosystem: 'npm',
      name: '@acme/widgets-core',
      version: '2.1.0',
      aliases: ['widgets'],
      repository: { url: 'https://github.com/acme/widgets', directory: 'packages/core' },
      tarball: `${registry.base}/@acme/widgets-core/-/widgets-core-2.1.0.tgz`,
      tagCandidates: expect.arrayContaining(['v2.1.0', '2.1.0', '@acme/widgets-core@2.1.0', 'widgets-core@2.1.0']),
    });
    expect(registry.hits.at(-1)!.path).toBe('/@acme%2fwidgets-core');
  });

  it('resolves exact versions, ranges and dist-tags; prereleases only when asked', async () => {
    expect((await resolve('@acme/widgets-core', '2.0.0')).version).toBe('2.0.0');
    expect((await resolve('@acme/widgets-core', '2')).version).toBe('2.1.0');
    expect((await resolve('@acme/widgets-core', '~2.0.0')).version).toBe('2.0.1');
    expect((await resolve('@acme/widgets-core', '^1')).version).toBe('1.0.0');
    expect((await resolve('@acme/widgets-core', 'next')).version).toBe('3.0.0-rc.0');
    expect((await resolve('@acme/widgets-core', '>=3.0.0-rc.0')).version).toBe('3.0.0-rc.0');
  });

  it('answers version_not_found with the newest published versions', async () => {
    const error = await failure(resolve('@acme/widgets-core', '3'));
    expect([error.code, error.status]).toEqual(['version_not_found', 404]);
    expect(error.message).toContain('2.1.0, 2.0.1, 2.0.0, 1.0.0, 3.0.0-rc.0');
    expect(error.hint).toContain('npm:@acme/widgets-core@2.1.0');
    expect((await failure(resolve('@acme/widgets-core', 'not a range'))).code).toBe('version_not_found');
  });

  it('expands github: and bare o/r shorthands and keeps a homepage that is a docs site', async () => {
    expect(await resolve('gizmo')).toMatchObject({ version: '1.4.2', aliases: [], repository: { url: 'https://github.com/acme/gizmo' }, homepage: 'https://gizmo.dev/docs' });
    const mirrored = await resolvePackage(config(`${registry.base}/mirror/path`), { ecosystem: 'npm', name: 'gizmo' });
    expect(mirrored.repository).toEqual({ url: 'https://github.com/acme/gizmo' });
    expect(registry.hits.at(-1)!.path).toBe('/mirror/path/gizmo');
  });

  it('answers package_not_found for a 404 and for an unpublished package', async () => {
    expect((await failure(resolve('no-such-package'))).code).toBe('package_not_found');
    expect((await failure(resolve('gone'))).code).toBe('package_not_found');
  });

  it('reads malformed fields as absent and a document without a versions object as a bad answer', async () => {
    expect(await resolve('weird')).toEqual({ ecosystem: 'npm', name: 'weird', version: '1.0.0', aliases: [], tagCandidates: expect.any(Array) });
    expect((await failure(resolve('garbled'))).code).toBe('bad_gateway');
  });

  it('refuses names npm cannot have before asking anything', async () => {
    const before = registry.hits.length;
    for (const name of ['../admin', '@scope/../x', 'a b', '', '@/x']) expect((await failure(resolve(name))).code, name).toBe('validation_error');
    expect(registry.hits.length).toBe(before);
  });
});

/**
 * The real npm registry, found the way `add` finds it (`npm config get registry`). This machine's resolver may
 * map the registry to an address the outbound policy refuses (a test network's reserved range); the operator's
 * remedy, CRAWL_ALLOW_HOSTS, is applied here and said. The test skips only when the registry cannot be reached.
 */
const REAL_REGISTRY = 'registry.npmjs.org';
async function realRegistryAccess(): Promise<{ reachable: boolean; why: string; allowHosts: string }> {
  try {
    const response = await fetch(`https://${REAL_REGISTRY}/is-number`, { signal: AbortSignal.timeout(15_000) });
    await response.body?.cancel();
    if (!response.ok) return { reachable: false, why: `it answered HTTP ${response.status}`, allowHosts: '' };
    const addresses = await lookup(REAL_REGISTRY, { all: true });
    const refused = addresses.every((a) => refusalFor(a.address, { allow: [], allowLoopback: false }) !== null);
    if (refused) console.warn(`${REAL_REGISTRY} resolves to ${addresses.map((a) => a.address).join(', ')} here, which the outbound policy refuses; the test allow-lists it`);
    return { reachable: true, why: '', allowHosts: refused ? REAL_REGISTRY : '' };
  } catch (error) {
    return { reachable: false, why: (error as Error).message, allowHosts: '' };
  }
}
const access = await realRegistryAccess();
if (!access.reachable) console.warn(`Skipping the real npm registry test: ${REAL_REGISTRY} is unreachable (${access.why})`);

describe.skipIf(!access.reachable)('npm resolution against the real registry', () => {
  it('resolves is-number@7.0.0 to its repository and tarball, and reads the tarball README', async () => {
    const real = loadConfig({ HOME: os.tmpdir(), CRAWL_ALLOW_HOSTS: access.allowHosts });
    const resolved = await resolvePackage(real, { ecosystem: 'npm', name: 'is-number', version: '7.0.0' });
    expect(resolved).toMatchObject({
      ecosystem: 'npm',
      name: 'is-number',
      version: '7.0.0',
      repository: { url: 'https://github.com/jonschlinkert/is-number' },
      tarball: 'https://registry.npmjs.org/is-number/-/is-number-7.0.0.tgz',
    });
    // Its homepage is the GitHub repository page: not a docs site.
    expect(resolved.homepage).toBeUndefined();
    expect(resolved.tagCandidates.slice(0, 3)).toEqual(['v7.0.0', '7.0.0', 'is-number@7.0.0']);
    const readme = await fetchTarballReadme(real, resolved.tarball!);
    expect(readme?.filename).toBe('README.md');
    expect(readme?.content).toContain('is-number');
  }, 60_000);
});
