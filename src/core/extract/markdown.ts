// Markdown, MDX and plain-text documents (mdast-util-from-markdown with GFM and
// frontmatter).
//
// MDX is read as markdown, without micromark-extension-mdxjs: that extension
// needs acorn and rejects the whole file on one bad expression, while CommonMark
// already parses JSX lines as HTML blocks or paragraphs. We drop `import` and
// `export` lines from the context, read Docusaurus `<TabItem label="...">` tags
// for tab labels, and run HTML blocks that hold <pre>/<code> through the HTML
// extractor.
//
// Blocks are read by markdown-blocks.ts and inline text by markdown-inline.ts, which read the
// common shape of documentation many times faster than micromark; a chunk they don't read exactly
// is parsed with micromark (mdast-util-from-markdown), and a paragraph whose inline markdown only
// micromark reads exactly is parsed on its own with it.
//
// Python-Markdown's indented containers (MkDocs admonitions `!!! note` and
// Material content tabs `=== "Label"`) parse as indented code under CommonMark;
// an indented block right after such a marker is parsed again as markdown.
import type { Code, Heading, Html, Nodes, Paragraph, Root } from 'mdast';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { frontmatterFromMarkdown } from 'mdast-util-frontmatter';
import { gfmFromMarkdown } from 'mdast-util-gfm';
import { frontmatter } from 'micromark-extension-frontmatter';
import { gfm } from 'micromark-extension-gfm';
import { parse as parseYaml } from 'yaml';
import { resolveContexts, streamHeadings, type StreamItem } from './context.js';
import { htmlFragmentBlocks } from './html.js';
import { type ScannedBlocks, scanBlocks, Unsupported } from './markdown-blocks.js';
import { markdownChunks } from './markdown-chunks.js';
import { splitMarkdownComments } from './markdown-comments.js';
import { parseFenceInfo } from './markdown-fence.js';
import { inlineText } from './markdown-inline.js';
import { jsxAttribute, looksLikeMdx, mdxHeadingId, mdxToMarkdown, readJsxBlock, separateJsxLines, stripMdxComments } from './markdown-mdx.js';
import type { JsxTag } from './markdown-mdx.js';
import { finaliseSnippets, preview, type RawBlock } from './snippet.js';
import type { ExtractedPage, ExtractResult, SkippedBlock } from './types.js';
import { collapseSpaces } from './whitespace.js';

const MAX_REPARSE_DEPTH = 3;

/** Plain text of an mdast subtree (inline code kept with its text). */
function mdText(node: Nodes): string {
  let out = '';
  const stack: Nodes[] = [node];
  while (stack.length > 0) {
    const n = stack.pop() as Nodes;
    if ('value' in n && typeof n.value === 'string' && n.type !== 'html') {
      out += n.type === 'inlineCode' ? `\`${n.value}\`` : n.value;
    } else if (n.type === 'break') {
      out += ' ';
    } else if (n.type === 'image') {
      out += n.alt ?? '';
    }
    if ('children' in n) {
      const ch = n.children as Nodes[];
      for (let i = ch.length - 1; i >= 0; i--) stack.push(ch[i] as Nodes);
    }
  }
  return out;
}

/** GitHub-style heading slugs (what most markdown hosts use as heading ids). */
export class Slugger {
  private readonly seen = new Map<string, number>();
  slug(text: string): string {
    const base = text
      .toLowerCase()
      .trim()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = this.seen.get(base);
    this.seen.set(base, (n ?? 0) + 1);
    return n === undefined ? base : `${base}-${n}`;
  }
}

const CUSTOM_ID = /\s*\{\s*#([\w:.-]+)[^}]*\}\s*$/;

/** Parses one chunk of markdown; calls `onFenced` for each fenced (not indented) code node. */
export type ChunkParser = (text: string, onFenced: (code: Code) => void) => Root;

interface MdState {
  parse: ChunkParser;
  items: StreamItem[];
  blocks: RawBlock[];
  /** Blocks left out on purpose (a Sandpack file the reader does not see). */
  skipped: SkippedBlock[];
  slugger: Slugger;
  tab: string | null;
  h1: string | null;
  frontmatter: Record<string, unknown> | null;
  mdx: boolean;
  /** An `.mdx` file: MDX has no indented code, so an indented block is text. */
  mdxFile: boolean;
  /** Open <CodeGroup> components: a fence's bare title names its tab. */
  codeGroups: number;
  /** Open pymdown blocks (`/// tip`, `//// tab | Label`), by the number of slashes that close them. */
  pymdown: Array<{ slashes: number; tab: boolean }>;
}

const ADMONITION = /^(?:!!!|\?\?\?\+?)\s*[\w-]+(?:\s+"[^"]*")?\s*$/;
const MATERIAL_TAB = /^===\+?\s*"([^"]+)"\s*$/;
const TAB_ITEM_LABEL = /<TabItem\b[^>]*?\blabel\s*=\s*(?:"([^"]+)"|'([^']+)'|\{\s*["'`]([^"'`]+)["'`]\s*\})/;
const TAB_ITEM_VALUE = /<TabItem\b[^>]*?\bvalue\s*=\s*(?:"([^"]+)"|'([^']+)'|\{\s*["'`]([^"'`]+)["'`]\s*\})/;

// Built once: constructing the extensions cost as much as parsing a short page.
const PARSE_OPTIONS = {
  extensions: [gfm(), frontmatter(['yaml', 'toml'])],
  mdastExtensions: [gfmFromMarkdown(), frontmatterFromMarkdown(['yaml', 'toml'])],
};

function parseTree(text: string): Root {
  return fromMarkdown(text, PARSE_OPTIONS);
}

function readFrontmatter(value: string): Record<string, unknown> | null {
  try {
    const v: unknown = parseYaml(value, { maxAliasCount: 50 });
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A paragraph that is only a tab or admonition marker: the indented block right after it is its content. */
interface Marker {
  kind: 'admonition' | 'tab' | 'jsx';
  tab: string | null;
}
const ADMONITION_MARKER: Marker = { kind: 'admonition', tab: null };
// A JSX component's tags: MDX has no indented code, so an indented block after them is the component's text.
const JSX_MARKER: Marker = { kind: 'jsx', tab: null };

function walkChildren(children: readonly Nodes[], st: MdState, depth: number): void {
  let marker: Marker | null = null;
  for (const node of children) {
    const prevMarker = marker;
    marker = null;
    switch (node.type) {
      case 'yaml':
        if (st.frontmatter === null) st.frontmatter = readFrontmatter(node.value);
        break;
      case 'heading':
        addHeading(node as Heading, st);
        break;
      case 'paragraph':
        marker = addParagraph(node as Paragraph, st);
        break;
      case 'code':
        addCode(node as Code, st, depth, prevMarker);
        break;
      case 'html':
        marker = addHtml((node as Html).value, st, depth) ? JSX_MARKER : null;
        break;
      case 'list':
      case 'listItem':
      case 'blockquote':
      case 'root':
        walkChildren(node.children as Nodes[], st, depth);
        break;
      default:
        break;
    }
  }
}

function addHeading(h: Heading, st: MdState): void {
  let text = collapseSpaces(mdText(h)).trim();
  const mdxId = mdxHeadingId(text);
  const custom = mdxId === null ? CUSTOM_ID.exec(text) : null;
  let anchor: string;
  if (mdxId !== null) {
    text = mdxId.text;
    anchor = mdxId.id;
  } else if (custom?.[1]) {
    text = text.slice(0, custom.index).trim();
    anchor = custom[1];
  } else {
    anchor = st.slugger.slug(text);
  }
  if (h.depth === 1 && st.h1 === null) st.h1 = text;
  st.items.push({ kind: 'heading', level: h.depth, text, anchor: anchor || null });
  st.tab = null;
}

/** Prose, or the marker the paragraph is. */
function addParagraph(node: Paragraph, st: MdState): Marker | null {
  const text = mdText(node).trim();
  const tab = MATERIAL_TAB.exec(text);
  if (tab?.[1]) return { kind: 'tab', tab: tab[1] };
  if (ADMONITION.test(text)) return ADMONITION_MARKER;
  const kept: string[] = [];
  for (const line of text.split('\n')) {
    if (/^\s*:::/.test(line) || (st.mdx && /^\s*(?:import|export)\s/.test(line))) continue;
    const block = PYMDOWN_BLOCK.exec(line);
    if (block === null) kept.push(line);
    else pymdownBlock(block, st, kept);
  }
  const joined = kept.join(' ').trim();
  const prose = st.mdx ? stripMdxComments(joined).trim() : joined;
  if (prose.length > 0) st.items.push({ kind: 'prose', text: prose });
  return null;
}

// pymdown-extensions' blocks: `/// type | title` opens, a line of as many slashes closes; `//// tab | Label`.
const PYMDOWN_BLOCK = /^\s*(\/{3,})[ \t]*(?:([A-Za-z][\w-]*)[ \t]*(?:\|[ \t]*(.*?))?)?[ \t]*$/;

/** A pymdown block's marker line: a tab's label, an admonition's title kept as prose, a closing line. */
function pymdownBlock(m: RegExpExecArray, st: MdState, kept: string[]): void {
  const slashes = (m[1] as string).length;
  const name = m[2]?.toLowerCase();
  const title = m[3]?.trim() ?? '';
  if (name === undefined) {
    const open = st.pymdown.findLastIndex((b) => b.slashes === slashes);
    if (open >= 0 && st.pymdown.splice(open).some((b) => b.tab)) st.tab = null;
    return;
  }
  if (st.pymdown.length < 32) st.pymdown.push({ slashes, tab: name === 'tab' });
  if (name === 'tab') st.tab = title || null;
  else if (title !== '') kept.push(title);
}

/**
 * A code block; an indented one right after a marker is the marker's markdown content, parsed again, and so
 * is every indented block of an `.mdx` file.
 */
function addCode(c: Code, st: MdState, depth: number, prevMarker: Marker | null): void {
  const indented = !fencedHint.has(c);
  if (indented && (prevMarker !== null || st.mdxFile) && depth < MAX_REPARSE_DEPTH) {
    const saved = st.tab;
    if (prevMarker?.kind === 'tab') st.tab = prevMarker.tab;
    walkChildren(safeParse(c.value, st.parse).children as Nodes[], st, depth + 1);
    st.tab = saved;
    return;
  }
  const origin = indented ? 'indented' : 'fenced';
  const info = indented ? parseFenceInfo(null, null) : parseFenceInfo(c.lang, c.meta, st.codeGroups > 0);
  if (info.hidden) {
    st.skipped.push({ reason: 'hidden', tag: origin, preview: preview(c.value) });
    return;
  }
  addBlock(st, { code: c.value, origin, declaredLanguage: info.lang, filename: info.filename, tab: info.label ?? st.tab, caption: info.caption });
}

const TAB_COMPONENT = /(?:^|\.)Tab(?:Item)?$/;
const CODE_GROUP_COMPONENT = /(?:CodeGroup|CodeTabs)$/;

/** Tags that change how the blocks after them are labelled. */
function isStructural(tag: JsxTag): boolean {
  return TAB_COMPONENT.test(tag.name) || CODE_GROUP_COMPONENT.test(tag.name) || tag.name === 'Tabs';
}

function applyJsxTag(tag: JsxTag, st: MdState): void {
  if (CODE_GROUP_COMPONENT.test(tag.name)) {
    if (tag.closing) st.codeGroups = Math.max(0, st.codeGroups - 1);
    else if (!tag.selfClosing) st.codeGroups++;
  } else if (TAB_COMPONENT.test(tag.name) && !tag.closing) {
    st.tab = jsxAttribute(tag, 'label') ?? jsxAttribute(tag, 'title') ?? jsxAttribute(tag, 'value');
  } else {
    st.tab = null;
  }
}

/** An HTML block written as JSX: its tabs and code groups, and the markdown inside parsed as the page's own. */
function addJsx(v: string, st: MdState, depth: number): boolean {
  const parts = readJsxBlock(v, isStructural);
  if (parts === null) return false;
  for (const part of parts) {
    if ('tag' in part) applyJsxTag(part.tag, st);
    else if (depth < MAX_REPARSE_DEPTH) walkChildren(safeParse(part.text, st.parse).children as Nodes[], st, depth + 1);
  }
  return true;
}

/** Raw HTML: JSX components (true), Docusaurus tab items, and code blocks written as HTML. */
function addHtml(v: string, st: MdState, depth: number): boolean {
  if (st.mdx && addJsx(v, st, depth)) return true;
  const item = TAB_ITEM_LABEL.exec(v) ?? TAB_ITEM_VALUE.exec(v);
  if (item) st.tab = item[1] ?? item[2] ?? item[3] ?? null;
  else if (/<\/TabItem>|<\/?Tabs\b/.test(v)) st.tab = null;
  if (/<(?:pre|code|programlisting|screen)\b/i.test(v)) {
    for (const b of htmlFragmentBlocks(v)) addBlock(st, { ...b, tab: b.tab ?? st.tab });
  }
  return false;
}

// Fenced code nodes (by their source), to tell them from indented ones: mdast
// gives both `lang: null` when the fence has no info string.
const fencedHint = new WeakSet<Code>();

function markFenced(tree: Root, text: string, onFenced: (code: Code) => void): void {
  const stack: Nodes[] = [tree];
  while (stack.length > 0) {
    const n = stack.pop() as Nodes;
    if (n.type === 'code') {
      let off = n.position?.start.offset;
      if (off !== undefined) {
        // A fence may be indented by up to three spaces; four make an indented block.
        for (let k = 0; k < 3 && text[off] === ' '; k++) off++;
        const ch = text.slice(off, off + 3);
        if (ch === '```' || ch === '~~~') onFenced(n);
      }
    }
    if ('children' in n) for (const c of n.children as Nodes[]) stack.push(c);
  }
}

// mdast-util-from-markdown walks every event inside a list once for each list that encloses it
// (prepareList), so a document costs its size times its list nesting depth: nested lists whose
// indentation grows by two columns a line make that quadratic in the document's size. No real
// document nests anywhere near this deep; deeper containers are flattened to this depth before
// parsing.
const MAX_CONTAINER_PREFIX = 32;
// The leading indentation (columns) a list or block quote marker keeps. A list item's content starts
// at least two columns right of its marker, so this bounds nesting by indentation to half of it.
const MAX_MARKER_INDENT = 2 * MAX_CONTAINER_PREFIX;
const DEEP_PREFIX = new RegExp(`^(?:[ \\t]{0,3}(?:>[ \\t]?|[-*+][ \\t]+|\\d{1,9}[.)][ \\t]+)){${MAX_CONTAINER_PREFIX + 1}}`, 'm');
const CONTAINER = /^[ \t]{0,3}(?:>[ \t]?|[-*+][ \t]+|\d{1,9}[.)][ \t]+)/;
// A marker after enough whitespace to be indented past MAX_MARKER_INDENT columns, were it all tabs
// (four columns each); limitLineIndent counts the columns exactly.
const DEEP_MARKER = new RegExp(`^[ \\t]{${Math.ceil((MAX_MARKER_INDENT + 1) / 4)},}(?:>|[-*+](?:[ \\t]|$)|\\d{1,9}[.)](?:[ \\t]|$))`, 'm');
const MARKER_AFTER_INDENT = /^([ \t]+)(?=>|[-*+](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$))/;

/** Columns of leading whitespace, tabs to the next multiple of four as CommonMark counts them. */
function indentColumns(indent: string): number {
  let col = 0;
  for (const ch of indent) col = ch === '\t' ? col + 4 - (col % 4) : col + 1;
  return col;
}

/** Container markers on one line beyond MAX_CONTAINER_PREFIX are dropped. */
function limitLinePrefix(line: string): string {
  let rest = line;
  let prefix = '';
  for (let depth = 0; depth < MAX_CONTAINER_PREFIX; depth++) {
    const m = CONTAINER.exec(rest);
    if (m === null) return line;
    prefix += m[0];
    rest = rest.slice(m[0].length);
  }
  while (CONTAINER.test(rest)) rest = rest.replace(CONTAINER, '');
  return prefix + rest;
}

/** A marker line indented past MAX_MARKER_INDENT columns keeps MAX_MARKER_INDENT of them. */
function limitLineIndent(line: string): string {
  const m = MARKER_AFTER_INDENT.exec(line);
  if (m === null || indentColumns(m[1] as string) <= MAX_MARKER_INDENT) return line;
  return ' '.repeat(MAX_MARKER_INDENT) + line.slice((m[1] as string).length);
}

/**
 * Caps container nesting before parsing: at most MAX_CONTAINER_PREFIX markers on one line, and no
 * marker indented past MAX_MARKER_INDENT columns. Documents within both limits come back unchanged.
 */
export function limitNesting(text: string): string {
  const manyMarkers = DEEP_PREFIX.test(text);
  const deepIndent = DEEP_MARKER.test(text);
  if (!manyMarkers && !deepIndent) return text;
  return text
    .split('\n')
    .map((line) => {
      const flat = manyMarkers ? limitLinePrefix(line) : line;
      return deepIndent ? limitLineIndent(flat) : flat;
    })
    .join('\n');
}

/** The micromark parse of a chunk, or the line reader's when micromark gives up. */
function micromarkChunk(text: string, onFenced: (code: Code) => void): Root {
  try {
    const tree = parseTree(text);
    markFenced(tree, text, onFenced);
    return tree;
  } catch {
    return fallbackTree(text, onFenced);
  }
}

/** Definitions whose label the source may use (a label is matched as written). */
function definitionsFor(source: string, definitions: readonly string[]): string {
  const folded = source.toLowerCase();
  return definitions.filter((d) => folded.includes(d.slice(1, d.indexOf(']:')).toLowerCase())).join('\n');
}

/** A paragraph's or heading's inline text read by micromark: the paragraph parsed on its own. */
function micromarkInline(source: string, definitions: readonly string[]): string {
  const defs = definitionsFor(source, definitions);
  // Continuation lines indented by four spaces stay paragraph text (unindented, `- x` would start a list).
  const paragraph = source.replaceAll('\n', '\n    ');
  const first = parseTree(defs === '' ? paragraph : `${paragraph}\n\n${defs}`).children[0];
  if (first?.type !== 'paragraph') throw new Unsupported('inline source does not read as one paragraph');
  return mdText(first);
}

// micromark reads some inline markdown in time quadratic in its length (a 475 KB line of JSON took
// over a minute); a paragraph longer than this that the fast reader can't read exactly is read
// leniently, its unreadable constructs kept as text. Real paragraphs are a small fraction of it.
const MICROMARK_INLINE_MAX = 16 * 1024;

/** A heading's or paragraph's text: the fast reader's, micromark's where it can't, or leniently read when long. */
function slotText(source: string, scanned: ScannedBlocks): string {
  const fast = inlineText(source, scanned.labels);
  if (fast !== null) return fast;
  if (source.length <= MICROMARK_INLINE_MAX) return micromarkInline(source, scanned.definitions);
  return inlineText(source, scanned.labels, true) as string;
}

/** The fast parse of a chunk (blocks by markdown-blocks.ts, inline text by markdown-inline.ts); null when it can't. */
function fastChunk(text: string, onFenced: (code: Code) => void): Root | null {
  try {
    const scanned = scanBlocks(text, onFenced);
    for (const slot of scanned.inlines) {
      slot.node.value = slotText(slot.source, scanned);
    }
    return scanned.tree;
  } catch (err) {
    if (err instanceof Unsupported) return null;
    throw err;
  }
}

/** The extractor's chunk parser: the fast path, micromark where it can't. */
export const parseMarkdownChunk: ChunkParser = (text, onFenced) => fastChunk(text, onFenced) ?? micromarkChunk(text, onFenced);

function safeParse(source: string, parse: ChunkParser): Root {
  const chunks = markdownChunks(limitNesting(source));
  const onFenced = (code: Code): void => {
    fencedHint.add(code);
  };
  if (chunks.length === 1) return parse(chunks[0] as string, onFenced);
  const children: Root['children'] = [];
  for (const chunk of chunks) {
    for (const node of parse(chunk, onFenced).children) children.push(node);
  }
  return { type: 'root', children };
}

function addBlock(st: MdState, block: RawBlock): void {
  st.items.push({ kind: 'code', block: st.blocks.length });
  st.blocks.push(block);
}

/** When the parser gives up: fenced blocks found line by line, everything else is prose. */
function fallbackTree(text: string, onFenced: (code: Code) => void): Root {
  const children: Nodes[] = [];
  const lines = text.split('\n');
  let i = 0;
  let para: string[] = [];
  const flush = (): void => {
    if (para.length > 0) children.push({ type: 'paragraph', children: [{ type: 'text', value: para.join('\n') }] });
    para = [];
  };
  while (i < lines.length) {
    const line = lines[i] as string;
    const open = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)\s*(.*)$/.exec(line);
    if (open) {
      flush();
      const fenceStr = open[1] as string;
      const body: string[] = [];
      i++;
      while (i < lines.length && !(lines[i] as string).trimStart().startsWith(fenceStr)) body.push(lines[i++] as string);
      i++;
      const code: Code = { type: 'code', lang: open[2] || null, meta: open[3] || null, value: body.join('\n') };
      onFenced(code);
      children.push(code);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      children.push({ type: 'heading', depth: (heading[1] as string).length as 1, children: [{ type: 'text', value: heading[2] ?? '' }] });
    } else if (line.trim().length === 0) {
      flush();
    } else {
      para.push(line);
    }
    i++;
  }
  flush();
  return { type: 'root', children: children as Root['children'] };
}

function stripFrontmatter(text: string): string {
  const m = /^(?:---|\+\+\+)\r?\n[\s\S]*?\r?\n(?:---|\+\+\+|\.\.\.)[ \t]*(?:\r?\n|$)/.exec(text);
  return m ? text.slice(m[0].length) : text;
}

/** A markdown or plain-text document's page and snippets; `parse` reads each chunk (tests pass micromark's reference). */
export function extractMarkdown(text: string, url: string, contentHash: string, format: 'markdown' | 'text', mdxFile: boolean, parse: ChunkParser = parseMarkdownChunk): ExtractResult {
  // Docusaurus and react.dev write MDX in .md files too.
  const mdx = mdxFile || (format === 'markdown' && looksLikeMdx(text));
  const tree = safeParse(mdx ? separateJsxLines(text) : text, parse);
  const st: MdState = { parse, items: [], blocks: [], skipped: [], slugger: new Slugger(), tab: null, h1: null, frontmatter: null, mdx, mdxFile, codeGroups: 0, pymdown: [] };
  walkChildren(tree.children as Nodes[], st, 0);
  const fm = st.frontmatter ?? {};
  const fmTitle = typeof fm.title === 'string' ? fm.title.trim() : '';
  const fmDescription = typeof fm.description === 'string' ? fm.description.trim() : '';
  const title = st.h1 ?? fmTitle;
  const contexts = resolveContexts(st.items, st.blocks.length);
  const fin = finaliseSnippets(st.blocks, contexts, url, title);
  // A markdown page's comments are hidden from its readers (markdown-comments.ts); a text file's are its text.
  const body = mdx ? mdxToMarkdown(stripFrontmatter(text)) : stripFrontmatter(text);
  const { text: visible, comments } = format === 'markdown' ? splitMarkdownComments(body) : { text: body, comments: [] };
  const page: ExtractedPage = {
    url,
    title,
    description: collapseSpaces(fmDescription),
    siteName: null,
    site: null,
    canonicalUrl: null,
    links: [],
    noFollow: false,
    markdown: visible.trim(),
    contentHash,
    format,
    headings: streamHeadings(st.items),
  };
  return { page, snippets: fin.snippets, skipped: [...fin.skipped, ...st.skipped], origins: fin.origins, ...(comments.length > 0 ? { concealed: comments } : {}) };
}
