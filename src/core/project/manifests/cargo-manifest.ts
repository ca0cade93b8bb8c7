import { asTable, manifestInvalid, parseTomlManifest, tableAt } from './manifest-file.js';

/**
 * One Cargo.toml: its package name, its workspace section, and the crates.io dependencies it names in
 * `[dependencies]`, `[dev-dependencies]`, `[build-dependencies]` and their `[target.<cfg>.…]` forms. A
 * renamed dependency (`alias = { package = "real" }`) is the real crate; `workspace = true` takes the entry
 * of the root's `[workspace.dependencies]`; path and git dependencies and other registries are skipped
 * (crates.io serves none of them).
 */

export interface CargoRequirement {
  /** The crate's name on crates.io. */
  name: string;
  /** The requirement as node-semver reads it (Cargo's bare `1.2` is `^1.2`), or null for none. */
  range: string | null;
  /** An exact `=1.2.3` requirement, or null. */
  version: string | null;
  manifest: string;
}

export interface CargoManifest {
  file: string;
  packageName?: string;
  workspace?: { members: string[]; exclude: string[]; dependencies: Record<string, unknown> };
  requirements: CargoRequirement[];
  notes: string[];
}

const SECTIONS = ['dependencies', 'dev-dependencies', 'build-dependencies'] as const;

/** Cargo's requirement syntax (`1.2`, `>=1, <2`, `=1.2.3`, `~1`) in node-semver's spelling. */
export function cargoRangeToSemver(requirement: string): string | null {
  const parts = requirement
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (parts.length === 0 || parts.every((p) => p === '*')) return null;
  // A bare version in Cargo is a caret requirement; node-semver would read it as an exact or x-range.
  return parts.map((p) => (/^\d/.test(p) ? `^${p}` : p)).join(' ');
}

function exactOf(requirement: string): string | null {
  const match = /^=\s*(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]*)?)$/.exec(requirement.trim());
  return match ? match[1]! : null;
}

function stringList(file: string, value: unknown, where: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw manifestInvalid(file, `${where} is not a list of strings`);
  return value as string[];
}

interface Context {
  file: string;
  /** The root manifest's `[workspace.dependencies]`, for `workspace = true`. */
  inherited: Record<string, unknown> | undefined;
  notes: string[];
}

/** The table a dependency entry means: a bare string is `{ version }`; `workspace = true` is the inherited entry. */
function entryTable(context: Context, key: string, value: unknown, where: string): Record<string, unknown> {
  if (typeof value === 'string') return { version: value };
  const table = asTable(value);
  if (table === undefined) throw manifestInvalid(context.file, `${where} is neither a version requirement nor a table`);
  if (table['workspace'] !== true) return table;
  const inherited = context.inherited?.[key];
  if (inherited === undefined) throw manifestInvalid(context.file, `${where} has workspace = true, but [workspace.dependencies] has no ${key}`);
  const base = typeof inherited === 'string' ? { version: inherited } : asTable(inherited);
  if (base === undefined) throw manifestInvalid(context.file, `workspace.dependencies.${key} is neither a version requirement nor a table`);
  return base;
}

function requirementOf(context: Context, key: string, value: unknown, where: string): CargoRequirement | null {
  const table = entryTable(context, key, value, where);
  if (table['path'] !== undefined || table['git'] !== undefined) return null;
  if (table['registry'] !== undefined || table['registry-index'] !== undefined) {
    context.notes.push(`${context.file}: ${key} comes from another registry than crates.io; skipped`);
    return null;
  }
  const name = table['package'] ?? key;
  const version = table['version'];
  if (typeof name !== 'string' || name.trim() === '') throw manifestInvalid(context.file, `${where}.package is not a crate name`);
  if (version !== undefined && typeof version !== 'string') throw manifestInvalid(context.file, `${where}.version is not a string`);
  return { name: name.trim(), range: version === undefined ? null : cargoRangeToSemver(version), version: version === undefined ? null : exactOf(version), manifest: context.file };
}

/** The dependency tables of a manifest: the three sections, and each `[target.<cfg>]`'s. */
function dependencyTables(file: string, document: Record<string, unknown>): Array<[string, Record<string, unknown>]> {
  const tables: Array<[string, Record<string, unknown>]> = [];
  const add = (parent: Record<string, unknown> | undefined, prefix: string) => {
    for (const section of SECTIONS) {
      // Cargo still reads the old underscore spellings (`dev_dependencies`).
      for (const key of new Set([section, section.replace('-', '_')])) {
        const table = tableAt(file, parent, key, `[${prefix}${key}]`);
        if (table !== undefined) tables.push([`${prefix}${key}`, table]);
      }
    }
  };
  add(document, '');
  for (const [cfg, target] of Object.entries(tableAt(file, document, 'target', '[target]') ?? {})) {
    add(asTable(target) ?? {}, `target.${cfg}.`);
  }
  return tables;
}

function readWorkspace(file: string, document: Record<string, unknown>): CargoManifest['workspace'] {
  const workspace = tableAt(file, document, 'workspace', '[workspace]');
  if (workspace === undefined) return undefined;
  return {
    members: stringList(file, workspace['members'], 'workspace.members'),
    exclude: stringList(file, workspace['exclude'], 'workspace.exclude'),
    dependencies: tableAt(file, workspace, 'dependencies', '[workspace.dependencies]') ?? {},
  };
}

/**
 * Parses one Cargo.toml. `inherited` is the workspace root's `[workspace.dependencies]` (for the root itself,
 * its own). `manifest_invalid` names the file and the entry that is wrong.
 */
export function parseCargoManifest(file: string, text: string, inherited?: Record<string, unknown>): CargoManifest {
  const document = parseTomlManifest(file, text);
  const workspace = readWorkspace(file, document);
  const pkg = tableAt(file, document, 'package', '[package]');
  const packageName = pkg?.['name'];
  if (pkg !== undefined && (typeof packageName !== 'string' || packageName.trim() === '')) throw manifestInvalid(file, 'package.name is not a crate name');
  const context: Context = { file, inherited: inherited ?? workspace?.dependencies, notes: [] };
  const requirements: CargoRequirement[] = [];
  for (const [where, table] of dependencyTables(file, document)) {
    for (const [key, value] of Object.entries(table)) {
      const requirement = requirementOf(context, key, value, `${where}.${key}`);
      if (requirement !== null) requirements.push(requirement);
    }
  }
  return { file, ...(typeof packageName === 'string' ? { packageName: packageName.trim() } : {}), ...(workspace === undefined ? {} : { workspace }), requirements, notes: context.notes };
}
