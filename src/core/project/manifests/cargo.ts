import type { ManifestReadResult } from '../dependency.js';

/**
 * Cargo.toml (a package or a workspace and its members) with Cargo.lock. Null when the directory has no
 * Cargo.toml.
 */
export async function readCargoProject(_root: string): Promise<ManifestReadResult | null> {
  return null;
}
