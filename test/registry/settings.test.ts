import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/core/config.js';
import { npmRegistryBase } from '../../src/core/registry/npm-registry-url.js';

/** The registry settings: NPM_REGISTRY_URL, PYPI_URL, CRATES_URL, GO_PROXY_URL, and npm's own configuration when unset. */

describe('registry settings', () => {
  it('defaults to pypi.org and crates.io, and leaves npm to its own configuration', () => {
    expect(loadConfig({ HOME: '/home/u' }).registry).toEqual({ pypiUrl: 'https://pypi.org', cratesUrl: 'https://crates.io', goProxyUrl: 'https://proxy.golang.org' });
    expect(loadConfig({ NPM_REGISTRY_URL: 'https://npm.corp/', PYPI_URL: 'http://127.0.0.1:8080', CRATES_URL: 'https://crates.corp', GO_PROXY_URL: 'https://goproxy.corp/' }).registry).toEqual({
      npmUrl: 'https://npm.corp/',
      pypiUrl: 'http://127.0.0.1:8080',
      cratesUrl: 'https://crates.corp',
      goProxyUrl: 'https://goproxy.corp/',
    });
  });

  it('refuses a registry URL that is not http(s), naming the variable', () => {
    for (const name of ['NPM_REGISTRY_URL', 'PYPI_URL', 'CRATES_URL', 'GO_PROXY_URL']) {
      let error: unknown;
      try {
        loadConfig({ [name]: 'ftp://mirror.example/' });
      } catch (e) {
        error = e;
      }
      expect(error, name).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).message).toContain(name);
    }
  });

  it('takes NPM_REGISTRY_URL over npm, and npm’s configured registry (a mirror in .npmrc or npm_config_registry) when unset', async () => {
    expect(await npmRegistryBase(loadConfig({ NPM_REGISTRY_URL: 'https://npm.corp/api/npm' }))).toBe('https://npm.corp/api/npm/');
    const saved = process.env.npm_config_registry;
    process.env.npm_config_registry = 'https://mirror.example/npm/';
    try {
      expect(await npmRegistryBase(loadConfig({}))).toBe('https://mirror.example/npm/');
    } finally {
      if (saved === undefined) delete process.env.npm_config_registry;
      else process.env.npm_config_registry = saved;
    }
  }, 30_000);
});
