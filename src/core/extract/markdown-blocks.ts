// The block structure of a markdown document, read line by line (CommonMark's container and leaf
// rules, with GFM tables and YAML/TOML front matter), for the markdown extractor's fast path.
//
// micromark tokenises every character into events and resolves them in passes: even with every
// inline construct disabled it reads well under the extractor's goal. The extractor only walks
// headings, paragraphs, code, HTML blocks and the containers around them, so this scanner builds
// just those nodes, leaving each heading's and paragraph's inline source for markdown-inline.ts.
//
// It reads the common shape of documentation exactly and refuses the rest: a construct it does not
// read the way micromark does (tabs in indentation, carriage returns, definitions over several
// lines, a table head of several lines, ...) throws `Unsupported`, and the caller parses that
// chunk with micromark instead. The two paths are held to the same snippets by
// test/extract/markdown-fast.test.ts on the real corpus and on generated documents.
import type { Blockquote, Code, Heading, Html, ListItem, Nodes, Paragraph, Root, Text } from 'mdast';

/** The scanner met a construct it does not read exactly as micromark does. */
export class Unsupported extends Error {}

/** A heading's or paragraph's inline source, its text to be filled in by the caller. */
export interface InlineSlot {
  node: Text;
  source: string;
}

export interface ScannedBlocks {
  tree: Root;
  inlines: InlineSlot[];
  /** Normalised labels of the link reference definitions. */
  labels: Set<string>;
  /** The definitions' source lines, to parse a paragraph on its own with them. */
  definitions: string[];
}

interface Container {
  node: Root | Blockquote | ListItem;
  /** Columns a line needs to continue a list item. */
  contentIndent: number;
  /** Whether any block has started in it (a list item that begins blank and gets none ends). */
  filled: boolean;
}

type Leaf =
  | { kind: 'paragraph'; owner: Container; lines: string[] }
  | { kind: 'fenced'; owner: Container; char: string; size: number; indent: number; info: string; lines: string[] }
  | { kind: 'indented'; owner: Container; lines: string[] }
  | { kind: 'html'; owner: Container; end: RegExp | null; lines: string[] }
  | { kind: 'table'; owner: Container };

const ATX = /^(#{1,6})(?:[ \t]+|$)/;
const ATX_CLOSE = /(?:^|[ \t]+)#+[ \t]*$/;
const FENCE = /^(`{3,}|~{3,})(.*)$/;
const SETEXT = /^(?:=+|-+)[ \t]*$/;
const THEMATIC = /^(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$/;
const ITEM = /^(?:([-+*])|(\d{1,9})[.)])(?=[ \t]|$)/;
const DELIMITER_ROW = /^\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;
// A one-line link reference definition; its destination and title are never read, only its label.
const DEFINITION = /^\[((?:[^\\[\]]|\\.){1,999})\]:[ \t]*(?:<[^<>\n]*>|([^\s<][^\s]*))(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*$/;
const DEFINITION_START = /^\[(?:[^\\[\]]|\\.)*\]:/;
const BLOCK_NAMES = new Set(
  (
    'address article aside base basefont blockquote body caption center col colgroup dd details dialog dir div dl dt ' +
    'fieldset figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6 head header hr html iframe legend li link ' +
    'main menu menuitem nav noframes ol optgroup option p param search section summary table tbody td tfoot th thead ' +
    'title tr track ul'
  ).split(' '),
);
const HTML_RAW = /^<(?:pre|script|style|textarea)(?:[ \t>]|$)/i;
const HTML_KINDS: Array<[RegExp, RegExp]> = [
  [/^<!--/, /-->/],
  [/^<\?/, /\?>/],
  [/^<![A-Za-z]/, />/],
  [/^<!\[CDATA\[/, /\]\]>/],
];
const HTML_BLOCK_TAG = /^<\/?([A-Za-z][A-Za-z0-9]*)(?:[ \t>]|\/>|$)/;
const ATTRIBUTE = `[ \\t]+[A-Za-z_:][\\w.:-]*(?:[ \\t]*=[ \\t]*(?:[^"'=<>\`\\s]+|'[^']*'|"[^"]*"))?`;
const HTML_COMPLETE_TAG = new RegExp(`^(?:<[A-Za-z][A-Za-z0-9-]*(?:${ATTRIBUTE})*[ \\t]*/?>|</[A-Za-z][A-Za-z0-9-]*[ \\t]*>)[ \\t]*$`);

/** micromark's label normalisation (micromark-util-normalize-identifier). */
export function normalizeLabel(label: string): string {
  return label
    .replace(/[\t\n\r ]+/g, ' ')
    .replace(/^ | $/g, '')
    .toLowerCase()
    .toUpperCase();
}

/** Spaces at `pos`; a tab there is a column count this scanner leaves to micromark. */
function spaces(line: string, pos: number): number {
  let n = 0;
  while (line.charCodeAt(pos + n) === 32) n++;
  if (line.charCodeAt(pos + n) === 9) throw new Unsupported('tab in indentation');
  return n;
}

function isBlank(line: string, pos: number): boolean {
  for (let i = pos; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c !== 32 && c !== 9) return false;
  }
  return true;
}

/** Cells of a table row (pipes escaped with a backslash do not split). */
function cellCount(row: string): number {
  let s = row.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  let n = 1;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === '|') n++;
  }
  return n;
}

/** A raw destination's parentheses balance (micromark's definition needs it); backslash escapes skipped. */
function balancedParens(destination: string | undefined): boolean {
  if (destination === undefined) return true;
  let depth = 0;
  for (let i = 0; i < destination.length; i++) {
    const c = destination[i];
    if (c === '\\') i++;
    else if (c === '(') depth++;
    else if (c === ')' && --depth < 0) return false;
  }
  return depth === 0;
}

/** The end condition of an HTML block starting at `rest`; undefined when none starts; null: a blank line. */
function htmlStart(rest: string, mayBeTag: boolean): RegExp | null | undefined {
  if (rest.charCodeAt(0) !== 60) return undefined;
  if (HTML_RAW.test(rest)) return /<\/(?:pre|script|style|textarea)>/i;
  for (const [open, end] of HTML_KINDS) if (open.test(rest)) return end;
  const name = HTML_BLOCK_TAG.exec(rest)?.[1];
  if (name !== undefined && BLOCK_NAMES.has(name.toLowerCase())) return null;
  if (mayBeTag && HTML_COMPLETE_TAG.test(rest)) return null;
  return undefined;
}

class BlockScanner {
  readonly tree: Root = { type: 'root', children: [] };
  readonly inlines: InlineSlot[] = [];
  readonly labels = new Set<string>();
  readonly definitions: string[] = [];
  private readonly open: Container[] = [{ node: this.tree, contentIndent: 0, filled: true }];
  private leaf: Leaf | null = null;

  constructor(private readonly onFenced: (code: Code) => void) {}

  scan(text: string): void {
    let start = 0;
    const fm = this.frontmatter(text);
    if (fm > 0) start = fm;
    while (start <= text.length) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = text.length;
      this.line(text.slice(start, end));
      start = end + 1;
    }
    this.closeLeaf();
  }

  /** YAML or TOML front matter at the very start: its node, and the offset after it. */
  private frontmatter(text: string): number {
    const fence = text.startsWith('---') ? '---' : text.startsWith('+++') ? '+++' : null;
    if (fence === null) return 0;
    const first = /^(?:---|\+\+\+)[ \t]*(?:\n|$)/.exec(text);
    if (first === null) return 0;
    const close = new RegExp(`^${fence === '---' ? '---' : '\\+\\+\\+'}[ \\t]*$`, 'm');
    const rest = text.slice(first[0].length);
    const m = close.exec(rest);
    if (m === null) throw new Unsupported('front matter without its end');
    const value = rest.slice(0, Math.max(0, m.index - 1));
    if (fence === '---') this.tree.children.push({ type: 'yaml', value });
    const after = first[0].length + m.index + m[0].length;
    return after + 1;
  }

  private get deepest(): Container {
    return this.open[this.open.length - 1] as Container;
  }

  private line(line: string): void {
    let pos = 0;
    let matched = 0;
    for (let i = 1; i < this.open.length; i++) {
      const next = this.continueContainer(this.open[i] as Container, line, pos);
      if (next < 0) break;
      pos = next;
      matched = i;
    }
    const allMatched = matched === this.open.length - 1;
    const blank = isBlank(line, pos);
    if (allMatched && this.leaf !== null && this.continueLeaf(this.leaf, line, pos, blank)) return;
    new LineStarts(this, line, pos, matched, allMatched, blank).run();
  }

  /** The position after the container's part of the line, or -1 when the line does not continue it. */
  private continueContainer(c: Container, line: string, pos: number): number {
    if (c.node.type === 'blockquote') {
      const ind = spaces(line, pos);
      if (ind > 3 || line[pos + ind] !== '>') return -1;
      return this.afterQuoteMarker(line, pos + ind + 1);
    }
    if (isBlank(line, pos)) {
      if (!c.filled) return -1;
      return pos + Math.min(spaces(line, pos), c.contentIndent);
    }
    const ind = spaces(line, pos);
    return ind >= c.contentIndent ? pos + c.contentIndent : -1;
  }

  afterQuoteMarker(line: string, pos: number): number {
    const c = line.charCodeAt(pos);
    if (c === 9) throw new Unsupported('tab after a block quote marker');
    return c === 32 ? pos + 1 : pos;
  }

  /** True when the open leaf took the whole line. */
  private continueLeaf(leaf: Leaf, line: string, pos: number, blank: boolean): boolean {
    switch (leaf.kind) {
      case 'fenced':
        this.fencedLine(leaf, line, pos);
        return true;
      case 'indented': {
        if (blank) {
          leaf.lines.push(line.slice(Math.min(line.length, pos + 4)));
          return true;
        }
        if (spaces(line, pos) < 4) return false;
        leaf.lines.push(line.slice(pos + 4));
        return true;
      }
      case 'html':
        if (blank && leaf.end === null) {
          this.closeLeaf();
          return true;
        }
        leaf.lines.push(line.slice(pos));
        if (leaf.end?.test(line.slice(pos))) this.closeLeaf();
        return true;
      case 'paragraph':
      case 'table':
        if (!blank) return false;
        this.closeLeaf();
        return true;
    }
  }

  private fencedLine(leaf: Leaf & { kind: 'fenced' }, line: string, pos: number): void {
    let n = 0;
    while (line.charCodeAt(pos + n) === 32) n++;
    const rest = line.slice(pos + n);
    if (n <= 3 && rest.startsWith(leaf.char.repeat(leaf.size))) {
      let k = 0;
      while (rest[k] === leaf.char) k++;
      if (isBlank(rest, k)) {
        this.closeLeaf();
        return;
      }
    }
    if (n < leaf.indent && line.charCodeAt(pos + n) === 9) throw new Unsupported('tab in a fence indent');
    leaf.lines.push(line.slice(pos + Math.min(n, leaf.indent)));
  }

  /** Closes the containers below `matched` (and the open leaf). */
  closeContainersBelow(matched: number): void {
    this.closeLeaf();
    this.open.length = matched + 1;
  }

  openContainer(node: Blockquote | ListItem, contentIndent: number, filled: boolean): void {
    this.closeLeaf();
    const parent = this.deepest;
    parent.filled = true;
    (parent.node.children as Nodes[]).push(node);
    this.open.push({ node, contentIndent, filled });
  }

  openLeaf(leaf: Leaf): void {
    this.closeLeaf();
    leaf.owner.filled = true;
    this.leaf = leaf;
  }

  get openLeafKind(): Leaf['kind'] | null {
    return this.leaf?.kind ?? null;
  }

  get container(): Container {
    return this.deepest;
  }

  paragraphLines(): string[] {
    if (this.leaf?.kind !== 'paragraph') throw new Unsupported('no paragraph');
    return this.leaf.lines;
  }

  /** A paragraph line turned into a table head: the paragraph becomes a table. */
  tableFromParagraph(): void {
    if (this.leaf?.kind !== 'paragraph') return;
    this.leaf = { kind: 'table', owner: this.leaf.owner };
  }

  heading(depth: number, source: string, owner: Container): void {
    this.closeLeaf();
    owner.filled = true;
    this.pushInline({ type: 'heading', depth: depth as Heading['depth'], children: [] }, source, owner);
  }

  /** The paragraph under a setext underline becomes a heading. */
  setext(depth: number): void {
    const leaf = this.leaf;
    if (leaf?.kind !== 'paragraph') return;
    this.leaf = null;
    const lines = this.takeDefinitions(leaf.lines);
    if (lines.length === 0) throw new Unsupported('setext underline under definitions');
    this.pushInline({ type: 'heading', depth: depth as Heading['depth'], children: [] }, lines.join('\n').trimEnd(), leaf.owner);
  }

  private pushInline(node: Heading | Paragraph, source: string, owner: Container): void {
    const text: Text = { type: 'text', value: '' };
    node.children.push(text);
    (owner.node.children as Nodes[]).push(node);
    this.inlines.push({ node: text, source });
  }

  /** Link reference definitions at the start of a paragraph, taken out; the lines left. */
  private takeDefinitions(lines: string[]): string[] {
    let i = 0;
    while (i < lines.length && (lines[i] as string).startsWith('[')) {
      const line = lines[i] as string;
      const m = DEFINITION.exec(line);
      if (m === null || !balancedParens(m[2])) {
        if (DEFINITION_START.test(line) || /^\[[^\]]*$/.test(line)) throw new Unsupported('definition this scanner does not read');
        break;
      }
      if (/^["'(]/.test(lines[i + 1] ?? '')) throw new Unsupported('definition title on its own line');
      const label = normalizeLabel(m[1] as string);
      if (label === '') throw new Unsupported('blank definition label');
      this.labels.add(label);
      this.definitions.push(line);
      i++;
    }
    return i === 0 ? lines : lines.slice(i);
  }

  closeLeaf(): void {
    const leaf = this.leaf;
    if (leaf === null) return;
    this.leaf = null;
    const children = leaf.owner.node.children as Nodes[];
    switch (leaf.kind) {
      case 'paragraph': {
        const lines = this.takeDefinitions(leaf.lines);
        if (lines.length > 0) this.pushInline({ type: 'paragraph', children: [] }, lines.join('\n').trimEnd(), leaf.owner);
        break;
      }
      case 'fenced':
        children.push(this.fencedNode(leaf));
        break;
      case 'indented': {
        const lines = leaf.lines;
        while (lines.length > 0 && isBlank(lines[lines.length - 1] as string, 0)) lines.pop();
        children.push({ type: 'code', lang: null, meta: null, value: lines.join('\n') } satisfies Code);
        break;
      }
      case 'html':
        children.push({ type: 'html', value: leaf.lines.join('\n') } satisfies Html);
        break;
      case 'table':
        break;
    }
  }

  private fencedNode(leaf: Leaf & { kind: 'fenced' }): Code {
    const info = leaf.info.trim();
    if (/[\\&]/.test(info)) throw new Unsupported('escape or reference in a fence info string');
    const space = info.search(/[ \t]/);
    const lang = space < 0 ? info : info.slice(0, space);
    const meta = space < 0 ? '' : info.slice(space).trim();
    const code: Code = { type: 'code', lang: lang || null, meta: meta || null, value: leaf.lines.join('\n') };
    this.onFenced(code);
    return code;
  }
}

/** The new blocks a line starts, after the containers it continues; then its text. */
class LineStarts {
  private closed: boolean;
  /** A paragraph was open before this line (micromark then treats every new container as interrupting it). */
  private readonly afterParagraph: boolean;
  private readonly leafAtStart: string | null;
  /** A container has started on this line. */
  private openedContainer = false;

  constructor(
    private readonly s: BlockScanner,
    private readonly line: string,
    private pos: number,
    private readonly matched: number,
    private readonly allMatched: boolean,
    private blank: boolean,
  ) {
    this.closed = allMatched;
    this.afterParagraph = s.openLeafKind === 'paragraph';
    this.leafAtStart = s.openLeafKind;
  }

  /** Leaves the containers this line does not continue, once a new block starts. */
  private closeUnmatched(): void {
    if (this.closed) return;
    this.s.closeContainersBelow(this.matched);
    this.closed = true;
  }

  /**
   * micromark's `interrupt` for the line's new containers: every container continued and a
   * paragraph, indented code or table was open. An empty item, or an ordered one not numbered `1`,
   * then starts no list (CommonMark restricts this after a paragraph only).
   */
  private get interrupting(): boolean {
    return this.allMatched && this.leafAtStart !== null && ['paragraph', 'indented', 'table'].includes(this.leafAtStart);
  }

  /** A paragraph continues (all containers matched) and so restricts what may interrupt it. */
  private get inParagraph(): boolean {
    return this.allMatched && this.s.openLeafKind === 'paragraph';
  }

  run(): void {
    for (;;) {
      if (this.blank) break;
      const ind = spaces(this.line, this.pos);
      const rest = this.line.slice(this.pos + ind);
      if (ind >= 4) {
        if (this.s.openLeafKind === 'table') throw new Unsupported('indented table row');
        if (this.s.openLeafKind === 'paragraph') {
          // micromark reads some such lines as indented code rather than lazy paragraph text.
          if (!this.allMatched) throw new Unsupported('indented line after a lazy paragraph');
          break;
        }
        // micromark splits such a block where a line could have been lazy.
        if (!this.closed) throw new Unsupported('indented code after an unfinished container');
        this.closeUnmatched();
        this.s.openLeaf({ kind: 'indented', owner: this.s.container, lines: [this.line.slice(this.pos + 4)] });
        return;
      }
      if (rest.charCodeAt(0) === 62) {
        this.closeUnmatched();
        this.s.openContainer({ type: 'blockquote', children: [] }, 0, true);
        this.pos = this.s.afterQuoteMarker(this.line, this.pos + ind + 1);
        this.blank = isBlank(this.line, this.pos);
        this.openedContainer = true;
        continue;
      }
      if (this.leafStart(ind, rest)) return;
      if (this.itemStart(ind, rest)) {
        this.blank = isBlank(this.line, this.pos);
        this.openedContainer = true;
        continue;
      }
      break;
    }
    this.text();
  }

  /** Headings, fences, HTML, setext underlines, thematic breaks and table heads. */
  private leafStart(ind: number, rest: string): boolean {
    const atx = ATX.exec(rest);
    if (atx !== null) {
      this.closeUnmatched();
      const content = rest.slice(atx[0].length).replace(ATX_CLOSE, '').trim();
      this.s.heading((atx[1] as string).length, content, this.s.container);
      return true;
    }
    const fence = FENCE.exec(rest);
    if (fence !== null && !(fence[1]?.startsWith('`') && fence[2]?.includes('`'))) {
      this.closeUnmatched();
      const mark = fence[1] as string;
      const leaf = { kind: 'fenced', owner: this.s.container, char: mark[0] as string, size: mark.length, indent: ind, info: fence[2] as string, lines: [] };
      this.s.openLeaf(leaf as Leaf);
      return true;
    }
    // A lone tag (HTML kind 7) interrupts no paragraph.
    const paragraphOpen = this.s.openLeafKind === 'paragraph';
    // micromark starts one on a lazy line, or in a container opened on the line after a paragraph.
    if (this.afterParagraph && (!paragraphOpen || !this.allMatched) && HTML_COMPLETE_TAG.test(rest)) throw new Unsupported('lone tag after a paragraph');
    const end = htmlStart(rest, !paragraphOpen);
    if (end !== undefined) {
      this.closeUnmatched();
      const leaf: Leaf = { kind: 'html', owner: this.s.container, end, lines: [rest] };
      this.s.openLeaf(leaf);
      if (end?.test(rest.slice(1))) this.s.closeLeaf();
      return true;
    }
    if (this.inParagraph && SETEXT.test(rest)) {
      this.s.setext(rest.startsWith('=') ? 1 : 2);
      return true;
    }
    if (THEMATIC.test(rest)) {
      this.closeUnmatched();
      this.s.closeLeaf();
      return true;
    }
    return this.tableHead(rest);
  }

  private tableHead(rest: string): boolean {
    if (!this.inParagraph || !rest.includes('|') || !DELIMITER_ROW.test(rest)) return false;
    const lines = this.s.paragraphLines();
    if (lines.length > 1 || (lines[0] as string).startsWith('[')) throw new Unsupported('table head after other lines');
    if (cellCount(lines[0] as string) !== cellCount(rest)) return false;
    this.s.tableFromParagraph();
    return true;
  }

  private itemStart(ind: number, rest: string): boolean {
    const m = ITEM.exec(rest);
    if (m === null) return false;
    const width = m[0].length;
    const after = this.pos + ind + width;
    const emptyItem = isBlank(this.line, after);
    if ((emptyItem || (m[2] !== undefined && m[2] !== '1')) && this.interrupting) {
      if (!this.openedContainer) return false;
      throw new Unsupported('list item in a new container that interrupts');
    }
    // A bullet that is also a thematic break was taken as one before this.
    let gap = emptyItem ? 0 : spaces(this.line, after);
    if (emptyItem || gap >= 5) gap = 1;
    this.closeUnmatched();
    this.s.openContainer({ type: 'listItem', children: [] }, ind + width + gap, !emptyItem);
    this.pos = emptyItem ? this.line.length : after + gap;
    return true;
  }

  /** The rest of the line is text: a lazy or continued paragraph line, a table row, or a new paragraph. */
  private text(): void {
    if (this.blank) {
      this.closeUnmatched();
      if (this.s.openLeafKind === 'paragraph' || this.s.openLeafKind === 'table') this.s.closeLeaf();
      return;
    }
    const content = this.line.slice(this.pos + spaces(this.line, this.pos));
    const kind = this.s.openLeafKind;
    if (kind === 'paragraph' && (this.allMatched || !this.closed)) {
      this.s.paragraphLines().push(content);
      return;
    }
    if (kind === 'table' && this.allMatched) return;
    this.closeUnmatched();
    this.s.openLeaf({ kind: 'paragraph', owner: this.s.container, lines: [content] });
  }
}

/**
 * The block tree of a markdown chunk, headings' and paragraphs' text left to fill from their
 * inline source. Throws `Unsupported` for what only micromark reads exactly.
 */
export function scanBlocks(text: string, onFenced: (code: Code) => void): ScannedBlocks {
  if (/[\r\0]/.test(text)) throw new Unsupported('carriage return or NUL');
  const scanner = new BlockScanner(onFenced);
  scanner.scan(text);
  return { tree: scanner.tree, inlines: scanner.inlines, labels: scanner.labels, definitions: scanner.definitions };
}
