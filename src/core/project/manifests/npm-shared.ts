import semver from 'semver';
import { UserError } from '../../errors.js';
export type { SkippedDependency } from '../dependency.js';

/**
 * What the npm-family lockfile readers share: the one error for a file that cannot be read, which
 * dependency specifiers name registry packages, and how a lockfile names a package at a version.
 */

/** A registry package a lockfile installs, at one exact version. */
export interface LockedPackage {
  name: string;
  version: string;
}

/** What one lockfile says: the version the project itself gets for each direct name, and every package installed. */
export interface NpmLock {
  file: string;
  /** Direct dependency name → the exact version installed for the project root. */
  direct: Map<string, string>;
  /** Every registry package installed (direct ones included), each name and version once. */
  packages: LockedPackage[];
}

const MAX_DETAIL = 200;

/** The one error for a manifest or lockfile that cannot be read: names the file and what is wrong. */
export function manifestInvalid(file: string, what: string): UserError {
  return new UserError(`${file} is not a valid ${describe(file)}: ${what.slice(0, MAX_DETAIL)}.`, { code: 'manifest_invalid' });
}

function describe(file: string): string {
  return file.endsWith('package.json') ? 'package manifest' : 'lockfile';
}

/** npm's name rule, loosened for legacy names (capitals); never a path escape or a control character. */
const PACKAGE_NAME = /^(@[A-Za-z0-9-~][A-Za-z0-9-._~]*\/)?[A-Za-z0-9-~][A-Za-z0-9-._~]*$/;

export function isPackageName(name: string): boolean {
  return name.length > 0 && name.length <= 214 && PACKAGE_NAME.test(name);
}

/** An exact registry version (`1.2.3`, `1.0.0-beta.1`), never a path, URL or git reference. */
export function isExactVersion(version: string): boolean {
  return version.length <= 256 && semver.valid(version, { loose: false }) === version;
}

const NON_REGISTRY: readonly [RegExp, string][] = [
  [/^workspace:/, 'a workspace package'],
  [/^(file|link|portal):/, 'a local path'],
  [/^(\.{0,2}\/|~\/)/, 'a local path'],
  [/^(git(\+[a-z]+)?:|github:|gitlab:|bitbucket:|gist:)/i, 'a git dependency'],
  [/^https?:/i, 'a URL dependency'],
  [/^[^@\s/:]+\/[^\s/:]+(#.*)?$/, 'a GitHub dependency'],
];

/**
 * Why a package.json specifier is not a registry package (`workspace:*`, `file:../x`, `git+https://…`,
 * `user/repo`), or null when it is a registry range, tag or `npm:` alias.
 */
export function nonRegistryReason(specifier: string): string | null {
  for (const [pattern, reason] of NON_REGISTRY) if (pattern.test(specifier)) return reason;
  return null;
}

/** `name@version` (`@scope/name@1.2.3`) split at the `@` after the name; null when there is none. */
export function splitIdent(ident: string): { name: string; rest: string } | null {
  const at = ident.indexOf('@', 1);
  if (at <= 0) return null;
  return { name: ident.slice(0, at), rest: ident.slice(at + 1) };
}

/** Adds `name@version` once, when it names a registry package at an exact version. */
export function addLocked(seen: Map<string, LockedPackage>, name: string, version: string): boolean {
  if (!isPackageName(name) || !isExactVersion(version)) return false;
  seen.set(`${name}@${version}`, { name, version });
  return true;
}

/** Plain object check for parsed JSON/YAML: arrays and null are not records. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function stringField(record: Record<string, unknown>, key: string): string | undefined {
  const value = Object.hasOwn(record, key) ? record[key] : undefined;
  return typeof value === 'string' ? value : undefined;
}
