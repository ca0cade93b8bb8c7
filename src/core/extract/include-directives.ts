// Include directives as documentation generators write them, found line by line (pure, linear):
//
//   markdown  fastapi   {* ../../docs_src/app.py ln[1:9] hl[3] title["app/main.py"] *}   (MkDocs project folder)
//             mdx_include {! ../../docs_src/app.py !}                                   (MkDocs project folder)
//             pymdown   --8<-- "path/file.py:section"  and the block form between two --8<-- lines
//             VitePress <<< @/snippets/a.ts#region{1,2 ts} [label]   <!--@include: ./part.md{3,}-->
//             MDX       import Src from '!!raw-loader!./a.js'  …  <CodeBlock language="js">{Src}</CodeBlock>
//   rst       Sphinx    .. literalinclude:: path   with :lines: :start-after: :pyobject: :caption: …
//   AsciiDoc            include::path[tag=name,lines=1..3,indent=0]
//
// A directive says what file it names (as written, and which folder it is relative to), which part of it,
// and how its text goes into the page: as a code block, or as lines in place (inside a fence, or markdown
// and AsciiDoc that may include more).
import type { LineRange } from './include-select.js';
import { parseLineRanges } from './include-select.js';
import { fencedLines } from './markdown-mdx.js';

/** The folder a directive's path is relative to. */
export type IncludeBase = 'page' | 'mkdocs' | 'snippets' | 'site' | 'sphinx' | 'docusaurus';

export interface PartSpec {
  lines?: LineRange[];
  region?: string;
  section?: string;
  tags?: string[];
  pyobject?: string;
  startAfter?: string;
  startAt?: string;
  endBefore?: string;
  endAt?: string;
  dedent?: number | true;
  indent?: number;
  prepend?: string;
  append?: string;
}

export type IncludeOutput =
  /** A fenced block (markdown) or a code-block directive (rst). */
  | { kind: 'code'; lang: string | null; title: string | null; label: string | null }
  /** The text in place of the directive's lines; `nested`: it may include further files. */
  | { kind: 'raw'; nested: boolean };

export interface Directive {
  /** Lines [start, end) of the document that the directive takes. */
  start: number;
  end: number;
  indent: string;
  target: string;
  base: IncludeBase;
  part: PartSpec;
  output: IncludeOutput;
  /** The directive as written (one line), for the job's report. */
  source: string;
}

/** The directives of a document in order, with no two overlapping. */
export type DirectiveScanner = (lines: readonly string[]) => Directive[];

const FENCE = /^[ \t]*(?:`{3,}|~{3,})/;
const MAX_DIRECTIVES = 2000;

function directive(lines: readonly string[], start: number, end: number, rest: Omit<Directive, 'start' | 'end' | 'source'>): Directive {
  return { start, end, source: (lines[start] as string).trim().slice(0, 300), ...rest };
}

// fastapi's markdown-include-variants: the path, then `ln[…]`, `hl[…]`, `title["…"]` in any order.
const VARIANTS = /^([ \t]*)\{\*[ \t]+(\S+)(.*?)\*\}[ \t]*$/;
// mdx_include: `{!`, a recursion switch (+ or -), the path, an optional `| encoding` or `| lines=…`.
const MDX_INCLUDE = /^([ \t]*)\{!([+\->]?)[ \t]*([^|!\s][^|!]*?)[ \t]*(?:\|[ \t]*([^!]*?)[ \t]*)?!\}[ \t]*$/;
const SNIPPET_LINE = /^([ \t]*)--8<--[ \t]+(["'])(.+?)\2[ \t]*$/;
const SNIPPET_BLOCK = /^([ \t]*)--8<--[ \t]*$/;
const VITEPRESS_CODE = /^([ \t]*)<<<[ \t]+(\S+?)(?:\{([^}]*)\})?(?:[ \t]+\[([^\]]*)\])?[ \t]*$/;
const VITEPRESS_MD = /^([ \t]*)<!--[ \t]*@include:[ \t]*(\S+?)(?:\{(\d*),(\d*)\})?[ \t]*-->[ \t]*$/;
const RAW_IMPORT = /^import[ \t]+(\w+)[ \t]+from[ \t]+['"](?:(?:!!)?raw-loader!([^'"]+)|([^'"]+)\?raw)['"];?[ \t]*$/;
const CODE_BLOCK_OPEN = /^([ \t]*)<CodeBlock\b/;
const CODE_BLOCK = /^<CodeBlock\b([^>]*)>\s*\{\s*(\w+)\s*\}\s*<\/CodeBlock>$/;

/** `#region` or `:section`/`:a:b` suffixes of a path. */
function splitSnippetPath(raw: string): { target: string; part: PartSpec } {
  const m = /^(.*?\.[\w-]+):(\d*):?(\d*)$/.exec(raw) ?? null;
  if (m && (m[2] !== '' || m[3] !== '')) {
    const from = m[2] === '' ? 1 : Number(m[2]);
    return { target: m[1] as string, part: { lines: [{ from, to: m[3] === '' ? null : Number(m[3]) }] } };
  }
  const s = /^(.*?\.[\w-]+):([\w-]+)$/.exec(raw);
  if (s) return { target: s[1] as string, part: { section: s[2] as string } };
  return { target: raw, part: {} };
}

function variantsDirective(lines: readonly string[], i: number, m: RegExpExecArray): Directive {
  const options = m[3] as string;
  const part: PartSpec = {};
  const ln = /\bln\[([^\]]*)\]/.exec(options);
  const lines_ = ln ? parseLineRanges(ln[1] as string, 'colon') : null;
  if (lines_) part.lines = lines_;
  const title = /\btitle\[["']?([^\]"']*)["']?\]/.exec(options)?.[1] ?? null;
  return directive(lines, i, i + 1, { indent: m[1] as string, target: m[2] as string, base: 'mkdocs', part, output: { kind: 'code', lang: null, title, label: null } });
}

/** A VitePress path: `@/` from the source folder, else from the page's; `#name` a region. */
function vitepressTarget(raw: string): { target: string; base: IncludeBase; part: PartSpec } {
  const hash = raw.indexOf('#');
  const part: PartSpec = hash > 0 ? { region: raw.slice(hash + 1) } : {};
  const file = hash > 0 ? raw.slice(0, hash) : raw;
  return file.startsWith('@/') ? { target: file.slice(2), base: 'site', part } : { target: file, base: 'page', part };
}

function vitepressCode(lines: readonly string[], i: number, m: RegExpExecArray): Directive {
  // `{1,3-4 ts:line-numbers}`: highlighted lines, then the language.
  const lang = (m[3] ?? '').split(/\s+/).find((w) => w !== '' && !/^[\d,\s-]+$/.test(w)) ?? null;
  const output: IncludeOutput = { kind: 'code', lang: lang?.replace(/:.*$/, '') || null, title: null, label: m[4]?.trim() || null };
  return directive(lines, i, i + 1, { indent: m[1] as string, ...vitepressTarget(m[2] as string), output });
}

function vitepressMarkdown(lines: readonly string[], i: number, m: RegExpExecArray): Directive {
  const { target, base, part } = vitepressTarget(m[2] as string);
  if (m[3] !== undefined && (m[3] !== '' || m[4] !== '')) part.lines = [{ from: m[3] === '' ? 1 : Number(m[3]), to: m[4] === '' ? null : Number(m[4]) }];
  return directive(lines, i, i + 1, { indent: m[1] as string, target, base, part, output: { kind: 'raw', nested: true } });
}

/** The paths between two `--8<--` lines (lines starting with `;` are commented out). */
function snippetBlock(lines: readonly string[], i: number, indent: string): Directive[] | null {
  let end = i + 1;
  while (end < lines.length && end - i < 100 && !SNIPPET_BLOCK.test(lines[end] as string)) end++;
  if (end >= lines.length || !SNIPPET_BLOCK.test(lines[end] as string)) return null;
  const paths = lines
    .slice(i + 1, end)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith(';'));
  // One directive takes the whole block; the others insert nothing of their own lines.
  return paths.map((p, k) => {
    const { target, part } = splitSnippetPath(p);
    return { start: k === 0 ? i : end + 1, end: end + 1, indent, target, base: 'snippets', part, output: { kind: 'raw', nested: true }, source: `--8<-- ${p}`.slice(0, 300) };
  });
}

/** MDX raw imports by their name: `import Src from '!!raw-loader!./a.js'` and Vite's `./a.js?raw`. */
function rawImports(lines: readonly string[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const line of lines) {
    if (!line.startsWith('import')) continue;
    const m = RAW_IMPORT.exec(line);
    if (m) names.set(m[1] as string, (m[2] ?? m[3]) as string);
  }
  return names;
}

function jsxString(attributes: string, name: string): string | null {
  const m = new RegExp(`\\b${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|\\{\\s*["'\`]([^"'\`]*)["'\`]\\s*\\})`).exec(attributes);
  return m ? (m[1] ?? m[2] ?? m[3] ?? null) : null;
}

/** `<CodeBlock …>{Name}</CodeBlock>` over up to five lines, `Name` a raw import. */
function codeBlockDirective(lines: readonly string[], i: number, indent: string, imports: Map<string, string>): Directive | null {
  for (let end = i + 1; end <= Math.min(lines.length, i + 5); end++) {
    const joined = lines
      .slice(i, end)
      .map((l) => l.trim())
      .join(' ');
    if (!joined.includes('</CodeBlock>')) continue;
    const m = CODE_BLOCK.exec(joined);
    const target = m ? imports.get(m[2] as string) : undefined;
    if (!m || target === undefined) return null;
    const attributes = m[1] as string;
    const lang = jsxString(attributes, 'language') ?? jsxString(attributes, 'className')?.replace(/^language-/, '') ?? null;
    const title = jsxString(attributes, 'title');
    const base = target.startsWith('@site/') ? 'docusaurus' : 'page';
    return directive(lines, i, end, { indent, target: base === 'docusaurus' ? target.slice(6) : target, base, part: {}, output: { kind: 'code', lang, title, label: null } });
  }
  return null;
}

/** A markdown line outside fences: the directive it starts, if any. */
function markdownDirective(lines: readonly string[], i: number, imports: Map<string, string>): Directive[] | null {
  const line = lines[i] as string;
  if (line.includes('{*')) {
    const m = VARIANTS.exec(line);
    if (m) return [variantsDirective(lines, i, m)];
  }
  if (line.includes('<<<')) {
    const m = VITEPRESS_CODE.exec(line);
    if (m) return [vitepressCode(lines, i, m)];
  }
  if (line.includes('@include')) {
    const m = VITEPRESS_MD.exec(line);
    if (m) return [vitepressMarkdown(lines, i, m)];
  }
  if (imports.size > 0 && CODE_BLOCK_OPEN.test(line)) {
    const d = codeBlockDirective(lines, i, /^[ \t]*/.exec(line)?.[0] ?? '', imports);
    if (d) return [d];
  }
  return inFenceDirective(lines, i, true);
}

/** mdx_include and pymdown lines: text in place, in a fence or out of one. */
function inFenceDirective(lines: readonly string[], i: number, outside: boolean): Directive[] | null {
  const line = lines[i] as string;
  if (line.includes('{!')) {
    const m = MDX_INCLUDE.exec(line);
    if (m) {
      const lines_ = /lines\s*=\s*(.+)$/.exec(m[4] ?? '')?.[1];
      const ranges = lines_ ? parseLineRanges(lines_.replace(/\s+/g, ','), 'sphinx') : null;
      const part: PartSpec = ranges ? { lines: ranges } : {};
      return [directive(lines, i, i + 1, { indent: m[1] as string, target: (m[3] as string).trim(), base: 'mkdocs', part, output: { kind: 'raw', nested: outside && m[2] !== '-' } })];
    }
  }
  if (line.includes('--8<--')) {
    const m = SNIPPET_LINE.exec(line);
    if (m) {
      const { target, part } = splitSnippetPath(m[3] as string);
      return [directive(lines, i, i + 1, { indent: m[1] as string, target, base: 'snippets', part, output: { kind: 'raw', nested: outside } })];
    }
    const block = SNIPPET_BLOCK.exec(line);
    if (block) return snippetBlock(lines, i, block[1] as string);
  }
  return null;
}

export const scanMarkdown: DirectiveScanner = (lines) => {
  const out: Directive[] = [];
  const imports = rawImports(lines);
  const fenced = fencedLines(lines);
  for (let i = 0; i < lines.length && out.length < MAX_DIRECTIVES; i++) {
    // A fence's own lines are never directives; the lines between them may be mdx_include or pymdown ones.
    const found = !fenced[i] ? markdownDirective(lines, i, imports) : FENCE.test(lines[i] as string) ? null : inFenceDirective(lines, i, false);
    if (found !== null && found.length > 0) {
      out.push(...found);
      i = Math.max(...found.map((d) => d.end)) - 1;
    }
  }
  return out;
};

const LITERALINCLUDE = /^([ \t]*)\.\.[ \t]+literalinclude::[ \t]*(\S.*?)[ \t]*$/;
const RST_OPTION = /^[ \t]+:([\w-]+):[ \t]*(.*?)[ \t]*$/;

function rstPart(options: Map<string, string>): PartSpec | null {
  const part: PartSpec = {};
  const lines = options.get('lines');
  if (lines !== undefined) {
    const ranges = parseLineRanges(lines, 'sphinx');
    if (ranges === null) return null;
    part.lines = ranges;
  }
  const text = (key: string): string | undefined => options.get(key);
  if (text('pyobject')) part.pyobject = text('pyobject') as string;
  if (text('start-after')) part.startAfter = text('start-after') as string;
  if (text('start-at')) part.startAt = text('start-at') as string;
  if (text('end-before')) part.endBefore = text('end-before') as string;
  if (text('end-at')) part.endAt = text('end-at') as string;
  if (options.has('dedent')) part.dedent = /^\d+$/.test(text('dedent') ?? '') ? Number(text('dedent')) : true;
  if (text('prepend')) part.prepend = text('prepend') as string;
  if (text('append')) part.append = text('append') as string;
  return part;
}

export const scanRst: DirectiveScanner = (lines) => {
  const out: Directive[] = [];
  for (let i = 0; i < lines.length && out.length < MAX_DIRECTIVES; i++) {
    const line = lines[i] as string;
    if (!line.includes('literalinclude::')) continue;
    const m = LITERALINCLUDE.exec(line);
    if (!m) continue;
    const options = new Map<string, string>();
    let end = i + 1;
    for (; end < lines.length; end++) {
      const o = RST_OPTION.exec(lines[end] as string);
      if (!o) break;
      options.set((o[1] as string).toLowerCase(), o[2] as string);
    }
    const part = rstPart(options);
    if (part === null) continue;
    let target = m[2] as string;
    const base = target.startsWith('/') ? 'sphinx' : 'page';
    if (base === 'sphinx') target = target.replace(/^\/+/, '');
    const output: IncludeOutput = { kind: 'code', lang: options.get('language') ?? null, title: options.get('caption') ?? null, label: null };
    out.push(directive(lines, i, end, { indent: m[1] as string, target, base, part, output }));
    i = end - 1;
  }
  return out;
};

const ADOC_INCLUDE = /^include::([^[\s][^[]*)\[(.*)\][ \t]*$/;
const ADOC_ATTRIBUTE = /^:([\w][\w-]*):[ \t]*(.*?)[ \t]*$/;

function adocPart(attributes: string): PartSpec {
  const part: PartSpec = {};
  const value = (name: string): string | undefined => {
    const m = new RegExp(`(?:^|,)\\s*${name}\\s*=\\s*(?:"([^"]*)"|([^,]*))`).exec(attributes);
    return m ? (m[1] ?? m[2] ?? '').trim() : undefined;
  };
  const lines = value('lines');
  const ranges = lines === undefined ? null : parseLineRanges(lines, 'asciidoc');
  if (ranges) part.lines = ranges;
  const tags = value('tags') ?? value('tag');
  if (tags)
    part.tags = tags
      .split(/[;,]/)
      .map((t) => t.trim())
      .filter((t) => t !== '');
  const indent = value('indent');
  if (indent !== undefined && /^\d+$/.test(indent)) part.indent = Number(indent);
  return part;
}

/** `{name}` references replaced by the document's attributes (`:name: value` lines); null when one is unknown. */
function substitute(target: string, attributes: Map<string, string>): string | null {
  let unknown = false;
  const out = target.replace(/\{([\w-]+)\}/g, (_, name: string) => {
    const v = attributes.get(name);
    if (v === undefined) unknown = true;
    return v ?? '';
  });
  return unknown ? null : out;
}

export const scanAdoc: DirectiveScanner = (lines) => {
  const out: Directive[] = [];
  const attributes = new Map<string, string>();
  for (let i = 0; i < lines.length && out.length < MAX_DIRECTIVES; i++) {
    const line = lines[i] as string;
    const a = line.startsWith(':') ? ADOC_ATTRIBUTE.exec(line) : null;
    if (a) attributes.set(a[1] as string, a[2] as string);
    if (!line.startsWith('include::')) continue;
    const m = ADOC_INCLUDE.exec(line);
    if (!m) continue;
    const target = substitute(m[1] as string, attributes) ?? (m[1] as string);
    const nested = /\.(?:adoc|asciidoc|asc)$/i.test(target);
    out.push(directive(lines, i, i + 1, { indent: '', target, base: 'page', part: adocPart(m[2] as string), output: { kind: 'raw', nested } }));
  }
  return out;
};
