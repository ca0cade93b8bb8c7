import type { ManifestReadResult, ProjectDependency } from '../dependency.js';
import { listManifestDir, readManifestFile } from './manifest-file.js';
import { parsePoetryLock, parseUvLock } from './python-locks.js';
import type { LockedPackage } from './python-locks.js';
import { parsePyproject } from './python-pyproject.js';
import { readRequirementsFiles } from './python-requirements.js';
import type { PythonRequirement } from './python-requirements.js';

/** `requirements.txt`, `requirements-dev.txt`, `requirements_test.txt`… at the project root. */
const REQUIREMENTS_FILE = /^requirements[^/\\]*\.txt$/i;

/** The requirement named for each package, first mention kept (pyproject before requirements files). */
function byName(requirements: PythonRequirement[]): Map<string, PythonRequirement> {
  const map = new Map<string, PythonRequirement>();
  for (const requirement of requirements) {
    const known = map.get(requirement.name);
    if (known === undefined || (known.range === null && requirement.range !== null)) map.set(requirement.name, requirement);
  }
  return map;
}

/**
 * One dependency per name and version: each locked package (direct when the lockfile's own packages or the
 * manifests name it), then each named package no lockfile pins, at its `==` pin when it has one.
 */
function mergePython(named: Map<string, PythonRequirement>, locked: LockedPackage[]): ProjectDependency[] {
  const out = new Map<string, ProjectDependency>();
  const add = (dependency: ProjectDependency) => {
    const key = `${dependency.name}\0${dependency.version ?? ''}`;
    const known = out.get(key);
    if (known === undefined) out.set(key, dependency);
    else if (dependency.direct && !known.direct) known.direct = true;
  };
  const lockedNames = new Set(locked.map((p) => p.name));
  for (const pkg of locked) {
    const requirement = named.get(pkg.name);
    add({ ecosystem: 'pypi', name: pkg.name, version: pkg.version, range: requirement?.range ?? null, direct: pkg.direct || requirement !== undefined, manifest: pkg.manifest });
  }
  for (const requirement of named.values()) {
    if (lockedNames.has(requirement.name)) continue;
    add({ ecosystem: 'pypi', name: requirement.name, version: requirement.version, range: requirement.range, direct: true, manifest: requirement.manifest });
  }
  return [...out.values()];
}

/**
 * pyproject.toml (PEP 621 and Poetry), requirements*.txt, poetry.lock and uv.lock. Null when the directory
 * has none of them. A file that cannot be parsed is a `manifest_invalid` UserError naming the file.
 * Requirements files' `-r` includes are followed inside the project only; `-e` lines, URLs and paths are
 * skipped (PyPI does not serve them), and so are git and path packages in the lockfiles.
 */
export async function readPythonProject(root: string): Promise<ManifestReadResult | null> {
  const files: string[] = [];
  const named: PythonRequirement[] = [];
  const pyproject = await readManifestFile(root, 'pyproject.toml');
  if (pyproject !== null) {
    files.push('pyproject.toml');
    named.push(...parsePyproject(pyproject));
  }
  const requirementFiles = (await listManifestDir(root, '.')).filter((name) => REQUIREMENTS_FILE.test(name));
  const requirements = await readRequirementsFiles(root, requirementFiles);
  files.push(...requirements.files);
  named.push(...requirements.requirements);
  const locked: LockedPackage[] = [];
  for (const [file, parse] of [
    ['uv.lock', parseUvLock],
    ['poetry.lock', parsePoetryLock],
  ] as const) {
    const text = await readManifestFile(root, file);
    if (text === null) continue;
    files.push(file);
    locked.push(...parse(text));
  }
  if (files.length === 0) return null;
  const dependencies = mergePython(byName(named), locked);
  return { dependencies, files, ...(requirements.notes.length === 0 ? {} : { notes: requirements.notes }) };
}
