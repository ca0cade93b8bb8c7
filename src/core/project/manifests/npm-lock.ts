import { parse as parseJsonc } from 'jsonc-parser';
import type { ParseError } from 'jsonc-parser';
import { addLocked, isExactVersion, isPackageName, isRecord, manifestInvalid, nonRegistryReason, splitIdent, stringField } from './npm-shared.js';
import type { LockedPackage, NpmLock, SkippedDependency } from './npm-shared.js';

/** package.json, package-lock.json (v1, v2, v3) and bun.lock: pure parsers of a file's text. */

/** A direct dependency as package.json names it: installed under `key`, the registry package `name`. */
export interface DirectSpecifier {
  key: string;
  name: string;
  range: string;
}

export interface PackageJsonDependencies {
  name: string | null;
  direct: DirectSpecifier[];
  skipped: SkippedDependency[];
}

const DEPENDENCY_FIELDS = ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'] as const;

function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw manifestInvalid(file, `not JSON (${(error as Error).message})`);
  }
}

/** One specifier: a registry range, an `npm:` alias, or a non-registry dependency (skipped with its reason). */
function readSpecifier(key: string, specifier: unknown, out: PackageJsonDependencies): void {
  if (typeof specifier !== 'string') throw manifestInvalid('package.json', `the version of ${JSON.stringify(key.slice(0, 100))} is not text`);
  const reason = nonRegistryReason(specifier);
  if (reason !== null) {
    out.skipped.push({ name: key, manifest: 'package.json', reason: `${reason} (${specifier.slice(0, 100)}), not a registry package` });
    return;
  }
  const alias = specifier.startsWith('npm:') ? splitIdent(specifier.slice(4)) : null;
  const name = alias?.name ?? (specifier.startsWith('npm:') ? specifier.slice(4) : key);
  if (!isPackageName(key) || !isPackageName(name)) {
    out.skipped.push({ name: key.slice(0, 100), manifest: 'package.json', reason: 'not a valid npm package name' });
    return;
  }
  if (out.direct.some((d) => d.key === key)) return;
  out.direct.push({ key, name, range: alias?.rest ?? (specifier.startsWith('npm:') ? '*' : specifier || '*') });
}

/** package.json's direct dependencies (all four fields; the first field naming a package wins). */
export function parsePackageJson(text: string): PackageJsonDependencies {
  const json = parseJson(text, 'package.json');
  if (!isRecord(json)) throw manifestInvalid('package.json', 'the top level is not an object');
  const out: PackageJsonDependencies = { name: stringField(json, 'name') ?? null, direct: [], skipped: [] };
  for (const field of DEPENDENCY_FIELDS) {
    const deps = Object.hasOwn(json, field) ? json[field] : undefined;
    if (deps === undefined) continue;
    if (!isRecord(deps)) throw manifestInvalid('package.json', `"${field}" is not an object`);
    for (const [key, specifier] of Object.entries(deps)) readSpecifier(key, specifier, out);
  }
  return out;
}

/** The installed name of a v2/v3 `packages` key: what follows its last `node_modules/`. */
function installedName(path: string): string | null {
  const at = path.lastIndexOf('node_modules/');
  return at < 0 ? null : path.slice(at + 'node_modules/'.length);
}

function readPackagesSection(packages: Record<string, unknown>, lock: NpmLock, seen: Map<string, LockedPackage>): void {
  for (const [path, entry] of Object.entries(packages)) {
    if (path === '') continue;
    if (!isRecord(entry)) throw manifestInvalid(lock.file, `"packages" entry ${JSON.stringify(path.slice(0, 100))} is not an object`);
    const installed = installedName(path);
    const version = stringField(entry, 'version');
    if (installed === null || entry.link === true || version === undefined) continue;
    const resolved = stringField(entry, 'resolved') ?? '';
    if (/^(git|file:)/.test(resolved)) continue;
    const name = stringField(entry, 'name') ?? installed;
    if (addLocked(seen, name, version) && path === `node_modules/${installed}`) lock.direct.set(installed, version);
  }
}

/** lockfileVersion 1: nested `dependencies`, each with its own nested ones. */
function readV1Dependencies(deps: Record<string, unknown>, lock: NpmLock, seen: Map<string, LockedPackage>, depth: number): void {
  if (depth > 64) throw manifestInvalid(lock.file, 'dependencies nest deeper than 64 levels');
  for (const [key, entry] of Object.entries(deps)) {
    if (!isRecord(entry)) throw manifestInvalid(lock.file, `dependency ${JSON.stringify(key.slice(0, 100))} is not an object`);
    const version = stringField(entry, 'version') ?? '';
    // An alias is recorded as `npm:real@1.2.3`.
    const alias = version.startsWith('npm:') ? splitIdent(version.slice(4)) : null;
    const name = alias?.name ?? key;
    const exact = alias?.rest ?? version;
    if (addLocked(seen, name, exact) && depth === 0) lock.direct.set(key, exact);
    const nested = entry.dependencies;
    if (nested !== undefined) {
      if (!isRecord(nested)) throw manifestInvalid(lock.file, `the dependencies of ${JSON.stringify(key.slice(0, 100))} are not an object`);
      readV1Dependencies(nested, lock, seen, depth + 1);
    }
  }
}

/** package-lock.json (or npm-shrinkwrap.json): v2/v3 `packages`, else v1 `dependencies`. */
export function parsePackageLock(text: string, file = 'package-lock.json'): NpmLock {
  const json = parseJson(text, file);
  if (!isRecord(json)) throw manifestInvalid(file, 'the top level is not an object');
  const lock: NpmLock = { file, direct: new Map(), packages: [] };
  const seen = new Map<string, LockedPackage>();
  if (Object.hasOwn(json, 'packages')) {
    if (!isRecord(json.packages)) throw manifestInvalid(file, '"packages" is not an object');
    readPackagesSection(json.packages, lock, seen);
  } else if (Object.hasOwn(json, 'dependencies')) {
    if (!isRecord(json.dependencies)) throw manifestInvalid(file, '"dependencies" is not an object');
    readV1Dependencies(json.dependencies, lock, seen, 0);
  } else if (typeof json.lockfileVersion !== 'number') {
    throw manifestInvalid(file, 'it has no "lockfileVersion", "packages" or "dependencies"');
  }
  lock.packages = [...seen.values()];
  return lock;
}

function bunPackages(json: Record<string, unknown>, file: string): Record<string, unknown> {
  const packages = Object.hasOwn(json, 'packages') ? json.packages : {};
  if (!isRecord(packages)) throw manifestInvalid(file, '"packages" is not an object');
  return packages;
}

/** bun.lock (text, JSONC): `packages` maps an install path to `[ "name@version", … ]`. */
export function parseBunLock(text: string, file = 'bun.lock'): NpmLock {
  const errors: ParseError[] = [];
  const json: unknown = parseJsonc(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) throw manifestInvalid(file, `not JSONC (error ${errors[0]!.error} at offset ${errors[0]!.offset})`);
  if (!isRecord(json)) throw manifestInvalid(file, 'the top level is not an object');
  const lock: NpmLock = { file, direct: new Map(), packages: [] };
  const seen = new Map<string, LockedPackage>();
  for (const [path, entry] of Object.entries(bunPackages(json, file))) {
    if (!Array.isArray(entry) || typeof entry[0] !== 'string') throw manifestInvalid(file, `package ${JSON.stringify(path.slice(0, 100))} is not ["name@version", …]`);
    const ident = splitIdent(entry[0]);
    if (ident === null || !isExactVersion(ident.rest)) continue;
    // A nested install path is `parent/child`; a top-level one is the package's own name.
    if (addLocked(seen, ident.name, ident.rest) && isPackageName(path)) lock.direct.set(path, ident.rest);
  }
  lock.packages = [...seen.values()];
  return lock;
}
