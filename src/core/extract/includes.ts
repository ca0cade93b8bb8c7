// Included files resolved into a page, from the same commit (git) or folder (upload), before extraction.
//
// Pure: the producer that has the files hands in an IncludeHost (read a repository file, test whether a path
// exists); this module finds the directives (include-directives.ts), resolves each path against the folder
// its generator reads it from, confined to the repository, takes the part asked for (include-select.ts) and
// writes it into the page as the generator would: a fenced block, a code-block directive, or the lines in
// place. A directive that cannot be resolved stays as written and is reported. Output is bounded: a number
// of directives, a size per file and for the whole page, a nesting depth.
import { parse as parseYaml } from 'yaml';
import { languageFromFilename } from './filename.js';
import { scanAdoc, scanMarkdown, scanRst } from './include-directives.js';
import type { Directive, DirectiveScanner, IncludeBase, PartSpec } from './include-directives.js';
import { dedentLines, reindentLines, selectBetweenText, selectLines, selectPyObject, selectRegion, selectSection, selectTags } from './include-select.js';

/** Where includes are read from: the checkout or the uploaded folder, its paths relative to its root. */
export interface IncludeHost {
  /** A file's text; null when there is no such file; `refused` with why it may not be read. */
  read(repoPath: string): string | { refused: string } | null;
  /** Whether a file or folder exists (for mkdocs.yml, .vitepress/, conf.py, docusaurus.config.js). */
  exists(repoPath: string): boolean;
}

export interface UnresolvedInclude {
  /** The page (or included file) that holds the directive. */
  path: string;
  include: string;
  reason: string;
}

export interface IncludeOutcome {
  text: string;
  /** Directives replaced by what they include. */
  resolved: number;
  /** Directives kept as written. */
  unresolved: number;
  /** The first of those, with why. */
  problems: UnresolvedInclude[];
  /** Every repository file the expansion read (included files and generator configs), for change tracking. */
  files: string[];
}

/** A file included beyond this is a generated dump, not an example. */
export const MAX_INCLUDED_BYTES = 1024 * 1024;
// The page with its includes stays within what an upload may hold.
const MAX_PAGE_CHARS = 10 * 1024 * 1024;
const MAX_INCLUDES_PER_PAGE = 1000;
const MAX_DEPTH = 4;
const MAX_PATH = 1000;
const MAX_REPORTED = 100;

type Format = 'markdown' | 'rst' | 'adoc';

export function includeFormat(filePath: string): Format | null {
  const lower = filePath.toLowerCase();
  if (/\.(?:md|mdx|markdown)$/.test(lower)) return 'markdown';
  if (/\.(?:rst|rest)$/.test(lower)) return 'rst';
  if (/\.(?:adoc|asciidoc|asc)$/.test(lower)) return 'adoc';
  return null;
}

const SCANNERS: Record<Format, DirectiveScanner> = { markdown: scanMarkdown, rst: scanRst, adoc: scanAdoc };

/** Folder of a repository path ('' for the root). */
function dirname(repoPath: string): string {
  const slash = repoPath.lastIndexOf('/');
  return slash < 0 ? '' : repoPath.slice(0, slash);
}

/**
 * `relative` joined to the folder `base`, normalised; null when it is absolute, a URL, leaves the repository
 * (`..` above the root), or holds what no repository path should (NUL, control characters, backslashes).
 */
export function joinRepoPath(base: string, relative: string): string | null {
  if (relative.length === 0 || relative.length > MAX_PATH) return null;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(relative) || /^[a-z][a-z0-9+.-]*:/i.test(relative) || relative.startsWith('/')) return null;
  const out: string[] = base === '' ? [] : base.split('/');
  for (const segment of relative.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (out.length === 0) return null;
      out.pop();
    } else {
      out.push(segment);
    }
  }
  return out.length === 0 ? null : out.join('/');
}

/** The folders a page's generator reads its includes from, found once per page and its ancestors. */
interface Roots {
  mkdocs: string | null;
  snippets: string[];
  mdxInclude: string | null;
  site: string | null;
  sphinx: string | null;
  docusaurus: string | null;
  configs: string[];
}

function ancestors(repoPath: string): string[] {
  const out: string[] = [];
  let dir = dirname(repoPath);
  for (;;) {
    out.push(dir);
    if (dir === '') return out;
    dir = dirname(dir);
  }
}

function nearest(repoPath: string, host: IncludeHost, names: readonly string[]): { dir: string; file: string } | null {
  for (const dir of ancestors(repoPath)) {
    for (const name of names) {
      const file = dir === '' ? name : `${dir}/${name}`;
      if (host.exists(file)) return { dir, file };
    }
  }
  return null;
}

/** A markdown extension's settings in mkdocs.yml (`markdown_extensions` as a list or a mapping). */
function extensionConfig(config: unknown, name: string): Record<string, unknown> | null {
  const list = (config as { markdown_extensions?: unknown } | null)?.markdown_extensions;
  const entries = Array.isArray(list) ? list : list && typeof list === 'object' ? [list] : [];
  for (const entry of entries) {
    if (entry && typeof entry === 'object' && name in entry) {
      const value = (entry as Record<string, unknown>)[name];
      return value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
    }
  }
  return null;
}

function readMkdocs(host: IncludeHost, file: string, dir: string, roots: Roots): void {
  roots.mkdocs = dir;
  roots.configs.push(file);
  const text = host.read(file);
  if (typeof text !== 'string') return;
  let config: unknown;
  try {
    config = parseYaml(text, { maxAliasCount: 50, logLevel: 'silent' });
  } catch {
    return;
  }
  const basePaths = extensionConfig(config, 'pymdownx.snippets')?.base_path;
  const list = typeof basePaths === 'string' ? [basePaths] : Array.isArray(basePaths) ? basePaths.filter((p): p is string => typeof p === 'string') : [];
  roots.snippets = list.slice(0, 20).flatMap((p) => {
    const joined = p === '.' ? dir : joinRepoPath(dir, p);
    return joined === null ? [] : [joined];
  });
  const mdxBase = extensionConfig(config, 'mdx_include')?.base_path;
  if (typeof mdxBase === 'string') roots.mdxInclude = mdxBase === '.' ? dir : joinRepoPath(dir, mdxBase);
}

function findRoots(pagePath: string, host: IncludeHost): Roots {
  const roots: Roots = { mkdocs: null, snippets: [], mdxInclude: null, site: null, sphinx: null, docusaurus: null, configs: [] };
  const mkdocs = nearest(pagePath, host, ['mkdocs.yml', 'mkdocs.yaml']);
  if (mkdocs) readMkdocs(host, mkdocs.file, mkdocs.dir, roots);
  roots.site = nearest(pagePath, host, ['.vitepress'])?.dir ?? null;
  roots.sphinx = nearest(pagePath, host, ['conf.py'])?.dir ?? null;
  roots.docusaurus = nearest(pagePath, host, ['docusaurus.config.js', 'docusaurus.config.ts', 'docusaurus.config.mjs'])?.dir ?? null;
  return roots;
}

/** The folders to try for a directive's path, in order. */
function baseFolders(base: IncludeBase, from: string, roots: Roots): string[] {
  const here = dirname(from);
  switch (base) {
    case 'page':
      return [here];
    case 'mkdocs':
      return [roots.mdxInclude ?? roots.mkdocs ?? here];
    case 'snippets':
      // pymdown's default base path is the folder MkDocs runs in, where mkdocs.yml is.
      return [...(roots.snippets.length > 0 ? roots.snippets : [roots.mkdocs ?? '']), here];
    case 'site':
      return [roots.site ?? here];
    case 'sphinx':
      return [roots.sphinx ?? ''];
    case 'docusaurus':
      return [roots.docusaurus ?? ''];
  }
}

/** The part of a file a directive asks for; a string says why it is not there. */
function selectPart(text: string, part: PartSpec): { text: string } | string {
  let out: string | null = text.replace(/\r\n?/g, '\n');
  if (part.pyobject !== undefined) out = selectPyObject(out, part.pyobject);
  if (out === null) return `no ${part.pyobject} in the file`;
  if (part.region !== undefined) out = selectRegion(out, part.region);
  if (out === null) return `no region ${part.region} in the file`;
  if (part.section !== undefined) out = selectSection(out, part.section);
  if (out === null) return `no section ${part.section} in the file`;
  if (part.tags !== undefined) out = selectTags(out, part.tags);
  if (out === null) return `no tag ${part.tags?.join(';')} in the file`;
  if (part.startAfter !== undefined || part.startAt !== undefined || part.endBefore !== undefined || part.endAt !== undefined) out = selectBetweenText(out, part);
  if (out === null) return 'a start or end marker is not in the file';
  if (part.lines !== undefined) out = selectLines(out, part.lines);
  if (out === null) return 'no line in the range';
  if (part.dedent !== undefined) out = dedentLines(out, part.dedent === true ? undefined : part.dedent);
  if (part.indent !== undefined) out = reindentLines(out, part.indent);
  if (part.prepend !== undefined) out = `${part.prepend}\n${out}`;
  if (part.append !== undefined) out = `${out}\n${part.append}`;
  return { text: out.replace(/\n+$/, '') };
}

function fenceFor(code: string): string {
  let longest = 0;
  for (const run of code.match(/`{3,}/g) ?? []) longest = Math.max(longest, run.length);
  return '`'.repeat(Math.max(3, longest + 1));
}

function quoted(value: string): string {
  return value.replace(/["\n]/g, ' ').trim();
}

/** The included text as the page's own lines. */
function render(d: Directive, file: string, text: string, format: Format): string[] {
  const indentLines = (t: string, pad: string): string[] => t.split('\n').map((l) => (l === '' ? '' : pad + l));
  if (d.output.kind === 'raw') return indentLines(text, d.indent);
  const lang = d.output.lang ?? languageFromFilename(file) ?? '';
  if (format === 'rst') {
    const pad = `${d.indent}   `;
    const head = [`${d.indent}.. code-block:: ${lang}`.trimEnd(), ...(d.output.title ? [`${pad}:caption: ${quoted(d.output.title)}`] : []), ''];
    return [...head, ...indentLines(text, pad)];
  }
  const fence = fenceFor(text);
  const meta = d.output.title ? ` title="${quoted(d.output.title)}"` : d.output.label ? ` [${d.output.label.replace(/[\]\n]/g, ' ').trim()}]` : '';
  return [`${d.indent}${fence}${lang}${meta}`, ...indentLines(text, d.indent), `${d.indent}${fence}`];
}

interface Run {
  host: IncludeHost;
  roots: Roots;
  resolved: number;
  unresolved: number;
  problems: UnresolvedInclude[];
  files: Set<string>;
  size: number;
  directives: number;
}

function report(run: Run, from: string, d: Directive, reason: string): void {
  run.unresolved++;
  if (run.problems.length < MAX_REPORTED) run.problems.push({ path: from, include: d.source, reason });
}

/** The directive's file and text, or why not. */
function resolveOne(run: Run, from: string, d: Directive): { file: string; text: string } | string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(d.target)) return 'a URL, not a file of the repository';
  let why = 'no such file in the repository';
  for (const folder of baseFolders(d.base, from, run.roots)) {
    const file = joinRepoPath(folder, d.target);
    if (file === null) {
      why = 'outside the repository';
      continue;
    }
    const text = run.host.read(file);
    if (text === null) continue;
    if (typeof text !== 'string') return text.refused;
    if (text.length > MAX_INCLUDED_BYTES) return `larger than ${MAX_INCLUDED_BYTES / 1024} KB`;
    run.files.add(file);
    return { file, text };
  }
  return why;
}

/** `text` (the file `from`) with its directives expanded; `stack` holds the files being expanded, for cycles. */
function expand(run: Run, from: string, text: string, format: Format, stack: readonly string[]): string {
  const lines = text.split('\n');
  const directives = SCANNERS[format](lines);
  if (directives.length === 0) return text;
  const out: string[] = [];
  let next = 0;
  for (const d of directives) {
    if (d.start < next) continue;
    for (let k = next; k < d.start; k++) out.push(lines[k] as string);
    next = d.end;
    const original = lines.slice(d.start, d.end);
    const keep = (reason: string): void => {
      report(run, from, d, reason);
      out.push(...original);
    };
    if (++run.directives > MAX_INCLUDES_PER_PAGE) {
      keep(`more than ${MAX_INCLUDES_PER_PAGE} includes in the page`);
      continue;
    }
    if (run.size >= MAX_PAGE_CHARS) {
      keep(`the page would pass ${MAX_PAGE_CHARS / 1024 / 1024} MB`);
      continue;
    }
    const found = resolveOne(run, from, d);
    if (typeof found === 'string') {
      keep(found);
      continue;
    }
    if (stack.includes(found.file)) {
      keep('includes itself');
      continue;
    }
    const part = selectPart(found.text, d.part);
    if (typeof part === 'string') {
      keep(part);
      continue;
    }
    const nestedFormat = d.output.kind === 'raw' && d.output.nested ? includeFormat(found.file) : null;
    const body = nestedFormat !== null && stack.length < MAX_DEPTH ? expand(run, found.file, part.text, nestedFormat, [...stack, found.file]) : part.text;
    const rendered = render(d, found.file, body, format);
    const added = rendered.reduce((n, l) => n + l.length + 1, 0);
    if (run.size + added > MAX_PAGE_CHARS) {
      keep(`the page would pass ${MAX_PAGE_CHARS / 1024 / 1024} MB`);
      continue;
    }
    run.size += added;
    run.resolved++;
    out.push(...rendered);
  }
  for (let k = next; k < lines.length; k++) out.push(lines[k] as string);
  return out.join('\n');
}

/** Whether a page has any include directive (the producer can skip finding where its includes come from). */
export function hasIncludes(pagePath: string, text: string): boolean {
  const format = includeFormat(pagePath);
  return format !== null && SCANNERS[format](text.split('\n')).length > 0;
}

/** A page's text with its includes resolved through `host`; a page of another format comes back as it is. */
export function expandIncludes(pagePath: string, text: string, host: IncludeHost): IncludeOutcome {
  const format = includeFormat(pagePath);
  if (format === null || !hasIncludes(pagePath, text)) return { text, resolved: 0, unresolved: 0, problems: [], files: [] };
  const roots = findRoots(pagePath, host);
  const run: Run = { host, roots, resolved: 0, unresolved: 0, problems: [], files: new Set(roots.configs), size: text.length, directives: 0 };
  const expanded = expand(run, pagePath, text, format, [pagePath]);
  return { text: expanded, resolved: run.resolved, unresolved: run.unresolved, problems: run.problems, files: [...run.files].sort() };
}
