import { asTable, manifestInvalid, parseTomlManifest } from './manifest-file.js';

/**
 * Cargo.lock: one `[[package]]` per crate and version. A crate from crates.io has
 * `source = "registry+https://github.com/rust-lang/crates.io-index"` (or the sparse index); the workspace's own
 * crates and path crates have no source; git crates and other registries have theirs. Each package lists
 * what it depends on as `"name"`, or `"name version"` (with ` (source)`) when several versions are locked, so
 * the crates the project's own packages list are exactly its direct dependencies.
 */

const FILE = 'Cargo.lock';
const CRATES_IO_SOURCES = new Set(['registry+https://github.com/rust-lang/crates.io-index', 'sparse+https://index.crates.io/']);

export interface LockedCrate {
  name: string;
  version: string;
  direct: boolean;
}

interface LockEntry {
  name: string;
  version: string;
  source: 'crates-io' | 'local' | 'other';
  dependencies: Array<{ name: string; version?: string }>;
}

function sourceKind(source: unknown, name: string): LockEntry['source'] {
  if (source === undefined) return 'local';
  if (typeof source !== 'string') throw manifestInvalid(FILE, `package ${JSON.stringify(name)} has a source that is not a string`);
  return CRATES_IO_SOURCES.has(source) ? 'crates-io' : 'other';
}

function lockDependencies(value: unknown, name: string): LockEntry['dependencies'] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw manifestInvalid(FILE, `package ${JSON.stringify(name)} has dependencies that are not a list`);
  return value.map((entry) => {
    if (typeof entry !== 'string' || entry.trim() === '') throw manifestInvalid(FILE, `package ${JSON.stringify(name)} has a dependency that is not "name [version]"`);
    const [dependency, version] = entry.trim().split(/\s+/);
    return { name: dependency!, ...(version === undefined ? {} : { version }) };
  });
}

function lockEntries(text: string): LockEntry[] {
  const packages = parseTomlManifest(FILE, text)['package'];
  if (packages === undefined) return [];
  if (!Array.isArray(packages)) throw manifestInvalid(FILE, '`package` is not an array of tables');
  return packages.map((entry, i) => {
    const table = asTable(entry);
    const name = table?.['name'];
    const version = table?.['version'];
    if (typeof name !== 'string' || name === '') throw manifestInvalid(FILE, `package ${i + 1} has no name`);
    if (typeof version !== 'string' || version === '') throw manifestInvalid(FILE, `package ${JSON.stringify(name)} has no version`);
    return { name, version, source: sourceKind(table!['source'], name), dependencies: lockDependencies(table!['dependencies'], name) };
  });
}

/**
 * The crates.io crates Cargo.lock pins, direct when one of the project's own (source-less) packages lists
 * them. `directNames` (the crates the manifests name) decides for a lockfile without the project's own packages.
 */
export function parseCargoLock(text: string, directNames: ReadonlySet<string>): LockedCrate[] {
  const entries = lockEntries(text);
  const own = entries.filter((e) => e.source === 'local');
  const listed = new Set(own.flatMap((e) => e.dependencies.map((d) => `${d.name}@${d.version ?? '*'}`)));
  const versionsOf = new Map<string, number>();
  for (const e of entries) if (e.source === 'crates-io') versionsOf.set(e.name, (versionsOf.get(e.name) ?? 0) + 1);
  const isDirect = (e: LockEntry): boolean => {
    if (own.length === 0) return directNames.has(e.name);
    return listed.has(`${e.name}@${e.version}`) || (listed.has(`${e.name}@*`) && versionsOf.get(e.name) === 1);
  };
  return entries.filter((e) => e.source === 'crates-io').map((e) => ({ name: e.name, version: e.version, direct: isDirect(e) }));
}
