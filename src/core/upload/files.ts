import { createHash } from 'node:crypto';
import type { Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ValidationError } from '../errors.js';
import { hasIncludes } from '../extract/includes.js';
import type { IncludeHost } from '../extract/includes.js';
import { decodeUpload, MAX_FILE_BYTES } from './decode.js';
import { addToTally, emptyTally, expandUploadedFile, includeScope, scopeIncludeHost } from './includes.js';
import type { IncludeScope, IncludeTally } from './includes.js';

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
  /** The files' includes, resolved from the folder around them. */
  includes: IncludeTally;
}

interface FoundFile {
  absolute: string;
  relative: string;
  /** The uploaded folder it was found in: its includes come from there and the repository around it. */
  uploaded?: string;
}

export function contentTypeFor(filePath: string): string | undefined {
  return UPLOAD_FORMATS[path.extname(filePath).toLowerCase()];
}

function toPosix(p: string): string {
  return p.split(path.sep).join('/');
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

async function walk(dir: string, root: string, found: FoundFile[], skipped: SkippedFile[]): Promise<void> {
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
  const found: FoundFile[] = [];
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
      for (let k = before; k < found.length; k++) (found[k] as FoundFile).uploaded = absolute;
    } else if (stat.isFile()) {
      if (contentTypeFor(absolute) === undefined) {
        throw new ValidationError(`${p}: unsupported format "${path.extname(absolute) || '(none)'}".`, {
          hint: `Supported formats: ${Object.keys(UPLOAD_FORMATS).join(' ')}.`,
        });
      }
      found.push({ absolute, relative: path.basename(absolute), uploaded: path.dirname(absolute) });
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
  return { ...(await readFound(unique, sourceUrl)), skipped };
}

/** Reads the files found, each with its includes resolved from the folder around it. */
async function readFound(found: readonly FoundFile[], sourceUrl: string | undefined): Promise<Omit<ScanResult, 'skipped'>> {
  const single = found.length === 1;
  const files: UploadFileInput[] = [];
  const errors: FileProblem[] = [];
  const includes = emptyTally();
  const scopes = new Map<string, { scope: IncludeScope; host: IncludeHost }>();
  for (const f of found) {
    const read = await readOne(f.absolute, f.relative);
    if ('error' in read) {
      errors.push(read);
      continue;
    }
    let content = read.text;
    if (f.uploaded !== undefined && hasIncludes(f.absolute, read.text)) {
      let entry = scopes.get(f.uploaded);
      if (entry === undefined) {
        const scope = await includeScope(f.uploaded);
        entry = { scope, host: scopeIncludeHost(scope) };
        scopes.set(f.uploaded, entry);
      }
      const expanded = expandUploadedFile(entry.scope, entry.host, f.absolute, read.text);
      addToTally(includes, expanded.tally);
      content = expanded.text;
    }
    const sizeBytes = content === read.text ? read.size : Buffer.byteLength(content, 'utf8');
    files.push({ path: f.relative, url: uploadUrl(f.absolute, f.relative, sourceUrl, single), content, sizeBytes });
  }
  return { files, errors, includes };
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
