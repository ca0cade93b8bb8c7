import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import type { ManifestReadResult, ProjectDependency } from '../dependency.js';
import { parseBunLock, parsePackageJson, parsePackageLock } from './npm-lock.js';
import type { PackageJsonDependencies } from './npm-lock.js';
import { manifestInvalid } from './npm-shared.js';
import type { NpmLock } from './npm-shared.js';
import { parsePnpmLock } from './pnpm-lock.js';
import { parseYarnLock } from './yarn-lock.js';

/** A manifest or lockfile larger than this is refused rather than read into memory. */
export const MAX_MANIFEST_BYTES = 50 * 1024 * 1024;

/** The lockfiles read, in the order tried: the first one present is the project's. */
const LOCKFILES: readonly { file: string; parse: (text: string, pkg: PackageJsonDependencies) => NpmLock }[] = [
  { file: 'package-lock.json', parse: (text) => parsePackageLock(text, 'package-lock.json') },
  { file: 'npm-shrinkwrap.json', parse: (text) => parsePackageLock(text, 'npm-shrinkwrap.json') },
  { file: 'pnpm-lock.yaml', parse: (text) => parsePnpmLock(text) },
  { file: 'yarn.lock', parse: (text, pkg) => parseYarnLock(text, pkg.direct) },
  { file: 'bun.lock', parse: (text) => parseBunLock(text) },
];

/**
 * A regular file's text at `root/file`, or null when there is none. Larger than MAX_MANIFEST_BYTES, not a
 * regular file, or not UTF-8 text: `manifest_invalid`.
 */
export async function readManifestFile(root: string, file: string): Promise<string | null> {
  let handle;
  try {
    // Non-blocking: a FIFO under a manifest's name must not hang the read (it is refused below as not a file).
    handle = await open(path.join(root, file), constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw manifestInvalid(file, `it cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw manifestInvalid(file, 'it is not a regular file');
    if (stat.size > MAX_MANIFEST_BYTES) throw manifestInvalid(file, `it is larger than ${MAX_MANIFEST_BYTES / 1024 / 1024} MB`);
    const bytes = await handle.readFile();
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw manifestInvalid(file, 'it is not UTF-8 text');
    }
  } finally {
    await handle.close();
  }
}

async function readLock(root: string, pkg: PackageJsonDependencies): Promise<NpmLock | null> {
  for (const { file, parse } of LOCKFILES) {
    const text = await readManifestFile(root, file);
    if (text !== null) return parse(text, pkg);
  }
  return null;
}

/** Direct dependencies at their locked versions (the range alone when unlocked), then every other locked package. */
export function npmDependencies(pkg: PackageJsonDependencies, lock: NpmLock | null): ProjectDependency[] {
  const out: ProjectDependency[] = [];
  const directPairs = new Set<string>();
  for (const d of pkg.direct) {
    const version = lock?.direct.get(d.key) ?? null;
    if (version !== null) directPairs.add(`${d.name}@${version}`);
    out.push({ ecosystem: 'npm', name: d.name, version, range: d.range, direct: true, manifest: version !== null && lock ? lock.file : 'package.json' });
  }
  for (const p of lock?.packages ?? []) {
    if (directPairs.has(`${p.name}@${p.version}`)) continue;
    out.push({ ecosystem: 'npm', name: p.name, version: p.version, range: null, direct: false, manifest: lock!.file });
  }
  return out;
}

/**
 * package.json with package-lock.json, pnpm-lock.yaml, yarn.lock or bun.lock. Null when the directory has no
 * package.json. A lockfile that cannot be parsed is a `manifest_invalid` UserError naming the file.
 */
export async function readNpmProject(root: string): Promise<ManifestReadResult | null> {
  const manifest = await readManifestFile(root, 'package.json');
  if (manifest === null) return null;
  const pkg = parsePackageJson(manifest);
  const lock = await readLock(root, pkg);
  return {
    dependencies: npmDependencies(pkg, lock),
    files: lock === null ? ['package.json'] : ['package.json', lock.file],
    skipped: pkg.skipped,
  };
}
