import { UserError, ValidationError } from '../errors.js';
import { hasControlCharacter } from './remote.js';

/**
 * Which tracked files of a repository are indexed: documentation files under the docs paths, the root README,
 * and source files under the examples paths. Tracked files only (`git ls-files`), so nothing .gitignored;
 * dependencies, build output and hidden folders never. Pure.
 */

export const DEFAULT_DOCS_PATHS = ['docs', 'doc', 'documentation', 'website/docs'] as const;
export const DEFAULT_EXAMPLES_PATHS = ['examples'] as const;
export const DOC_EXTENSIONS = ['.md', '.mdx', '.markdown', '.rst', '.adoc', '.txt', '.ipynb'] as const;
const EXCLUDED_SEGMENTS = new Set(['node_modules', 'vendor', 'dist', 'build']);
const ROOT_README = /^readme(\.(md|mdx|markdown|rst|adoc|txt))?$/i;
const MAX_PATHS = 50;

export interface TrackedFile {
  path: string;
  /** The blob's object id: unchanged content keeps it, which is how a recrawl skips a file. */
  blob: string;
}

export type SelectedRole = 'doc' | 'example';

export interface SelectedFile extends TrackedFile {
  role: SelectedRole;
}

function extensionOf(filePath: string): string {
  const base = filePath.slice(filePath.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot <= 0 ? '' : base.slice(dot).toLowerCase();
}

export function isDocFile(filePath: string): boolean {
  return (DOC_EXTENSIONS as readonly string[]).includes(extensionOf(filePath));
}

function excluded(filePath: string): boolean {
  return filePath.split('/').some((segment) => EXCLUDED_SEGMENTS.has(segment) || segment.startsWith('.'));
}

function under(filePath: string, root: string): boolean {
  return filePath === root || filePath.startsWith(`${root}/`);
}

/**
 * A repository-relative path as given by a caller (`docs`, `./guide/`, `website/docs`), normalised; refused
 * when it could leave the repository or be read by git as a pattern or an option.
 */
export function normaliseRepoPath(raw: string): string {
  const text = raw
    .trim()
    .replace(/^\.\/+/, '')
    .replace(/\/+$/, '');
  const bad = text === '' || text === '.' || text.startsWith('/') || text.startsWith('-') || text.length > 500;
  if (bad || hasControlCharacter(text) || /[*?[\]\\!#:]/.test(text) || text.split('/').some((s) => s === '..' || s === '.' || s === '')) {
    throw new ValidationError(`${JSON.stringify(raw.slice(0, 200))} is not a path inside the repository.`, {
      hint: 'Give folders or files relative to the repository root, such as docs or website/docs.',
    });
  }
  return text;
}

export function normaliseRepoPaths(raw: readonly string[] | undefined, field: string): string[] | undefined {
  if (raw === undefined || raw.length === 0) return undefined;
  if (raw.length > MAX_PATHS) throw new ValidationError(`At most ${MAX_PATHS} ${field}.`);
  return [...new Set(raw.map(normaliseRepoPath))];
}

export interface Selection {
  /** The docs paths as asked (undefined: the default folders). */
  paths?: readonly string[];
  examples?: readonly string[];
}

/** Sparse-checkout patterns (non-cone, anchored at the root) for what the selection can pick. */
export function sparsePatterns(selection: Selection): string[] {
  const roots = [...(selection.paths ?? DEFAULT_DOCS_PATHS), ...(selection.examples ?? DEFAULT_EXAMPLES_PATHS)];
  return [...roots.map((root) => `/${root}`), '/[Rr][Ee][Aa][Dd][Mm][Ee]*'];
}

/** The files to index, in path order; throws when a given docs path matches nothing or nothing is left. */
export function selectFiles(tracked: readonly TrackedFile[], selection: Selection, isExampleSource: (filePath: string) => boolean): SelectedFile[] {
  const docRoots = selection.paths ?? DEFAULT_DOCS_PATHS;
  const exampleRoots = selection.examples ?? DEFAULT_EXAMPLES_PATHS;
  for (const root of selection.paths ?? []) {
    if (!tracked.some((f) => under(f.path, root) && isDocFile(f.path) && !excluded(f.path))) {
      throw new UserError(`"${root}" matches no documentation file in the repository.`, { code: 'git_nothing_to_index', details: [{ path: root }] });
    }
  }
  const selected: SelectedFile[] = [];
  for (const file of tracked) {
    if (excluded(file.path)) continue;
    const inExamples = exampleRoots.some((root) => under(file.path, root));
    if (!file.path.includes('/') && ROOT_README.test(file.path)) selected.push({ ...file, role: 'doc' });
    else if (isDocFile(file.path) && (inExamples || docRoots.some((root) => under(file.path, root)))) selected.push({ ...file, role: 'doc' });
    else if (inExamples && isExampleSource(file.path)) selected.push({ ...file, role: 'example' });
  }
  if (selected.length === 0) {
    throw new UserError('The repository has no documentation to index: no README, and nothing under the docs or examples folders.', { code: 'git_nothing_to_index' });
  }
  return selected.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
