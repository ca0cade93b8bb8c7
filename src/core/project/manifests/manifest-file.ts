import { open, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { UserError } from '../../errors.js';

/**
 * Reading a project's manifests safely: every file named relative to the project root, kept inside it (a
 * `..` or a symlink pointing elsewhere is refused, not followed), a regular file no larger than the cap, UTF-8.
 * A project directory is outside input: its files may be written to make docdex read something else.
 */

/** Larger than any real manifest or lockfile (a big monorepo's lockfile is a few MiB). */
export const MAX_MANIFEST_BYTES = 32 * 1024 * 1024;

/** A manifest that cannot be read as its format: `manifest_invalid`, naming the file and what is wrong. */
export function manifestInvalid(file: string, why: string): UserError {
  const reason = why.replace(/\s+/g, ' ').trim().slice(0, 300);
  return new UserError(`Cannot read ${file}: ${reason}.`, { code: 'manifest_invalid', details: [{ path: file, message: reason }] });
}

/** `relative` as a path inside `root`, or undefined when it names something outside (absolute, `..`). */
function insideRoot(root: string, relative: string): string | undefined {
  if (relative.length === 0 || relative.length > 1000 || relative.includes('\0') || path.isAbsolute(relative)) return undefined;
  const target = path.resolve(root, relative);
  const back = path.relative(root, target);
  return back === '' || back.startsWith('..') || path.isAbsolute(back) ? undefined : target;
}

/** The file's real path when it exists inside the root's real path; null when it does not exist. */
async function realPathInside(root: string, relative: string): Promise<string | null> {
  const target = insideRoot(root, relative);
  if (target === undefined) throw manifestInvalid(relative, 'the path leaves the project directory');
  const real = await realpath(target).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null;
    throw manifestInvalid(relative, `it cannot be opened (${error.code ?? error.message})`);
  });
  if (real === null) return null;
  const realRoot = await realpath(root);
  if (insideRoot(realRoot, path.relative(realRoot, real)) === undefined) throw manifestInvalid(relative, 'it is a symlink to a file outside the project directory');
  return real;
}

/**
 * The text of `relative` (a path inside `root`, `/`-separated), or null when there is no such file. A path
 * or symlink leading out of the root, a directory, a file over the cap or not UTF-8 is `manifest_invalid`.
 */
export async function readManifestFile(root: string, relative: string): Promise<string | null> {
  const real = await realPathInside(root, relative);
  if (real === null) return null;
  const handle = await open(real, 'r').catch((error: NodeJS.ErrnoException) => {
    throw manifestInvalid(relative, `it cannot be opened (${error.code ?? error.message})`);
  });
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw manifestInvalid(relative, 'it is not a regular file');
    if (info.size > MAX_MANIFEST_BYTES) throw manifestInvalid(relative, `it is larger than ${MAX_MANIFEST_BYTES / 1024 / 1024} MiB`);
    const bytes = Buffer.alloc(info.size);
    const { bytesRead } = await handle.read(bytes, 0, info.size, 0);
    return decodeUtf8(relative, bytes.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

function decodeUtf8(file: string, bytes: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw manifestInvalid(file, 'it is not UTF-8 text');
  }
}

/** The names of the regular files and symlinks directly in `relativeDir` (inside the root); [] when there is none. */
export async function listManifestDir(root: string, relativeDir: string): Promise<string[]> {
  const dir = relativeDir === '' || relativeDir === '.' ? root : insideRoot(root, relativeDir);
  if (dir === undefined) return [];
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile() || e.isSymbolicLink())
    .map((e) => e.name)
    .sort();
}

/** A TOML document as a plain object; a syntax error is `manifest_invalid` with the parser's line and column. */
export function parseTomlManifest(file: string, text: string): Record<string, unknown> {
  try {
    return parseToml(text) as Record<string, unknown>;
  } catch (error) {
    const e = error as { line?: number; column?: number; message?: string };
    const where = typeof e.line === 'number' ? `line ${e.line}${typeof e.column === 'number' ? `, column ${e.column}` : ''}: ` : '';
    const first = String(e.message ?? error).split('\n')[0] ?? '';
    throw manifestInvalid(file, `it is not valid TOML (${where}${first})`);
  }
}

/** A plain object (a TOML table), or undefined for anything else. */
export function asTable(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date) ? (value as Record<string, unknown>) : undefined;
}

/** A table at `key`, undefined when absent; `manifest_invalid` when present but not a table. */
export function tableAt(file: string, parent: Record<string, unknown> | undefined, key: string, where: string): Record<string, unknown> | undefined {
  const value = parent?.[key];
  if (value === undefined) return undefined;
  const table = asTable(value);
  if (table === undefined) throw manifestInvalid(file, `${where} is not a table`);
  return table;
}
