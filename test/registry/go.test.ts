import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { parseLibrarySpec } from '../../src/core/library-spec.js';
import { escapeModulePath } from '../../src/core/registry/go.js';
import { resolvePackage } from '../../src/core/registry/index.js';
import { failure, fixture, serveRegistry } from './registry-server.js';
import type { RegistryServer } from './registry-server.js';

/**
 * A Go module proxy (the GOPROXY protocol) on loopback, answering with the response shapes proxy.golang.org
 * gives (test/fixtures/registry/go-*): `.info` with and without `Origin`, `@v/list` as text, 404 as text.
 */

let proxy: RegistryServer;
const text = (body: string) => ({ body, type: 'text/plain; charset=UTF-8' });

beforeAll(async () => {
  proxy = await serveRegistry(
    () => ({
      '/github.com/spf13/cobra/@v/list': text(fixture('go-cobra-list.txt')),
      '/github.com/spf13/cobra/@v/v1.8.1.info': { body: fixture('go-cobra-v1.8.1.info') },
      '/github.com/spf13/cobra/@v/v1.7.0.info': { body: fixture('go-cobra-v1.8.1.info').replaceAll('1.8.1', '1.7.0') },
      '/github.com/spf13/cobra/@v/v1.9.0-rc.1.info': { body: fixture('go-cobra-v1.8.1.info').replaceAll('1.8.1', '1.9.0-rc.1') },
      '/github.com/spf13/cobra/@latest': { body: fixture('go-cobra-v1.8.1.info') },
      '/github.com/!burnt!sushi/toml/@v/v1.6.0.info': { body: fixture('go-burntsushi-toml-v1.6.0.info') },
      '/github.com/pkg/errors/@v/v0.9.1.info': { body: fixture('go-pkg-errors-v0.9.1.info') },
      '/github.com/acme/mono/tools/v2/@v/v2.1.0.info': { body: '{"Version":"v2.1.0","Time":"2024-01-02T03:04:05Z"}' },
      '/github.com/docker/docker/@v/v27.3.1+incompatible.info': { body: '{"Version":"v27.3.1+incompatible","Time":"2024-09-20T11:01:03Z"}' },
      '/gopkg.in/yaml.v3/@v/v3.0.1.info': { body: '{"Version":"v3.0.1","Time":"2022-05-27T08:35:30Z"}' },
      '/cloud.google.com/go/storage/@v/v1.43.0.info': { body: fixture('go-gcloud-storage-v1.43.0.info') },
      '/example.com/odd/@latest': { body: '{"Version":"1.0"}' },
      '/example.com/nolist/@v/list': text(''),
    }),
    { status: 404, ...text(fixture('go-not-found.txt')) },
  );
});
afterAll(() => proxy?.close());

const config = (extra: Record<string, string> = {}) => loadConfig({ HOME: os.tmpdir(), GO_PROXY_URL: proxy.base, CRAWL_ALLOW_HOSTS: '127.0.0.1', ...extra });
const resolve = (name: string, version?: string) => resolvePackage(config(), { ecosystem: 'go', name, ...(version === undefined ? {} : { version }) });

describe('Go module resolution', () => {
  it('takes the repository and the tag from the version’s Origin', async () => {
    expect(await resolve('github.com/spf13/cobra', 'v1.8.1')).toEqual({
      ecosystem: 'go',
      name: 'github.com/spf13/cobra',
      version: 'v1.8.1',
      aliases: ['cobra'],
      repository: { url: 'https://github.com/spf13/cobra' },
      tagCandidates: ['v1.8.1'],
    });
    expect(proxy.hits.at(-1)).toEqual({ path: '/github.com/spf13/cobra/@v/v1.8.1.info', userAgent: expect.stringMatching(/docdex/) });
  });

  it('picks the newest listed version a range allows, and the latest without one', async () => {
    expect((await resolve('github.com/spf13/cobra', 'v1.7')).version).toBe('v1.7.0');
    expect((await resolve('github.com/spf13/cobra', '^1.2')).version).toBe('v1.8.1');
    expect((await resolve('github.com/spf13/cobra', '>=1.9.0-rc.0')).version).toBe('v1.9.0-rc.1');
    expect((await resolve('github.com/spf13/cobra', '1.8.1')).version).toBe('v1.8.1');
    expect((await resolve('github.com/spf13/cobra')).version).toBe('v1.8.1');
    expect(proxy.hits.at(-1)?.path).toBe('/github.com/spf13/cobra/@latest');
  });

  it('escapes capital letters in module paths as the protocol says', async () => {
    expect(escapeModulePath('github.com/BurntSushi/toml')).toBe('github.com/!burnt!sushi/toml');
    const resolved = await resolve('github.com/BurntSushi/toml', 'v1.6.0');
    expect(resolved.repository).toEqual({ url: 'https://github.com/BurntSushi/toml' });
    // An Origin without Ref: the tag is the version itself.
    expect(resolved.tagCandidates).toEqual(['v1.6.0']);
  });

  it('reads a nested module’s folder and tag prefix from Origin', async () => {
    expect(await resolve('cloud.google.com/go/storage', 'v1.43.0')).toMatchObject({
      repository: { url: 'https://github.com/googleapis/google-cloud-go', directory: 'storage' },
      tagCandidates: ['storage/v1.43.0', 'v1.43.0'],
    });
  });

  it('without Origin, reads the repository off the module path of a known forge', async () => {
    expect(await resolve('github.com/pkg/errors', 'v0.9.1')).toMatchObject({ repository: { url: 'https://github.com/pkg/errors' }, tagCandidates: ['v0.9.1'] });
    expect(await resolve('github.com/acme/mono/tools/v2', 'v2.1.0')).toMatchObject({
      repository: { url: 'https://github.com/acme/mono', directory: 'tools' },
      tagCandidates: ['tools/v2.1.0', 'v2.1.0'],
    });
    expect(await resolve('github.com/docker/docker', 'v27.3.1+incompatible')).toMatchObject({ version: 'v27.3.1+incompatible', tagCandidates: ['v27.3.1'] });
    expect(await resolve('gopkg.in/yaml.v3', 'v3.0.1')).toMatchObject({ repository: { url: 'https://github.com/go-yaml/yaml' }, tagCandidates: ['v3.0.1'] });
  });

  it('links pkg.go.dev at the version only for the public proxy', async () => {
    expect((await resolve('github.com/spf13/cobra', 'v1.8.1')).documentation).toBeUndefined();
    expect(loadConfig({ HOME: os.tmpdir() }).registry.goProxyUrl).toBe('https://proxy.golang.org');
  });

  it('answers package_not_found and version_not_found from the proxy’s 404s', async () => {
    const missing = await failure(resolve('github.com/nosuch/module'));
    expect([missing.code, missing.status]).toEqual(['package_not_found', 404]);
    const missingExact = await failure(resolve('github.com/nosuch/module', 'v1.0.0'));
    expect(missingExact.code).toBe('package_not_found');
    const version = await failure(resolve('github.com/spf13/cobra', 'v9.9.9'));
    expect([version.code, version.status]).toEqual(['version_not_found', 404]);
    expect(version.message).toContain('v1.8.1, v1.8.0, v1.7.0');
    expect(version.hint).toContain('go:github.com/spf13/cobra@v1.8.1');
    const range = await failure(resolve('github.com/spf13/cobra', '^2'));
    expect(range.code).toBe('version_not_found');
    const none = await failure(resolve('example.com/nolist', '^1'));
    expect(none.message).toContain('it has no published releases');
  });

  it('refuses a module path that is not one, and an answer that is not the protocol’s', async () => {
    for (const name of ['../etc/passwd', 'github.com/x/../y', 'nodot/x', 'github.com/x y/z', 'https://github.com/x/y']) {
      const error = await failure(resolve(name));
      expect(error.code, name).toBe('validation_error');
    }
    const odd = await failure(resolve('example.com/odd'));
    expect(odd.code).toBe('bad_gateway');
  });

  it('trusts the proxy GO_PROXY_URL names, wherever it is, and says when it is down', async () => {
    // GO_PROXY_URL is the operator's choice, like a CRAWL_ALLOW_HOSTS entry: a proxy on an internal address works.
    const configured = await resolvePackage(config({ CRAWL_ALLOW_HOSTS: '' }), { ecosystem: 'go', name: 'github.com/spf13/cobra', version: 'v1.8.1' });
    expect(configured.version).toBe('v1.8.1');
    const refused = await failure(resolvePackage(config({ CRAWL_ALLOW_HOSTS: '', GO_PROXY_URL: 'https://proxy.example' }), { ecosystem: 'go', name: 'github.com/spf13/cobra' }));
    expect(refused.code).toBe('registry_unavailable');
    expect(refused.hint).toMatch(/GO_PROXY_URL|CRAWL_ALLOW_HOSTS/);
  });

  it('parses go: specs for docdex add', () => {
    expect(parseLibrarySpec('go:github.com/spf13/cobra@v1.8.1')).toEqual({
      kind: 'package',
      spec: 'go:github.com/spf13/cobra@v1.8.1',
      ecosystem: 'go',
      name: 'github.com/spf13/cobra',
      version: 'v1.8.1',
    });
    expect(parseLibrarySpec('go:golang.org/x/sync')).toMatchObject({ ecosystem: 'go', name: 'golang.org/x/sync' });
    expect(parseLibrarySpec('GO:gopkg.in/yaml.v3@latest')).toMatchObject({ ecosystem: 'go', name: 'gopkg.in/yaml.v3' });
    expect(() => parseLibrarySpec('go:not a module')).toThrow(/spaces/);
    expect(() => parseLibrarySpec('go:../x@v1.0.0')).toThrow(/not a valid go package name/);
    expect(() => parseLibrarySpec('go:github.com/x/y@not-a-version')).toThrow(/not a version/);
  });
});
