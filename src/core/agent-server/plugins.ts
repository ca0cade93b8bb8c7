import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { MGR_ALLOWLIST, MGR_EXCLUDED, MGR_INTERNAL_BASE, type MgrRoute } from '../agent/mgr-allowlist.js';
import { NotificationInput } from '../agent/notifications.js';
import { installPlugin, writeAtomic } from './plugin-files.js';

/**
 * The plugins of the agent server, installed into the global config's plugin folder at every start (opencode
 * loads `<config>/opencode/plugin/*.js` by itself). Their code is in `src/agent-plugins/` (see plugin-files.ts);
 * this module gives them their configuration:
 *
 * - `mgr-manager.js`: the `mgr` tool. It runs inside the agent-server process and holds the manager token
 *   there, so agents reach the allow-listed part of /api/internal without ever seeing a token. The path guard
 *   is the core's own module (`agent-plugins/docdex/mgr-guard.js`); the allow-list is passed as data.
 * - `mgr-cli-env.js`: puts the hosting CLI's token variables (from docdex's git credentials) into the
 *   agent-server process for host-side plugins and tools, and blanks them in every agent shell.
 *
 * Every plugin imports `docdex/mgr-internal.js`: its first import moves MGR_INTERNAL_TOKEN from process.env
 * to a process-global slot, because agent commands inherit the agent-server's environment and must not find
 * the token there.
 */

export const MGR_MANAGER_PLUGIN = 'mgr-manager.js';
export const MGR_CLI_ENV_PLUGIN = 'mgr-cli-env.js';

/** Hosting CLI variables (GitHub CLI) that mgr-cli-env.js manages. */
export const CLI_TOKEN_VARIABLES = ['GH_TOKEN', 'GITHUB_TOKEN'] as const;

/** Configuration of the installed mgr-manager.js: the core's allow-list and the notification route's limits. */
export function mgrManagerConfig(): { base: string; allowlist: readonly MgrRoute[]; excluded: readonly string[]; limits: ReturnType<typeof notificationLimits> } {
  return { base: MGR_INTERNAL_BASE, allowlist: MGR_ALLOWLIST, excluded: MGR_EXCLUDED, limits: notificationLimits() };
}

/** Configuration of the installed mgr-cli-env.js: the variables it always manages. */
export function mgrCliEnvConfig(): { managed: string[] } {
  return { managed: [...CLI_TOKEN_VARIABLES] };
}

/** The notification limits, read from the internal route's own schema so the tool cannot drift from it. */
export function notificationLimits(): { title: [number, number]; body: [number, number]; url: [number, number]; tag: number } {
  const field = (key: keyof typeof NotificationInput.shape) => {
    const inner = NotificationInput.shape[key];
    const schema = z.toJSONSchema(inner instanceof z.ZodOptional ? inner.unwrap() : inner) as { minLength?: number; maxLength?: number };
    return [schema.minLength ?? 0, schema.maxLength ?? 0] as [number, number];
  };
  return { title: field('title'), body: field('body'), url: field('url'), tag: field('tag')[1] };
}

/** Installs the generated plugins and their configuration; returns the plugin files' paths. */
export async function writeGeneratedPlugins(pluginDir: string): Promise<string[]> {
  await mkdir(pluginDir, { recursive: true, mode: 0o700 });
  return [await installPlugin(pluginDir, MGR_MANAGER_PLUGIN, mgrManagerConfig()), await installPlugin(pluginDir, MGR_CLI_ENV_PLUGIN, mgrCliEnvConfig())];
}

interface PackageJson {
  version?: string;
  dependencies?: Record<string, string>;
  packages?: Record<string, { dependencies?: Record<string, string> }>;
}

async function readJson(file: string): Promise<PackageJson | undefined> {
  try {
    const value = JSON.parse(await readFile(file, 'utf8')) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as PackageJson) : undefined;
  } catch {
    return undefined;
  }
}

/** The folder of an installed package as Node would find it from `from` (its package.json need not be exported). */
function packageDir(name: string, from: string): string {
  for (const base of createRequire(from).resolve.paths(name) ?? []) {
    const dir = path.join(base, ...name.split('/'));
    if (existsSync(path.join(dir, 'package.json'))) return dir;
  }
  throw new Error(`${name} is not installed (looked from ${from}).`);
}

/** `@opencode-ai/plugin` and what it loads at run time (zod), from docdex's own node_modules. */
export function pluginPackageSources(): Array<{ name: string; dir: string; version: string }> {
  const pluginDir = packageDir('@opencode-ai/plugin', fileURLToPath(import.meta.url));
  const zodDir = packageDir('zod', path.join(pluginDir, 'package.json'));
  const version = (dir: string) => (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as PackageJson).version ?? '';
  return [
    { name: '@opencode-ai/plugin', dir: pluginDir, version: version(pluginDir) },
    { name: 'zod', dir: zodDir, version: version(zodDir) },
  ];
}

/**
 * opencode npm-installs `@opencode-ai/plugin` into every config folder it loads. Without internet that
 * retries for over a minute. It skips the install when node_modules exists and package-lock.json already
 * names every dependency of package.json, so docdex seeds exactly that state from its own copy (same
 * pinned version). Entries the user added are kept; their install stays opencode's business.
 */
export async function seedPluginDependencies(configDir: string): Promise<{ copied: string[] }> {
  await mkdir(configDir, { recursive: true });
  const sources = pluginPackageSources();
  const plugin = sources[0]!;
  const pkgFile = path.join(configDir, 'package.json');
  const lockFile = path.join(configDir, 'package-lock.json');
  const pkg = (await readJson(pkgFile)) ?? {};
  if (pkg.dependencies?.[plugin.name] !== plugin.version) {
    await writeAtomic(pkgFile, `${JSON.stringify({ ...pkg, dependencies: { ...pkg.dependencies, [plugin.name]: plugin.version } }, null, 2)}\n`, 0o644);
  }
  const lock = (await readJson(lockFile)) ?? ({ lockfileVersion: 3, requires: true, packages: {} } as PackageJson);
  const root = lock.packages?.[''] ?? {};
  if (root.dependencies?.[plugin.name] === undefined) {
    const next = { ...lock, packages: { ...lock.packages, '': { ...root, dependencies: { ...root.dependencies, [plugin.name]: plugin.version } } } };
    await writeAtomic(lockFile, `${JSON.stringify(next, null, 2)}\n`, 0o644);
  }
  const gitignore = path.join(configDir, '.gitignore');
  if ((await readFile(gitignore, 'utf8').catch(() => undefined)) === undefined) {
    await writeAtomic(gitignore, ['node_modules', 'package.json', 'package-lock.json', 'bun.lock', '.gitignore'].join('\n'), 0o644);
  }
  const copied: string[] = [];
  for (const source of sources) {
    const target = path.join(configDir, 'node_modules', ...source.name.split('/'));
    const installed = await readJson(path.join(target, 'package.json'));
    if (installed?.version === source.version) continue;
    await rm(target, { recursive: true, force: true });
    await mkdir(path.dirname(target), { recursive: true });
    await cp(source.dir, target, { recursive: true, dereference: true });
    copied.push(source.name);
  }
  return { copied };
}
