import { asTable, manifestInvalid, parseTomlManifest } from './manifest-file.js';
import { normalisePythonName } from './python-requirements.js';

/**
 * The exact versions poetry.lock and uv.lock pin. Both are TOML with one `[[package]]` table per package.
 * uv.lock also records which packages are the project's own (`source = { virtual = "." }` or
 * `{ editable = "." }`, workspace members likewise) and what each depends on, so its direct dependencies
 * are those the project's own packages list; poetry.lock says nothing of that (pyproject.toml does).
 */

export interface LockedPackage {
  /** PEP 503 normalised. */
  name: string;
  version: string;
  /** uv.lock: listed by one of the project's own packages; poetry.lock: unknown here (false). */
  direct: boolean;
  manifest: string;
}

function lockPackages(file: string, document: Record<string, unknown>): Array<Record<string, unknown>> {
  const packages = document['package'];
  if (packages === undefined) return [];
  if (!Array.isArray(packages)) throw manifestInvalid(file, '`package` is not an array of tables');
  return packages.map((entry, i) => {
    const table = asTable(entry);
    if (table === undefined || typeof table['name'] !== 'string' || table['name'].trim() === '') throw manifestInvalid(file, `package ${i + 1} has no name`);
    return table;
  });
}

function versionOf(file: string, table: Record<string, unknown>): string {
  const version = table['version'];
  if (typeof version !== 'string' || version.trim() === '') throw manifestInvalid(file, `package ${JSON.stringify(table['name'])} has no version`);
  return version.trim();
}

/** poetry.lock: every package from a package index (git, path, file and url sources are not on PyPI). */
export function parsePoetryLock(text: string): LockedPackage[] {
  const file = 'poetry.lock';
  const out: LockedPackage[] = [];
  for (const table of lockPackages(file, parseTomlManifest(file, text))) {
    const source = asTable(table['source']);
    const version = versionOf(file, table);
    if (source !== undefined && source['type'] !== 'legacy') continue;
    out.push({ name: normalisePythonName(table['name'] as string), version, direct: false, manifest: file });
  }
  return out;
}

/** A uv.lock source: the project's own package, one from an index, or one from elsewhere (git, a path, a URL). */
function uvSourceKind(file: string, table: Record<string, unknown>): 'own' | 'index' | 'other' {
  const source = table['source'];
  if (source === undefined) return 'index';
  const fields = asTable(source);
  if (fields === undefined) throw manifestInvalid(file, `package ${JSON.stringify(table['name'])} has a source that is not a table`);
  if (fields['virtual'] !== undefined || fields['editable'] !== undefined) return 'own';
  return fields['registry'] !== undefined ? 'index' : 'other';
}

/** The names one of the project's own packages depends on: `dependencies`, its extras and its dev groups. */
function uvDependencyNames(file: string, table: Record<string, unknown>): string[] {
  const lists: unknown[] = [table['dependencies']];
  for (const key of ['optional-dependencies', 'dev-dependencies']) {
    const groups = table[key];
    if (groups === undefined) continue;
    const groupTable = asTable(groups);
    if (groupTable === undefined) throw manifestInvalid(file, `package ${JSON.stringify(table['name'])}'s ${key} is not a table`);
    lists.push(...Object.values(groupTable));
  }
  const names: string[] = [];
  for (const list of lists) {
    if (list === undefined) continue;
    if (!Array.isArray(list)) throw manifestInvalid(file, `package ${JSON.stringify(table['name'])} has a dependency list that is not an array`);
    for (const entry of list) {
      const name = asTable(entry)?.['name'];
      if (typeof name !== 'string') throw manifestInvalid(file, `package ${JSON.stringify(table['name'])} has a dependency without a name`);
      names.push(normalisePythonName(name));
    }
  }
  return names;
}

/** uv.lock: every package from an index, direct when one of the project's own packages names it. */
export function parseUvLock(text: string): LockedPackage[] {
  const file = 'uv.lock';
  const tables = lockPackages(file, parseTomlManifest(file, text));
  const kinds = tables.map((table) => uvSourceKind(file, table));
  const direct = new Set(tables.flatMap((table, i) => (kinds[i] === 'own' ? uvDependencyNames(file, table) : [])));
  const out: LockedPackage[] = [];
  tables.forEach((table, i) => {
    if (kinds[i] !== 'index') return;
    const name = normalisePythonName(table['name'] as string);
    out.push({ name, version: versionOf(file, table), direct: direct.has(name), manifest: file });
  });
  return out;
}
