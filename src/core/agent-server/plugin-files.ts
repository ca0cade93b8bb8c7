import { randomBytes } from 'node:crypto';
import { chmod, copyFile, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Installs docdex's opencode plugins into an agent server's plugin folder. The plugins are real, linted and
 * type-checked JavaScript modules in `src/agent-plugins/` (tsc copies them to `dist/agent-plugins/`), copied
 * byte for byte; what they need to know of this start (allow-lists, limits, paths, the nonce) is a generated
 * JSON file per plugin beside their helper modules in `<plugin dir>/docdex/`, a subfolder opencode does not
 * load plugins from (it loads `plugin/*.js` only).
 */

/** Where the plugin sources are: `src/agent-plugins` under vitest, `dist/agent-plugins` when built. */
export const PLUGIN_SOURCE_DIR = fileURLToPath(new URL('../../agent-plugins/', import.meta.url));
/** The plugins' helper modules and generated configuration, below the plugin folder. */
const PLUGIN_LIB_DIR = 'docdex';
/** Helper modules every plugin imports (relative to PLUGIN_SOURCE_DIR and to the plugin folder alike). */
const PLUGIN_LIB_FILES = ['config.js', 'mgr-internal.js', 'mgr-guard.js'] as const;

/** The generated configuration file of a plugin (`mgr-manager.js` → `docdex/mgr-manager.json`). */
export function pluginConfigPath(pluginDir: string, pluginFile: string): string {
  return path.join(pluginDir, PLUGIN_LIB_DIR, `${path.basename(pluginFile, '.js')}.json`);
}

export async function writeAtomic(file: string, content: string | Buffer, mode = 0o600): Promise<void> {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, content, { mode });
    await rename(tmp, file);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}

async function copyAtomic(from: string, to: string): Promise<void> {
  const tmp = `${to}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await copyFile(from, tmp);
    await chmod(tmp, 0o600);
    await rename(tmp, to);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}

/**
 * Writes one plugin: its helper modules and its configuration first, the plugin file last, so a plugin file
 * is never there without what it reads at load. Returns the plugin file's path.
 */
export async function installPlugin(pluginDir: string, pluginFile: string, config: unknown): Promise<string> {
  const libDir = path.join(pluginDir, PLUGIN_LIB_DIR);
  await mkdir(libDir, { recursive: true, mode: 0o700 });
  for (const name of PLUGIN_LIB_FILES) await copyAtomic(path.join(PLUGIN_SOURCE_DIR, PLUGIN_LIB_DIR, name), path.join(libDir, name));
  await writeAtomic(pluginConfigPath(pluginDir, pluginFile), `${JSON.stringify(config, null, 2)}\n`);
  const target = path.join(pluginDir, pluginFile);
  await copyAtomic(path.join(PLUGIN_SOURCE_DIR, pluginFile), target);
  return target;
}
