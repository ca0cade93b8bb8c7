import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { fetchTarballReadme, resolvePackage } from '../../src/core/registry/index.js';
import { closedPort } from '../helpers/closed-port.js';
import { failure, fixture, serveRegistry } from './registry-server.js';
import type { RegistryServer } from './registry-server.js';

/** PyPI's JSON API on loopback, answering with recorded response shapes (test/fixtures/registry/pypi-*.json). */

let registry: RegistryServer;
const json = (file: string) => ({ body: fixture(file) });

function versionDocument(file: string, version: string): { body: string } {
  const doc = JSON.parse(fixture(file));
  doc.info.version = version;
  delete doc.releases;
  return { body: JSON.stringify(doc) };
}

beforeAll(async () => {
  registry = await serveRegistry(() => ({
    '/pypi/requests/json': json('pypi-requests.json'),
    '/pypi/requests/2.31.0/json': json('pypi-requests-2.31.0.json'),
    '/pypi/requests/2.32.3/json': json('pypi-requests-2.32.3.json'),
    '/pypi/flask-sqlalchemy/json': json('pypi-flask-sqlalchemy.json'),
    '/pypi/tzdatakit/json': json('pypi-tzdatakit.json'),
    '/pypi/tzdatakit/2024.2/json': versionDocument('pypi-tzdatakit.json', '2024.2'),
    '/pypi/broken/json': { body: '{"info": 5}' },
    '/pypi/notjson/json': { body: '<html>maintenance</html>', type: 'text/html' },
    '/pypi/down/json': { status: 503, body: 'upstream down', type: 'text/plain' },
  }));
});
afterAll(() => registry?.close());

const config = (extra: Record<string, string> = {}) => loadConfig({ HOME: os.tmpdir(), PYPI_URL: registry.base, CRAWL_ALLOW_HOSTS: '127.0.0.1', ...extra });
const resolve = (name: string, version?: string) => resolvePackage(config(), { ecosystem: 'pypi', name, ...(version === undefined ? {} : { version }) });

describe('PyPI resolution', () => {
  it('takes the latest release from the project document: Source is the repository, Documentation the docs site', async () => {
    const resolved = await resolve('requests');
    expect(resolved).toEqual({
      ecosystem: 'pypi',
      name: 'requests',
      version: '2.32.3',
      aliases: [],
      repository: { url: 'https://github.com/psf/requests' },
      documentation: 'https://requests.readthedocs.io/',
      tagCandidates: expect.arrayContaining(['v2.32.3', '2.32.3', 'requests@2.32.3']),
    });
    expect(resolved.tagCandidates.slice(0, 3)).toEqual(['v2.32.3', '2.32.3', 'requests@2.32.3']);
    expect(registry.hits.at(-1)!.userAgent).toMatch(/docdex/);
  });

  it('asks for an exact version directly and reads that release’s own links', async () => {
    const before = registry.hits.length;
    const resolved = await resolve('requests', '2.31.0');
    expect(registry.hits.slice(before).map((h) => h.path)).toEqual(['/pypi/requests/2.31.0/json']);
    expect(resolved.version).toBe('2.31.0');
    expect(resolved.repository).toEqual({ url: 'https://github.com/psf/requests' });
    expect(resolved.documentation).toBe('https://requests.readthedocs.io/en/v2.31.0/');
  });

  it('picks the newest release in a range, skipping yanked releases and pre-releases', async () => {
    expect((await resolve('requests', '2.32')).version).toBe('2.32.3');
    expect((await resolve('requests', '~=2.31')).version).toBe('2.32.3');
    expect((await resolve('requests', '>=2.30,<2.32')).version).toBe('2.31.0');
    expect((await resolve('requests', '==2.32.*')).version).toBe('2.32.3');
    expect((await resolve('requests', '^2.31.0')).version).toBe('2.32.3');
  });

  it('answers version_not_found with the newest published releases', async () => {
    const error = await failure(resolve('requests', '3'));
    expect(error.code).toBe('version_not_found');
    expect(error.status).toBe(404);
    expect(error.message).toContain('2.32.3, 2.32.2, 2.31.0, 2.30.0, 2.33.0rc1');
    expect(error.details).toEqual([expect.objectContaining({ versions: ['2.32.3', '2.32.2', '2.31.0', '2.30.0', '2.33.0rc1'] })]);
  });

  it('normalises the name (PEP 503) for the request and keeps the display name (a difference of case is no alias)', async () => {
    const resolved = await resolve('Flask_SQLAlchemy');
    expect(registry.hits.at(-1)!.path).toBe('/pypi/flask-sqlalchemy/json');
    expect(resolved).toMatchObject({
      name: 'Flask-SQLAlchemy',
      version: '3.1.1',
      aliases: [],
      repository: { url: 'https://github.com/pallets-eco/flask-sqlalchemy' },
      documentation: 'https://flask-sqlalchemy.readthedocs.io/',
    });
    expect(resolved.homepage).toBeUndefined();
  });

  it('takes a forge home_page as the repository, not as a docs site, and orders calendar versions', async () => {
    const resolved = await resolve('tzdatakit', '2024');
    expect(resolved).toMatchObject({ version: '2024.2', repository: { url: 'https://github.com/example-org/tzdatakit' } });
    expect(resolved.homepage).toBeUndefined();
    expect(resolved.documentation).toBeUndefined();
  });

  it('answers package_not_found for a project PyPI does not have', async () => {
    const error = await failure(resolve('no-such-project'));
    expect([error.code, error.status]).toEqual(['package_not_found', 404]);
    expect(error.message).toContain('no-such-project');
  });

  it('refuses a name PyPI cannot have before asking anything', async () => {
    const before = registry.hits.length;
    const error = await failure(resolve('../../admin'));
    expect(error.code).toBe('validation_error');
    expect(registry.hits.length).toBe(before);
  });

  it('answers bad_gateway for a malformed document or one that is not JSON, never a crash', async () => {
    expect((await failure(resolve('broken'))).code).toBe('bad_gateway');
    expect((await failure(resolve('notjson'))).code).toBe('bad_gateway');
  });

  it('answers registry_unavailable (503) with the URL when PyPI is down or unreachable', async () => {
    const down = await failure(resolve('down'));
    expect([down.code, down.status]).toEqual(['registry_unavailable', 503]);
    expect(down.message).toContain(`${registry.base}/pypi/down/json`);
    const port = await closedPort();
    const unreachable = await failure(resolvePackage(config({ PYPI_URL: `http://127.0.0.1:${port}` }), { ecosystem: 'pypi', name: 'requests' }));
    expect([unreachable.code, unreachable.status]).toEqual(['registry_unavailable', 503]);
    expect(unreachable.message).toContain(`http://127.0.0.1:${port}/pypi/requests/json`);
  });

  it('trusts the registry the settings name, wherever it is, and holds anything else to the outbound policy', async () => {
    // PYPI_URL is the operator's choice, like a CRAWL_ALLOW_HOSTS entry: a mirror on an internal address works.
    const configured = await resolvePackage(config({ CRAWL_ALLOW_HOSTS: '' }), { ecosystem: 'pypi', name: 'requests' });
    expect(configured.version).toBe('2.32.3');
    // What a registry points to is not trusted with it: a tarball on another internal address is refused.
    const elsewhere = await failure(
      fetchTarballReadme(config({ CRAWL_ALLOW_HOSTS: '', NPM_REGISTRY_URL: 'https://registry.example/', PYPI_URL: 'https://pypi.example' }), `${registry.base}/files/x.tgz`),
    );
    expect(elsewhere.code).toBe('registry_unavailable');
    expect(elsewhere.message).toMatch(/loopback/);
    expect(elsewhere.hint).toMatch(/CRAWL_ALLOW_HOSTS/);
  });
});
