import { parse as parseYaml } from 'yaml';
import { addLocked, isExactVersion, isRecord, manifestInvalid, splitIdent, stringField } from './npm-shared.js';
import type { LockedPackage, NpmLock } from './npm-shared.js';

/**
 * pnpm-lock.yaml, v6 (`/name@1.2.3(peer@x)` keys, a single project's dependencies at the top level or in
 * `importers`) and v9 (`name@1.2.3` keys in `packages`, peer variants in `snapshots`, always `importers`).
 * Older v5 keys (`/name/1.2.3`) are read too.
 */

const FILE = 'pnpm-lock.yaml';
const IMPORTER_FIELDS = ['dependencies', 'devDependencies', 'optionalDependencies'] as const;

function loadYaml(text: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: 100, uniqueKeys: false, logLevel: 'error' });
  } catch (error) {
    throw manifestInvalid(FILE, `not YAML (${(error as Error).message.split('\n')[0]})`);
  }
  if (!isRecord(doc)) throw manifestInvalid(FILE, 'the top level is not a mapping');
  return doc;
}

/** `1.2.3(react@18.3.1)` → `1.2.3`: the peer suffix names the variant, not the version. */
function withoutPeers(text: string): string {
  const paren = text.indexOf('(');
  return paren < 0 ? text : text.slice(0, paren);
}

/** A `packages`/`snapshots` key → the package and version it installs, or null (a tarball or git key). */
export function pnpmKey(key: string): LockedPackage | null {
  const bare = withoutPeers(key.startsWith('/') ? key.slice(1) : key);
  const ident = splitIdent(bare);
  if (ident !== null && isExactVersion(ident.rest)) return { name: ident.name, version: ident.rest };
  // v5: `name/1.2.3` or `@scope/name/1.2.3`.
  const slash = bare.lastIndexOf('/');
  if (slash > 0 && isExactVersion(bare.slice(slash + 1))) return { name: bare.slice(0, slash), version: bare.slice(slash + 1) };
  return null;
}

/** An importer entry's version: `1.2.3`, `1.2.3(peer)`, an alias `real@1.2.3`, or `link:`/`file:` (null). */
function importerVersion(key: string, entry: unknown): LockedPackage | null {
  const raw = isRecord(entry) ? stringField(entry, 'version') : typeof entry === 'string' ? entry : undefined;
  if (raw === undefined) throw manifestInvalid(FILE, `the importer entry for ${JSON.stringify(key.slice(0, 100))} has no version`);
  const version = withoutPeers(raw.startsWith('/') ? raw.slice(1) : raw);
  if (isExactVersion(version)) return { name: key, version };
  return pnpmKey(version);
}

function rootImporter(doc: Record<string, unknown>): Record<string, unknown> {
  if (!Object.hasOwn(doc, 'importers')) return doc;
  const importers = doc.importers;
  if (!isRecord(importers)) throw manifestInvalid(FILE, '"importers" is not a mapping');
  const root = Object.hasOwn(importers, '.') ? importers['.'] : {};
  if (!isRecord(root)) throw manifestInvalid(FILE, 'importers["."] is not a mapping');
  return root;
}

function readImporter(root: Record<string, unknown>, lock: NpmLock, seen: Map<string, LockedPackage>): void {
  for (const field of IMPORTER_FIELDS) {
    const deps = Object.hasOwn(root, field) ? root[field] : undefined;
    if (deps === undefined || deps === null) continue;
    if (!isRecord(deps)) throw manifestInvalid(FILE, `"${field}" is not a mapping`);
    for (const [key, entry] of Object.entries(deps)) {
      const locked = importerVersion(key, entry);
      if (locked !== null && addLocked(seen, locked.name, locked.version)) lock.direct.set(key, locked.version);
    }
  }
}

function readKeys(doc: Record<string, unknown>, section: 'packages' | 'snapshots', seen: Map<string, LockedPackage>): void {
  const entries = Object.hasOwn(doc, section) ? doc[section] : undefined;
  if (entries === undefined || entries === null) return;
  if (!isRecord(entries)) throw manifestInvalid(FILE, `"${section}" is not a mapping`);
  for (const key of Object.keys(entries)) {
    const locked = pnpmKey(key);
    if (locked !== null) addLocked(seen, locked.name, locked.version);
  }
}

export function parsePnpmLock(text: string): NpmLock {
  const doc = loadYaml(text);
  if (!Object.hasOwn(doc, 'lockfileVersion')) throw manifestInvalid(FILE, 'it has no "lockfileVersion"');
  const lock: NpmLock = { file: FILE, direct: new Map(), packages: [] };
  const seen = new Map<string, LockedPackage>();
  readImporter(rootImporter(doc), lock, seen);
  readKeys(doc, 'packages', seen);
  readKeys(doc, 'snapshots', seen);
  lock.packages = [...seen.values()];
  return lock;
}
