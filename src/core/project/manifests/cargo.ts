import { readdir } from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch';
import type { ManifestReadResult, ProjectDependency } from '../dependency.js';
import { parseCargoLock } from './cargo-lock.js';
import { parseCargoManifest } from './cargo-manifest.js';
import type { CargoManifest } from './cargo-manifest.js';
import { manifestInvalid, readManifestFile } from './manifest-file.js';

/** Workspaces larger than this are cut off there (a glob over a huge tree must not read it all). */
const MAX_MEMBERS = 500;

/** A member pattern's folder segments, or undefined when it leaves the workspace (absolute, `..`). */
function patternSegments(pattern: string): string[] | undefined {
  const normal = pattern.replace(/\\/g, '/');
  if (normal.startsWith('/') || /^[A-Za-z]:/.test(normal)) return undefined;
  const segments = normal.split('/').filter((s) => s !== '' && s !== '.');
  return segments.some((s) => s === '..') ? undefined : segments;
}

async function subfolders(root: string, relative: string): Promise<string[]> {
  const entries = await readdir(path.join(root, relative), { withFileTypes: true }).catch(() => []);
  // Symlinked folders are not followed: a member reached through one could be anywhere.
  return entries.filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name);
}

/** The folders a `members` pattern names (Cargo's globs, one segment at a time: `crates/*`, `tools/x-*`). */
async function expandMember(root: string, pattern: string, notes: string[]): Promise<string[]> {
  const segments = patternSegments(pattern);
  if (segments === undefined) {
    notes.push(`Cargo.toml: workspace member ${pattern} is outside the project directory; not read`);
    return [];
  }
  // `.` is the root package itself, already read.
  if (segments.length === 0) return [];
  let folders = [''];
  for (const segment of segments) {
    if (!picomatch.scan(segment).isGlob) {
      folders = folders.map((f) => path.posix.join(f, segment));
      continue;
    }
    const match = picomatch(segment, { dot: false });
    const next: string[] = [];
    for (const folder of folders) for (const name of await subfolders(root, folder)) if (match(name)) next.push(path.posix.join(folder, name));
    folders = next.slice(0, MAX_MEMBERS);
  }
  return folders;
}

async function workspaceMembers(root: string, workspace: NonNullable<CargoManifest['workspace']>, notes: string[]): Promise<string[]> {
  const excluded = workspace.exclude.map((e) => patternSegments(e)?.join('/')).filter((e): e is string => e !== undefined);
  const isExcluded = picomatch(excluded.length === 0 ? ['\0'] : excluded);
  const members = new Set<string>();
  for (const pattern of workspace.members) for (const folder of await expandMember(root, pattern, notes)) if (folder !== '' && !isExcluded(folder)) members.add(folder);
  return [...members].sort().slice(0, MAX_MEMBERS);
}

/** The root manifest and each member's (a member folder without a Cargo.toml is noted, as Cargo would refuse it). */
async function readManifests(root: string, rootText: string, notes: string[]): Promise<CargoManifest[]> {
  const top = parseCargoManifest('Cargo.toml', rootText);
  const manifests = [top];
  if (top.workspace === undefined) return manifests;
  for (const folder of await workspaceMembers(root, top.workspace, notes)) {
    const file = `${folder}/Cargo.toml`;
    const text = await readManifestFile(root, file);
    if (text === null) notes.push(`${file}: workspace member without a Cargo.toml; not read`);
    else manifests.push(parseCargoManifest(file, text, top.workspace.dependencies));
  }
  return manifests;
}

function dependenciesOf(manifests: CargoManifest[], lockText: string | null): ProjectDependency[] {
  const members = new Set(manifests.flatMap((m) => (m.packageName === undefined ? [] : [m.packageName])));
  const named = new Map<string, CargoManifest['requirements'][number]>();
  for (const requirement of manifests.flatMap((m) => m.requirements)) {
    if (members.has(requirement.name)) continue;
    const known = named.get(requirement.name);
    if (known === undefined || (known.range === null && requirement.range !== null)) named.set(requirement.name, requirement);
  }
  if (lockText === null) {
    return [...named.values()].map((r) => ({ ecosystem: 'crates', name: r.name, version: r.version, range: r.range, direct: true, manifest: r.manifest }));
  }
  return parseCargoLock(lockText, new Set(named.keys()))
    .filter((c) => !members.has(c.name))
    .map((c) => ({ ecosystem: 'crates', name: c.name, version: c.version, range: c.direct ? (named.get(c.name)?.range ?? null) : null, direct: c.direct, manifest: 'Cargo.lock' }));
}

/**
 * Cargo.toml (a package, or a workspace and its members: `members` globs inside the root only, each with its
 * own dependency sections, `workspace = true` from `[workspace.dependencies]`) with Cargo.lock for exact
 * versions: direct when a member's manifest names the crate, transitive otherwise; the members themselves are
 * no dependencies. Null when the directory has no Cargo.toml; a malformed file is `manifest_invalid`.
 */
export async function readCargoProject(root: string): Promise<ManifestReadResult | null> {
  const rootText = await readManifestFile(root, 'Cargo.toml');
  if (rootText === null) return null;
  const notes: string[] = [];
  const manifests = await readManifests(root, rootText, notes);
  if (manifests.length === 1 && manifests[0]!.packageName === undefined && manifests[0]!.workspace === undefined) {
    throw manifestInvalid('Cargo.toml', 'it has neither a [package] nor a [workspace] section');
  }
  const lockText = await readManifestFile(root, 'Cargo.lock');
  const files = [...manifests.map((m) => m.file), ...(lockText === null ? [] : ['Cargo.lock'])];
  notes.push(...manifests.flatMap((m) => m.notes));
  return { dependencies: dependenciesOf(manifests, lockText), files, ...(notes.length === 0 ? {} : { notes }) };
}
