import type { ManifestReadResult } from '../dependency.js';

/**
 * package.json with package-lock.json, pnpm-lock.yaml, yarn.lock or bun.lock. Null when the directory has no
 * package.json. A lockfile that cannot be parsed is a `manifest_invalid` UserError naming the file.
 */
export async function readNpmProject(_root: string): Promise<ManifestReadResult | null> {
  return null;
}
