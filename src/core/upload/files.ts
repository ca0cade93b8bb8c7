import { createHash } from 'node:crypto';
import type { Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ValidationError } from '../errors.js';

/**
 * Finding and reading the files of an upload. Everything is checked here, before anything is written: a file
 * that is too large, binary or not UTF-8 gets its own error and the others go on; unsupported extensions are
 * listed as skipped.
 */

/** Extension → content type handed to extractDocument. */
export const UPLOAD_FORMATS: Readonly<Record<string, string>> = {
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.mdx': 'text/markdown',
  '.txt': 'text/plain',
  '.rst': 'text/x-rst',
  '.adoc': 'text/asciidoc',
};

// Documentation pages are kilobytes; 10 MB is far beyond any hand-written page and keeps a mistaken upload
// (a log, a data dump) from filling the database or a worker's memory.
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
// One upload is one job; beyond this a directory is almost certainly the wrong one (a home folder, a monorepo
// with vendored docs), and the user should point at the docs folder instead.
export const MAX_FILES = 10_000;
const SKIPPED_DIRECTORIES = new Set(['node_modules', '.git']);

export interface UploadFileInput {
  /** As shown to the user: relative to the uploaded directory, or the file's name. */
  path: string;
  url: string;
  content: string;
  sizeBytes: number;
  /** How to read it, when its path's extension does not say (a git example wrapped as markdown). */
  contentType?: string;
}

export interface FileProblem {
  path: string;
  error: string;
}

export interface SkippedFile {
  path: string;
  reason: string;
}

export interface ScanResult {
  files: UploadFileInput[];
  errors: FileProblem[];
  skipped: SkippedFile[];
}

export function contentTypeFor(filePath: string): string | undefined {
  return UPLOAD_FORMATS[path.extname(filePath).toLowerCase()];
}

function toPosix(p: string): string {
  return p.split(path.sep).join('/');
}

/**
 * The text of a file body, or why it cannot be one. Binary is a NUL byte in the first 8 KB (what git and grep
 * use); invalid UTF-8 is reported with the byte offset so the user can find it.
 */
export function decodeUpload(bytes: Uint8Array): { text: string } | { error: string } {
  if (bytes.byteLength > MAX_FILE_BYTES) {
    return { error: `file is ${(bytes.byteLength / 1024 / 1024).toFixed(1)} MB; the limit is ${MAX_FILE_BYTES / 1024 / 1024} MB per file` };
  }
  const head = bytes.subarray(0, 8192);
  if (head.includes(0)) return { error: 'binary content (contains NUL bytes); upload text files only' };
  try {
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
    if (text.includes('\u0000')) return { error: 'binary content (contains NUL bytes); upload text files only' };
    return { text };
  } catch {
    return { error: `not valid UTF-8 (first bad byte at offset ${firstInvalidUtf8(bytes)}); convert the file to UTF-8` };
  }
}

function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    const need = b < 0x80 ? 0 : b >= 0xc2 && b < 0xe0 ? 1 : b >= 0xe0 && b < 0xf0 ? 2 : b >= 0xf0 && b < 0xf5 ? 3 : -1;
    if (need < 0) return i;
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
    }
    i += need + 1;
  }
  return i;
}

/** The document URL of an uploaded file: under --source-url when given, else the file's own file:// URL. */
export function uploadUrl(absolute: string, relative: string, sourceUrl: string | undefined, single: boolean): string {
  if (sourceUrl === undefined) return pathToFileURL(absolute).href;
  if (single) return sourceUrl;
  const base = sourceUrl.endsWith('/') ? sourceUrl : `${sourceUrl}/`;
  return new URL(relative.split('/').map(encodeURIComponent).join('/'), base).href;
}

export function checkSourceUrl(sourceUrl: string | undefined): string | undefined {
  if (sourceUrl === undefined || sourceUrl.trim() === '') return undefined;
  try {
    const url = new URL(sourceUrl.trim());
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
    return url.href;
  } catch {
    throw new ValidationError(`source URL must be an http(s) URL, got ${JSON.stringify(sourceUrl)}.`);
  }
}

async function readOne(absolute: string, relative: string): Promise<{ text: string; size: number } | FileProblem> {
  try {
    const stat = await fs.stat(absolute);
    // Checked before reading so a huge file is never loaded.
    if (stat.size > MAX_FILE_BYTES) {
      return { path: relative, error: `file is ${(stat.size / 1024 / 1024).toFixed(1)} MB; the limit is ${MAX_FILE_BYTES / 1024 / 1024} MB per file` };
    }
    const decoded = decodeUpload(await fs.readFile(absolute));
    if ('error' in decoded) return { path: relative, error: decoded.error };
    return { text: decoded.text, size: stat.size };
  } catch (error) {
    return { path: relative, error: `cannot read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
  }
}

async function walk(dir: string, root: string, found: Array<{ absolute: string; relative: string }>, skipped: SkippedFile[]): Promise<void> {
  let entries: Dirent[];
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch (error) {
    skipped.push({ path: toPosix(path.relative(root, dir)) || '.', reason: `cannot read directory: ${(error as NodeJS.ErrnoException).code ?? 'error'}` });
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const absolute = path.join(dir, entry.name);
    const relative = toPosix(path.relative(root, absolute));
    if (entry.isDirectory()) {
      // Dependencies, VCS data and hidden folders (.venv, .cache, .github) are not the project's docs.
      if (SKIPPED_DIRECTORIES.has(entry.name) || entry.name.startsWith('.')) continue;
      await walk(absolute, root, found, skipped);
    } else if (entry.isFile()) {
      if (contentTypeFor(entry.name) === undefined) skipped.push({ path: relative, reason: 'unsupported format' });
      else found.push({ absolute, relative });
    }
    // Symlinks and special files are left alone: following them can leave the directory or loop.
  }
}

/** Reads every supported file under the given paths (files or directories). */
export async function scanPaths(paths: string[], sourceUrl: string | undefined): Promise<ScanResult> {
  if (paths.length === 0) throw new ValidationError('Nothing to upload: give a file or a directory.');
  const found: Array<{ absolute: string; relative: string }> = [];
  const skipped: SkippedFile[] = [];
  for (const p of paths) {
    const absolute = path.resolve(p);
    let stat;
    try {
      stat = await fs.stat(absolute);
    } catch {
      throw new ValidationError(`No such file or directory: ${p}`);
    }
    if (stat.isDirectory()) {
      const before = found.length;
      const skippedBefore = skipped.length;
      await walk(absolute, absolute, found, skipped);
      if (found.length === before) {
        const what = skipped.length > skippedBefore ? `only unsupported files (${skipped.length - skippedBefore})` : 'no files';
        throw new ValidationError(`${p} contains ${what}: nothing to upload.`, {
          hint: `Supported formats: ${Object.keys(UPLOAD_FORMATS).join(' ')}. node_modules, .git and hidden folders are skipped.`,
          details: skipped.slice(skippedBefore, skippedBefore + 50),
        });
      }
    } else if (stat.isFile()) {
      if (contentTypeFor(absolute) === undefined) {
        throw new ValidationError(`${p}: unsupported format "${path.extname(absolute) || '(none)'}".`, {
          hint: `Supported formats: ${Object.keys(UPLOAD_FORMATS).join(' ')}.`,
        });
      }
      found.push({ absolute, relative: path.basename(absolute) });
    } else {
      throw new ValidationError(`${p} is neither a file nor a directory.`);
    }
    if (found.length > MAX_FILES) {
      throw new ValidationError(`More than ${MAX_FILES} files to upload.`, { hint: 'Point at the documentation folder itself, or upload it in parts.' });
    }
  }
  // Two arguments can name the same file, or two directories files of the same relative name.
  const seen = new Set<string>();
  const unique = found.filter((f) => {
    if (seen.has(f.relative)) return false;
    seen.add(f.relative);
    return true;
  });
  const single = unique.length === 1;
  const files: UploadFileInput[] = [];
  const errors: FileProblem[] = [];
  for (const f of unique) {
    const read = await readOne(f.absolute, f.relative);
    if ('error' in read) errors.push(read);
    else files.push({ path: f.relative, url: uploadUrl(f.absolute, f.relative, sourceUrl, single), content: read.text, sizeBytes: read.size });
  }
  return { files, errors, skipped };
}

/** A stable name for pasted content: the given file name, else a slug of the title, else a content hash. */
export function contentFileName(content: string, title: string | undefined, filename: string | undefined): string {
  if (filename?.trim()) return path.basename(filename.trim());
  const slug = (title ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80);
  return `${slug || createHash('md5').update(content).digest('hex').slice(0, 12)}.md`;
}
