import fs from 'node:fs/promises';
import path from 'node:path';
import { languageFromFilename } from '../extract/filename.js';
import { decodeUpload } from '../upload/decode.js';
import type { FileProblem, UploadFileInput } from '../upload/files.js';
import { absoluteMarkdownLinks } from './relative-links.js';
import type { SelectedFile } from './select.js';

/**
 * Reading the selected files of a checkout into upload file rows: documentation as it is (its format from its
 * extension), an example source file as a small markdown document with one fenced block titled by its path.
 */

// One example is one snippet: beyond this it is a generated file or data, not an example a reader copies.
const MAX_EXAMPLE_BYTES = 256 * 1024;

const DOC_TYPES: Record<string, string> = {
  '.md': 'text/markdown',
  '.mdx': 'text/markdown',
  '.markdown': 'text/markdown',
  '.rst': 'text/x-rst',
  '.adoc': 'text/asciidoc',
  '.txt': 'text/plain',
  '.ipynb': 'application/x-ipynb+json',
};

const MARKDOWN = new Set(['.md', '.mdx', '.markdown']);

export function isExampleSource(filePath: string): boolean {
  return languageFromFilename(filePath) !== null;
}

function fenceFor(code: string): string {
  let longest = 0;
  for (const run of code.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return '`'.repeat(Math.max(3, longest + 1));
}

/** An example file as markdown: its path as the title, its code in one block in its language. */
export function exampleDocument(filePath: string, code: string): string {
  const fence = fenceFor(code);
  const language = languageFromFilename(filePath) ?? '';
  return `# ${filePath}\n\n${fence}${language}\n${code.replace(/\n+$/, '')}\n${fence}\n`;
}

export interface ReadFiles {
  files: Map<string, UploadFileInput>;
  errors: Map<string, FileProblem>;
}

/** A selected file's text as it is in the checkout. */
export interface SelectedText {
  file: SelectedFile;
  text: string;
}

async function readText(absolute: string, relative: string, limit: number): Promise<{ text: string } | FileProblem> {
  const stat = await fs.lstat(absolute).catch(() => undefined);
  if (!stat?.isFile()) return { path: relative, error: 'not in the checkout' };
  if (stat.size > limit) return { path: relative, error: `file is ${(stat.size / 1024).toFixed(0)} KB; the limit is ${limit / 1024} KB` };
  const decoded = decodeUpload(await fs.readFile(absolute));
  return 'error' in decoded ? { path: relative, error: decoded.error } : { text: decoded.text };
}

/** Reads each selected file under `dir`; a file that cannot be read is reported, the others go on. */
export async function readSelected(dir: string, selected: readonly SelectedFile[]): Promise<{ texts: SelectedText[]; errors: Map<string, FileProblem> }> {
  const texts: SelectedText[] = [];
  const errors = new Map<string, FileProblem>();
  for (const file of selected) {
    const read = await readText(path.join(dir, ...file.path.split('/')), file.path, file.role === 'example' ? MAX_EXAMPLE_BYTES : 10 * 1024 * 1024);
    if ('error' in read) errors.set(file.path, read);
    else texts.push({ file, text: read.text });
  }
  return { texts, errors };
}

/** The upload rows of the files read: documentation with its relative links made absolute, examples wrapped. */
export function uploadRows(texts: readonly SelectedText[], errors: Map<string, FileProblem>, urlOf: (filePath: string) => string): ReadFiles {
  const files = new Map<string, UploadFileInput>();
  for (const { file, text } of texts) {
    const example = file.role === 'example';
    const extension = path.extname(file.path).toLowerCase();
    const url = urlOf(file.path);
    const content = example ? exampleDocument(file.path, text) : MARKDOWN.has(extension) ? absoluteMarkdownLinks(text, url) : text;
    const contentType = example ? 'text/markdown' : (DOC_TYPES[extension] ?? 'text/plain');
    files.set(file.path, { path: file.path, url, content, sizeBytes: Buffer.byteLength(content, 'utf8'), contentType });
  }
  return { files, errors };
}
