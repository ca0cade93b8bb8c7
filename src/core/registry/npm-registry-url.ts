import { execa } from 'execa';
import type { RegistryConfig } from './types.js';

/**
 * The npm registry base URL: NPM_REGISTRY_URL when set, else what npm itself is configured with
 * (`npm config get registry`, so `.npmrc` mirrors and private registries work), else the public registry.
 * npm is asked once per process, with a short timeout: it is a hint, not a dependency.
 */

const PUBLIC_NPM_REGISTRY = 'https://registry.npmjs.org/';
const NPM_CONFIG_TIMEOUT_MS = 5_000;

let fromNpmConfig: Promise<string> | undefined;

function asBaseUrl(raw: string): string | undefined {
  try {
    const url = new URL(raw.trim());
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
    if (!url.pathname.endsWith('/')) url.pathname += '/';
    url.search = '';
    url.hash = '';
    return url.toString();
  } catch {
    return undefined;
  }
}

async function askNpm(): Promise<string> {
  try {
    const { stdout } = await execa('npm', ['config', 'get', 'registry'], { timeout: NPM_CONFIG_TIMEOUT_MS, reject: true, stdin: 'ignore' });
    return asBaseUrl(stdout) ?? PUBLIC_NPM_REGISTRY;
  } catch {
    return PUBLIC_NPM_REGISTRY;
  }
}

/** The registry base URL, always ending in `/`. */
export async function npmRegistryBase(config: RegistryConfig): Promise<string> {
  if (config.registry.npmUrl !== undefined) return asBaseUrl(config.registry.npmUrl) ?? PUBLIC_NPM_REGISTRY;
  fromNpmConfig ??= askNpm();
  return fromNpmConfig;
}
