import { parseSyml } from '@yarnpkg/parsers';
import { addLocked, isRecord, manifestInvalid, nonRegistryReason, splitIdent, stringField } from './npm-shared.js';
import type { LockedPackage, NpmLock } from './npm-shared.js';
import type { DirectSpecifier } from './npm-lock.js';

/**
 * yarn.lock, classic (v1) and berry (v2+), through Yarn's own parser. Each entry's key lists the descriptors
 * it satisfies (`lodash@^4.17.0, lodash@^4.17.21`; berry: `lodash@npm:^4.17.21`), so a direct dependency's
 * version is the entry whose key holds its package.json descriptor.
 */

const FILE = 'yarn.lock';

function loadSyml(text: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = parseSyml(text);
  } catch (error) {
    throw manifestInvalid(FILE, `not a yarn lockfile (${String((error as Error).message ?? error).split('\n')[0]})`);
  }
  if (!isRecord(doc)) throw manifestInvalid(FILE, 'the top level is not a mapping');
  return doc;
}

/** Berry records the package it resolved to (`name@npm:1.2.3`); anything else (workspace, patch, git) is not a registry package. */
function berryResolution(entry: Record<string, unknown>): LockedPackage | null {
  const resolution = stringField(entry, 'resolution');
  if (resolution === undefined) return null;
  const ident = splitIdent(resolution);
  if (ident === null || !ident.rest.startsWith('npm:')) return null;
  return { name: ident.name, version: ident.rest.slice(4) };
}

function entryPackage(key: string, entry: Record<string, unknown>): LockedPackage | null {
  const berry = berryResolution(entry);
  if (berry !== null) return berry;
  if (Object.hasOwn(entry, 'resolution')) return null;
  const version = stringField(entry, 'version');
  const first = splitIdent(key.split(',')[0]!.trim());
  const resolved = stringField(entry, 'resolved') ?? '';
  if (version === undefined || first === null || nonRegistryReason(first.rest) !== null || /^(git|file:|https?:\/\/codeload\.)/.test(resolved)) return null;
  // An alias descriptor `alias@npm:real@^1` installs `real`.
  const alias = first.rest.startsWith('npm:') ? splitIdent(first.rest.slice(4)) : null;
  return { name: alias?.name ?? first.name, version };
}

function directKeys(direct: readonly DirectSpecifier[]): Map<string, string> {
  const keys = new Map<string, string>();
  for (const d of direct) {
    const specifier = d.name === d.key ? d.range : `npm:${d.name}@${d.range}`;
    keys.set(`${d.key}@${specifier}`, d.key);
    keys.set(`${d.key}@npm:${specifier.replace(/^npm:/, '')}`, d.key);
  }
  return keys;
}

/** yarn.lock read against package.json's direct specifiers (to know which entry the project itself gets). */
export function parseYarnLock(text: string, direct: readonly DirectSpecifier[]): NpmLock {
  const doc = loadSyml(text);
  const lock: NpmLock = { file: FILE, direct: new Map(), packages: [] };
  const seen = new Map<string, LockedPackage>();
  const wanted = directKeys(direct);
  for (const [key, entry] of Object.entries(doc)) {
    if (key === '__metadata') continue;
    if (!isRecord(entry)) throw manifestInvalid(FILE, `entry ${JSON.stringify(key.slice(0, 100))} is not a mapping`);
    const locked = entryPackage(key, entry);
    if (locked === null || !addLocked(seen, locked.name, locked.version)) continue;
    for (const descriptor of key.split(',')) {
      const directKey = wanted.get(descriptor.trim());
      if (directKey !== undefined) lock.direct.set(directKey, locked.version);
    }
  }
  lock.packages = [...seen.values()];
  return lock;
}
