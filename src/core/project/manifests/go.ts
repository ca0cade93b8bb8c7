import type { ManifestReadResult } from '../dependency.js';

/** go.mod (its require blocks; `// indirect` marks transitive ones). Null when the directory has no go.mod. */
export async function readGoModule(_root: string): Promise<ManifestReadResult | null> {
  return null;
}
