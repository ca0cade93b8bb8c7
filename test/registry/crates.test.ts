import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { readCrateDocument } from '../../src/core/registry/crates.js';
import { resolvePackage } from '../../src/core/registry/index.js';
import { failure, fixture, serveRegistry } from './registry-server.js';
import type { RegistryServer } from './registry-server.js';

/** crates.io's API on loopback, answering with recorded response shapes (test/fixtures/registry/crates-*.json). */

let registry: RegistryServer;

beforeAll(async () => {
  registry = await serveRegistry(
    () => ({
      '/api/v1/crates/serde': { body: fixture('crates-serde.json') },
      '/api/v1/crates/tokio-util': { body: fixture('crates-tokio-util.json') },
      '/api/v1/crates/odd': { body: JSON.stringify({ crate: { name: 'odd', repository: 42, documentation: ['x'] }, versions: 'many' }) },
      '/api/v1/crates/empty': { body: '{}' },
      // Whitespace is valid JSON padding: only the cap stops it.
      '/api/v1/crates/huge': { body: Buffer.alloc(33 * 1024 * 1024, 0x20) },
    }),
    { status: 404, body: fixture('crates-not-found.json') },
  );
});
afterAll(() => registry?.close());

const config = () => loadConfig({ HOME: os.tmpdir(), CRATES_URL: registry.base, CRAWL_ALLOW_HOSTS: '127.0.0.1' });
const resolve = (name: string, version?: string) => resolvePackage(config(), { ecosystem: 'crates', name, ...(version === undefined ? {} : { version }) });

describe('crates.io resolution', () => {
  it('takes max_stable_version, the repository, the homepage as a docs site and docs.rs pinned to the version', async () => {
    expect(await resolve('serde')).toEqual({
      ecosystem: 'crates',
      name: 'serde',
      version: '1.0.215',
      aliases: [],
      repository: { url: 'https://github.com/serde-rs/serde' },
      homepage: 'https://serde.rs/',
      documentation: 'https://docs.rs/serde/1.0.215/',
      tagCandidates: expect.arrayContaining(['v1.0.215', '1.0.215', 'serde@1.0.215']),
    });
    // crates.io refuses requests without a User-Agent.
    expect(registry.hits.at(-1)).toEqual({ path: '/api/v1/crates/serde', userAgent: expect.stringMatching(/docdex/) });
  });

  it('resolves exact versions and ranges, skipping yanked releases and prereleases unless asked', async () => {
    expect((await resolve('serde', '1')).version).toBe('1.0.215');
    expect((await resolve('serde', '^1.0.100')).version).toBe('1.0.215');
    expect((await resolve('serde', '1.0.100')).version).toBe('1.0.100');
    expect((await resolve('serde', '0.9')).version).toBe('0.9.15');
    expect((await resolve('serde', '1.0.0-rc1')).version).toBe('1.0.0-rc1');
    // Asked for by its exact number, a yanked version is still what was asked for.
    expect((await resolve('serde', '1.0.216')).version).toBe('1.0.216');
  });

  it('answers version_not_found listing the newest versions', async () => {
    const error = await failure(resolve('serde', '3'));
    expect([error.code, error.status]).toEqual(['version_not_found', 404]);
    expect(error.message).toContain('1.0.215, 1.0.214, 1.0.100, 0.9.15, 1.0.0-rc1');
    expect(error.hint).toContain('crates:serde@1.0.215');
  });

  it('falls back to docs.rs for a crates.io crate that names no documentation, and keeps a project site', () => {
    const resolved = readCrateDocument(
      JSON.parse(fixture('crates-tokio-util.json')),
      { ecosystem: 'crates', name: 'tokio-util', version: '0.7.11' },
      'https://crates.io/api/v1/crates/tokio-util',
      true,
    );
    expect(resolved).toMatchObject({
      name: 'tokio-util',
      version: '0.7.11',
      aliases: ['tokio'],
      repository: { url: 'https://github.com/tokio-rs/tokio' },
      homepage: 'https://tokio.rs/',
      documentation: 'https://docs.rs/tokio-util/0.7.11/',
    });
    expect(resolved.tagCandidates).toContain('tokio-util-v0.7.11');
  });

  it('assumes no docs.rs page for a crate from another registry (CRATES_URL) that names no documentation', async () => {
    // docs.rs documents crates.io's crates only: crawling it for a private registry's crate fails.
    const resolved = await resolve('tokio-util', '0.7.11');
    expect(resolved).toMatchObject({ name: 'tokio-util', version: '0.7.11', homepage: 'https://tokio.rs/' });
    expect(resolved.documentation).toBeUndefined();
    // A docs.rs link the registry gives is still taken, pinned to the version.
    expect((await resolve('serde', '1.0.215')).documentation).toBe('https://docs.rs/serde/1.0.215/');
  });

  it('answers package_not_found from crates.io’s 404', async () => {
    const error = await failure(resolve('nosuchcrate'));
    expect([error.code, error.status]).toEqual(['package_not_found', 404]);
  });

  it('reads odd field types as absent and a document without a crate as a bad answer', async () => {
    const odd = await failure(resolve('odd'));
    // No versions list and no version fields: nothing to resolve, said plainly.
    expect(odd.code).toBe('version_not_found');
    expect((await failure(resolve('empty'))).code).toBe('bad_gateway');
  });

  it('stops reading an answer larger than any real crate document (bad_gateway)', async () => {
    const error = await failure(resolve('huge'));
    expect(error.code).toBe('bad_gateway');
    expect(error.message).toMatch(/larger than 32 MiB/);
  });

  it('gives up on a registry that does not answer in time (registry_unavailable)', async () => {
    const server = http.createServer(() => undefined);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const silent = loadConfig({ HOME: os.tmpdir(), CRATES_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, CRAWL_ALLOW_HOSTS: '127.0.0.1' });
      const error = await failure(resolvePackage(silent, { ecosystem: 'crates', name: 'serde' }, { signal: AbortSignal.timeout(300) }));
      expect([error.code, error.status]).toEqual(['registry_unavailable', 503]);
      expect(error.message).toContain('/api/v1/crates/serde');
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('refuses names crates.io cannot have', async () => {
    expect((await failure(resolve('serde/../../admin'))).code).toBe('validation_error');
    expect((await failure(resolve('1serde'))).code).toBe('validation_error');
  });
});
