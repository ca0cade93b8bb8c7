import { UserError } from '../../errors.js';
import type { ManifestReadResult, ProjectDependency } from '../dependency.js';
import { readCargoProject } from './cargo.js';
import { readGoModule } from './go.js';
import { readNpmProject } from './npm.js';
import { readPythonProject } from './python.js';

const READERS = [readNpmProject, readPythonProject, readGoModule, readCargoProject];

/**
 * Every dependency the project at `root` names, from each ecosystem whose manifests are there. `root` must
 * be an absolute, existing directory (the caller checks it). No manifest at all is a `no_manifest` error.
 */
export async function readProjectDependencies(root: string): Promise<ManifestReadResult> {
  const found = (await Promise.all(READERS.map((read) => read(root)))).filter((r): r is ManifestReadResult => r !== null);
  if (found.length === 0) {
    throw new UserError(`No project manifest found in ${root}.`, { code: 'no_manifest' });
  }
  const dependencies: ProjectDependency[] = found.flatMap((r) => r.dependencies);
  const notes = found.flatMap((r) => r.notes ?? []);
  return { dependencies, files: found.flatMap((r) => r.files), skipped: found.flatMap((r) => r.skipped ?? []), ...(notes.length === 0 ? {} : { notes }) };
}
