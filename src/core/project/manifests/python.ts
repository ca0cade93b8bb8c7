import type { ManifestReadResult } from '../dependency.js';

/**
 * pyproject.toml (PEP 621 and Poetry), requirements*.txt, poetry.lock and uv.lock. Null when the directory
 * has none of them. A file that cannot be parsed is a `manifest_invalid` UserError naming the file.
 */
export async function readPythonProject(_root: string): Promise<ManifestReadResult | null> {
  return null;
}
