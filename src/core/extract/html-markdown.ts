// Main content to markdown, in one pass that also records what the context rules
// need (headings, prose, code blocks in reading order).
//
// Own serializer rather than a library: turndown needs a DOM (jsdom or
// domhandler, the DOM html-tree.ts exists to avoid) and node-html-markdown
// re-parses the HTML. Walking the tree we already built costs little next to
// parsing it and lets one walk feed both the markdown and
// the snippet context, so both always agree on what the main content is.
//
// Markdown text is not escaped: the rendition is read by people and language
// models, for whom `a*b` is clearer than `a\*b`.
import { concealedByAttributes } from './code-classes.js';
import type { HeadingItem, StreamItem } from './context.js';
import { codeFromTable, codeLabels, codeText, declaredLanguage, isCodeTable, isGutterPre, tabLabel } from './html-code.js';
import { ClassMatcher, isJunk } from './html-main.js';
import { NO_ATTRS } from './html-parser.js';
import { type HElement, type HNode, type HtmlTree, Kind, textOf } from './html-tree.js';
import type { RawBlock } from './snippet.js';
import type { SkippedBlock } from './types.js';
import { collapseSpaces } from './whitespace.js';

export const CODE_MARK = '\u0000';

export interface RenderResult {
  /**
   * The top-level markdown blocks, to be joined by blank lines, with each code
   * block as a line `\0<n>\0` (n = block index) until languages are known
   * (markdownWithCode).
   */
  parts: string[];
  items: StreamItem[];
  blocks: RawBlock[];
  /** Code elements (pre, programlisting, screen) accounted for by the walk. */
  visited: Set<HElement>;
  skipped: SkippedBlock[];
  /** Text of the first h1 inside the main content. */
  pageHeading: string | null;
}

const HEADING_LEVEL: Record<string, number> = { h1: 1, h2: 2, h3: 3, h4: 4, h5: 5, h6: 6 };
// Heading permalinks: their text is a symbol, not part of the title.
const PERMALINK_TEXT = /^[\s#¶§🔗]*$/u;
const tabPanelClass = new ClassMatcher(/(?:^|\s)(?:tabbed-block|sd-tab-content|tab-pane)(?:\s|$)/);
const EDIT_LINK = /^(?:edit|view source|view page source|suggest (?:an )?edit|improve this page)\b/i;
// A line break followed by a non-empty line.
const NONEMPTY_LINE_START = /\n(?=[^\n])/g;
// Whitespace that needs collapsing: anything but a lone space.
const WS_RUN = /[\t\n\r\f][ \t\n\r\f]*| [ \t\n\r\f]+/g;
const PARENT_INLINE = new Set(['p', 'li', 'td', 'th', 'dt', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'a', 'span', 'em', 'strong', 'b', 'i', 'label', 'summary', 'caption', 'figcaption', 'button']);

// A tab, line break, form feed or two spaces: the text has a run to collapse.
// Most text nodes have none; the regex scan (native) is cheaper than either a
// replace call or a JavaScript character loop.
const NEEDS_COLLAPSE = /[\t\n\r\f]| {2}/;

function needsCollapse(t: string): boolean {
  return NEEDS_COLLAPSE.test(t);
}

/** Text of a small inline subtree (inline code, links): the common single-text-child case without allocation. */
function inlineText(el: HElement): string {
  const c = el.children;
  if (c.length === 1) {
    const only = c[0] as HNode;
    if (typeof only === 'string') return only;
    return inlineText(only);
  }
  return textOf(el);
}

function inlineCode(text: string): string {
  let t = needsCollapse(text) ? collapseSpaces(text) : text;
  if (t.charCodeAt(0) === 32 || t.charCodeAt(t.length - 1) === 32) t = t.trim();
  if (t.length === 0) return '';
  if (!t.includes('`')) return `\`${t}\``;
  let run = 0;
  let longest = 0;
  for (let i = 0; i < t.length; i++) {
    if (t.charCodeAt(i) === 96) {
      run++;
      if (run > longest) longest = run;
    } else run = 0;
  }
  const ticks = '`'.repeat(longest + 1);
  const pad = t.startsWith('`') || t.endsWith('`') ? ' ' : '';
  return `${ticks}${pad}${t}${pad}${ticks}`;
}

/**
 * A sidebar inside the article that holds a code example (Sphinx's `.. sidebar::`
 * renders as <aside class="sidebar">) is content; navigation sidebars hold none.
 */
function isContentSidebar(el: HElement): boolean {
  if (el.kind !== Kind.Aside && !/(?:^|\s)sidebar(?:\s|$)/.test(el.attrs.class ?? '')) return false;
  const stack: HElement[] = [el];
  let seen = 0;
  while (stack.length > 0 && seen < 2000) {
    const n = stack.pop() as HElement;
    seen++;
    for (const c of n.children) {
      if (typeof c === 'string') continue;
      if (c.kind === Kind.CodeBlock) return true;
      if (c.kind === Kind.Junk || c.tag === 'nav' || c.tag === 'ul') continue;
      stack.push(c);
    }
  }
  return false;
}

/**
 * Anchor id for a heading: its own id, an id inside it (Node.js puts it on the
 * permalink), the id of the section it opens (Sphinx, DocBook), its permalink's
 * target, or an empty target element right before it.
 */
export function headingAnchor(h: HElement, stop: HElement): string | null {
  if (h.attrs.id) return h.attrs.id;
  // Depth first, in document order: the first id wins.
  const stack: HElement[] = [];
  for (let i = h.children.length - 1; i >= 0; i--) {
    const c = h.children[i] as HNode;
    if (typeof c !== 'string') stack.push(c);
  }
  let href: string | null = null;
  while (stack.length > 0) {
    const c = stack.pop() as HElement;
    // Permalinks are links (kept); buttons and other junk are not (rustdoc's copy-path button).
    if (c.kind !== Kind.Link && isJunk(c)) continue;
    if (c.attrs.id) return c.attrs.id;
    if (c.tag === 'a' && c.attrs.name) return c.attrs.name;
    if (c.tag === 'a' && href === null && c.attrs.href?.startsWith('#') && c.attrs.href.length > 1) href = c.attrs.href.slice(1);
    for (let i = c.children.length - 1; i >= 0; i--) {
      const d = c.children[i] as HNode;
      if (typeof d !== 'string') stack.push(d);
    }
  }
  // <section id><h2>, <div class="sect1" id><div class="titlepage"><div><div><h2>.
  let node = h;
  for (let i = 0; i < 5 && node.parent !== null && node.parent !== stop; i++) {
    const parent = node.parent;
    let first = true;
    for (const c of parent.children) {
      if (c === node) break;
      if (typeof c === 'string') {
        if (c.trim().length > 0) {
          first = false;
          break;
        }
        continue;
      }
      // Empty anchor targets before the heading don't count.
      if (c.children.length > 0 && textOf(c).trim().length > 0) {
        first = false;
        break;
      }
    }
    if (!first) break;
    if (parent.attrs.id && parent.tag !== 'body' && parent.tag !== 'main') return parent.attrs.id;
    node = parent;
  }
  if (href !== null) return href;
  // <span id="x"></span><h1>: an empty target right before the heading.
  const sibs = h.parent?.children ?? [];
  for (let j = sibs.indexOf(h) - 1; j >= 0; j--) {
    const s = sibs[j] as HNode;
    if (typeof s === 'string') {
      if (s.trim().length > 0) break;
      continue;
    }
    if (s.attrs.id && textOf(s).trim().length === 0) return s.attrs.id;
    break;
  }
  return null;
}

export class HtmlMarkdownRenderer {
  private readonly frames: string[][] = [[]];
  // The paragraph being built. Never scanned or sliced while it grows (that
  // flattens V8's rope strings and made long lists quadratic): `space` and
  // `hasBreak` track what the whitespace rules need to know.
  private inl = '';
  private space = true;
  private hasBreak = false;
  private flushes = 0;
  private suppressProse = 0;
  private inHeading = 0;
  private dlDepth = 0;
  private readonly items: StreamItem[] = [];
  private readonly blocks: RawBlock[] = [];
  private readonly visited = new Set<HElement>();
  private readonly skipped: SkippedBlock[] = [];
  private pageHeading: string | null = null;

  constructor(
    private readonly tree: HtmlTree,
    private readonly mainRoot: HElement,
    private readonly resolveUrl: (href: string) => string | null,
  ) {}

  render(): RenderResult {
    this.walkChildren(this.mainRoot);
    this.flush();
    const top = this.frames[0] ?? [];
    return {
      parts: top,
      items: this.items,
      blocks: this.blocks,
      visited: this.visited,
      skipped: this.skipped,
      pageHeading: this.pageHeading,
    };
  }

  // -- output helpers

  private emit(text: string): void {
    if (text.length > 0) (this.frames[this.frames.length - 1] as string[]).push(text);
  }

  private flush(): void {
    this.flushes++;
    if (this.inl.length === 0) return;
    const t = this.hasBreak ? this.inl.replace(/[ \t]+\n/g, '\n').trim() : this.inl.trim();
    this.inl = '';
    this.space = true;
    this.hasBreak = false;
    if (t.length === 0) return;
    this.emit(t);
    if (this.suppressProse === 0 && this.inHeading === 0) this.items.push({ kind: 'prose', text: t });
  }

  private pushFrame(): void {
    this.frames.push([]);
  }

  private popFrame(): string[] {
    return this.frames.pop() ?? [];
  }

  private text(s: string): void {
    // About half the text nodes are the indentation between tags: all
    // whitespace, which collapses to one space (or nothing after a space).
    let i = 0;
    const n = s.length;
    while (i < n) {
      const c = s.charCodeAt(i);
      if (c !== 32 && c !== 10 && c !== 9 && c !== 13 && c !== 12) break;
      i++;
    }
    if (i === n) {
      if (n > 0 && !this.space) {
        this.inl += ' ';
        this.space = true;
      }
      return;
    }
    // Most other text nodes need no collapsing; the test is far cheaper than a replace call.
    let t = needsCollapse(s) ? s.replace(WS_RUN, ' ') : s;
    if (t.charCodeAt(0) === 32 && this.space) t = t.slice(1);
    if (t.length === 0) return;
    this.inl += t;
    this.space = t.charCodeAt(t.length - 1) === 32;
  }

  /** Markup (not text): never starts or ends a run of whitespace. */
  private mark(m: string): void {
    this.inl += m;
    this.space = false;
  }

  // -- walking

  private walkChildren(el: HElement): void {
    for (const c of el.children) {
      if (typeof c === 'string') this.text(c);
      else this.walk(c);
    }
  }

  private walk(el: HElement): void {
    // A sidebar that holds code is content, unless it is hidden from the reader.
    if (isJunk(el) && (el.inkHidden || concealedByAttributes(el.attrs) || !isContentSidebar(el))) return;
    switch (el.kind) {
      case Kind.CodeBlock:
        this.flush();
        this.codeBlock(el, el.tag);
        return;
      case Kind.Heading:
        this.heading(el, HEADING_LEVEL[el.tag] ?? 6);
        return;
      case Kind.Code:
        this.codeElement(el);
        return;
      case Kind.Table:
        if (isCodeTable(el)) {
          this.flush();
          this.codeTable(el);
        } else {
          this.table(el);
        }
        return;
      case Kind.Br:
        this.lineBreak();
        return;
      case Kind.Hr:
        this.flush();
        this.emit('---');
        return;
      case Kind.List:
        this.list(el, el.tag === 'ol');
        return;
      case Kind.Blockquote:
        this.blockquote(el);
        return;
      case Kind.Dl:
        this.definitionList(el);
        return;
      case Kind.Dt:
        this.definitionTerm(el);
        return;
      case Kind.Link:
        this.link(el);
        return;
      case Kind.Img:
        this.image(el);
        return;
      case Kind.Strong:
        this.wrapped(el, '**');
        return;
      case Kind.Em:
        this.wrapped(el, '*');
        return;
      case Kind.Del:
        this.wrapped(el, '~~');
        return;
      case Kind.Kbd:
        this.inlineCode(el);
        return;
      case Kind.Caption:
        this.flush();
        this.walkChildren(el);
        this.flush();
        return;
      case Kind.Block:
      case Kind.Aside:
        this.container(el);
        return;
      default:
        this.walkChildren(el);
    }
  }

  /** `<code>`: a block when it stands alone, else inline code. */
  private codeElement(el: HElement): void {
    if (this.isStandaloneCode(el)) {
      this.flush();
      this.codeBlock(el, 'code');
    } else {
      this.inlineCode(el);
    }
  }

  /** `<br>`: a space inside a title, a markdown hard break elsewhere. */
  private lineBreak(): void {
    if (this.inHeading > 0) {
      if (!this.space) this.text(' ');
    } else {
      this.inl += '  \n';
      this.space = true;
      this.hasBreak = true;
    }
  }

  /** A block element: its own paragraphs, led by its label when it is a tab panel. */
  private container(el: HElement): void {
    this.flush();
    if (el.attrs !== NO_ATTRS && (el.attrs.role === 'tabpanel' || (el.attrs.class !== undefined && tabPanelClass.test(el.attrs.class)))) {
      const label = tabLabel(el.children.find((c): c is HElement => typeof c !== 'string') ?? el, this.mainRoot, this.tree);
      if (label) this.emit(`**${label}**`);
    }
    this.walkChildren(el);
    this.flush();
  }

  private inlineCode(el: HElement): void {
    const code = inlineCode(inlineText(el));
    if (code.length === 0) return;
    this.mark(code);
  }

  private wrapped(el: HElement, mark: string): void {
    if (el.children.length === 0) return;
    // Headings and API signatures are titles: plain text, no emphasis marks.
    if (this.inHeading > 0) {
      this.walkChildren(el);
      return;
    }
    const start = this.inl.length;
    const flushes = this.flushes;
    this.mark(mark);
    const afterMark = this.inl.length;
    this.space = true;
    this.walkChildren(el);
    if (this.flushes !== flushes) return;
    if (this.inl.length === afterMark) {
      // Nothing inside: take the opening mark back (rare, so the slice is fine).
      this.inl = this.inl.slice(0, start);
      this.space = start === 0 || this.inl.charCodeAt(start - 1) === 32;
      return;
    }
    // `**foo **` is not bold in markdown: the trailing space goes after the mark.
    if (this.space) this.inl = `${this.inl.slice(0, -1)}${mark} `;
    else this.mark(mark);
  }

  private link(el: HElement): void {
    if (el.children.length === 0) return;
    // "Edit this page" / "View source" links, whatever their classes.
    const label = el.attrs.title ?? el.attrs['aria-label'];
    if (label !== undefined && EDIT_LINK.test(label)) return;
    if (this.inHeading > 0) {
      if (!PERMALINK_TEXT.test(textOf(el))) this.walkChildren(el);
      return;
    }
    const href = el.attrs.href;
    const url = href ? this.resolveUrl(href) : null;
    if (url === null) {
      this.walkChildren(el);
      return;
    }
    const start = this.inl.length;
    const flushes = this.flushes;
    const spaceBefore = this.space;
    this.mark('[');
    this.space = spaceBefore;
    this.walkChildren(el);
    if (this.flushes !== flushes) return;
    if (this.inl.length === start + 1) {
      this.inl = this.inl.slice(0, start);
      this.space = spaceBefore;
      return;
    }
    this.mark(`](${url})`);
  }

  private image(el: HElement): void {
    const alt = collapseSpaces(el.attrs.alt ?? '').trim();
    const src = el.attrs.src;
    if (!src || src.startsWith('data:')) {
      if (alt) this.text(alt);
      return;
    }
    const url = this.resolveUrl(src);
    if (url) this.mark(`![${alt}](${url})`);
    else if (alt) this.text(alt);
  }

  private heading(el: HElement, level: number): void {
    this.flush();
    // Pushed before the walk, filled after: a code block inside a broken heading
    // (`<h2>Title<pre>...`) must still come after its heading in the stream.
    const item: HeadingItem = { kind: 'heading', level, text: '', anchor: headingAnchor(el, this.mainRoot) };
    this.items.push(item);
    this.inHeading++;
    this.walkChildren(el);
    this.inHeading--;
    const text = collapseSpaces(this.inl).trim();
    this.inl = '';
    this.space = true;
    this.hasBreak = false;
    item.text = text;
    if (text.length === 0) return;
    if (level === 1 && this.pageHeading === null) this.pageHeading = text;
    this.emit(`${'#'.repeat(level)} ${text}`);
  }

  private list(el: HElement, ordered: boolean): void {
    this.flush();
    const startAttr = Number.parseInt(el.attrs.start ?? '1', 10);
    let n = Number.isFinite(startAttr) ? startAttr : 1;
    const out: string[] = [];
    let loose = false;
    for (const c of el.children) {
      if (typeof c === 'string') continue;
      if (isJunk(c)) continue;
      this.pushFrame();
      if (c.tag === 'li') this.walkChildren(c);
      else this.walk(c);
      this.flush();
      const blocks = this.popFrame();
      if (blocks.length === 0) continue;
      if (blocks.length > 1) loose = true;
      const marker = ordered ? `${n++}. ` : '- ';
      const body = blocks.length === 1 ? (blocks[0] as string) : blocks.join('\n\n');
      if (!body.includes('\n')) {
        out.push(marker + body);
        continue;
      }
      // Continuation lines take the marker's width in spaces, empty lines stay empty;
      // one replace instead of splitting (nested lists re-indent at every level).
      out.push(marker + body.replace(NONEMPTY_LINE_START, `\n${' '.repeat(marker.length)}`));
    }
    if (out.length > 0) this.emit(out.join(loose ? '\n\n' : '\n'));
  }

  private blockquote(el: HElement): void {
    this.flush();
    this.pushFrame();
    this.walkChildren(el);
    this.flush();
    const blocks = this.popFrame();
    if (blocks.length === 0) return;
    this.emit(
      blocks
        .join('\n\n')
        .split('\n')
        .map((l) => (l.length > 0 ? `> ${l}` : '>'))
        .join('\n'),
    );
  }

  private definitionList(el: HElement): void {
    this.flush();
    this.dlDepth++;
    this.walkChildren(el);
    this.flush();
    this.dlDepth--;
    // API entries (<dt id>) act as headings until their list ends.
    this.items.push({ kind: 'pop', level: 7 + this.dlDepth });
  }

  private definitionTerm(el: HElement): void {
    this.flush();
    this.inHeading++;
    this.walkChildren(el);
    this.inHeading--;
    const text = collapseSpaces(this.inl).trim();
    this.inl = '';
    this.space = true;
    this.hasBreak = false;
    if (text.length === 0) return;
    this.emit(`**${text}**`);
    if (el.attrs.id && this.dlDepth > 0) {
      this.items.push({ kind: 'heading', level: 7 + this.dlDepth - 1, text, anchor: el.attrs.id });
    } else if (this.suppressProse === 0) {
      this.items.push({ kind: 'prose', text });
    }
  }

  private table(el: HElement): void {
    this.flush();
    const rows: string[][] = [];
    let complex = false;
    const cellBlocks: string[][] = [];
    this.suppressProse++;
    const visitRows = (n: HElement): void => {
      for (const c of n.children) {
        if (typeof c === 'string' || isJunk(c)) continue;
        if (c.tag === 'tr') {
          const row: string[] = [];
          for (const cell of c.children) {
            if (typeof cell === 'string' || (cell.tag !== 'td' && cell.tag !== 'th') || isJunk(cell)) continue;
            this.pushFrame();
            this.walkChildren(cell);
            this.flush();
            const blocks = this.popFrame();
            cellBlocks.push(blocks);
            if (blocks.length > 1 || blocks.some((b) => b.includes('\n'))) complex = true;
            row.push((blocks[0] ?? '').replace(/\|/g, '\\|'));
          }
          if (row.length > 0) rows.push(row);
        } else if (c.tag === 'thead' || c.tag === 'tbody' || c.tag === 'tfoot') {
          visitRows(c);
        } else if (c.tag === 'caption') {
          this.walk(c);
        } else {
          // Anything else inside a table (stray <pre>, nested tables) is rendered in place.
          complex = true;
          this.pushFrame();
          this.walk(c);
          this.flush();
          cellBlocks.push(this.popFrame());
        }
      }
    };
    visitRows(el);
    this.suppressProse--;
    if (rows.length === 0 && cellBlocks.every((b) => b.length === 0)) return;
    if (complex) {
      for (const b of cellBlocks) for (const x of b) this.emit(x);
      return;
    }
    const width = Math.max(...rows.map((r) => r.length));
    const line = (r: string[]): string => {
      const cells = [...r];
      while (cells.length < width) cells.push('');
      return `| ${cells.join(' | ')} |`;
    };
    const out = [line(rows[0] as string[]), `|${' --- |'.repeat(width)}`];
    for (let i = 1; i < rows.length; i++) out.push(line(rows[i] as string[]));
    this.emit(out.join('\n'));
  }

  // -- code

  private isStandaloneCode(el: HElement): boolean {
    const parent = el.parent;
    if (parent === null || PARENT_INLINE.has(parent.tag)) return false;
    let hasBr = false;
    const stack: HElement[] = [el];
    while (stack.length > 0 && !hasBr) {
      const n = stack.pop() as HElement;
      for (const c of n.children) {
        if (typeof c === 'string') continue;
        if (c.tag === 'br') hasBr = true;
        else stack.push(c);
      }
    }
    const text = textOf(el);
    if (!hasBr && !/\S[^\n]*\n[^\n]*\S/.test(text)) return false;
    for (const s of parent.children) {
      if (s === el) continue;
      if (typeof s === 'string') {
        if (s.trim().length > 0) return false;
      } else if (!isJunk(s) && s.tag !== 'br' && textOf(s).trim().length > 0) {
        return false;
      }
    }
    return true;
  }

  private addBlock(el: HElement, origin: string, code: string, outer?: HElement): void {
    const { filename, caption } = codeLabels(el, this.mainRoot);
    const index = this.blocks.length;
    this.blocks.push({
      code,
      origin,
      declaredLanguage: declaredLanguage(el, this.mainRoot) ?? (outer ? declaredLanguage(outer, this.mainRoot) : null),
      filename,
      tab: tabLabel(el, this.mainRoot, this.tree),
      caption,
    });
    this.items.push({ kind: 'code', block: index });
    this.emit(`${CODE_MARK}${index}${CODE_MARK}`);
  }

  private codeBlock(el: HElement, origin: string): void {
    if (el.kind === Kind.CodeBlock) {
      this.visited.add(el);
      if (isGutterPre(el)) {
        this.skipped.push({ reason: 'line-number-gutter', tag: el.tag, preview: textOf(el).slice(0, 40) });
        return;
      }
      this.markNested(el);
    }
    this.addBlock(el, origin, codeText(el));
  }

  private codeTable(table: HElement): void {
    const inside = this.tree.codeElements.filter((p) => {
      for (let q = p.parent; q !== null; q = q.parent) if (q === table) return true;
      return false;
    });
    const t = codeFromTable(table, inside);
    for (const g of t.gutters) {
      this.visited.add(g);
      this.skipped.push({ reason: 'line-number-gutter', tag: g.tag, preview: textOf(g).slice(0, 40) });
    }
    if (t.pre !== null) {
      this.visited.add(t.pre);
      this.markNested(t.pre);
      // Pygments puts the language class on a wrapper of the table, out of the <pre>'s reach.
      this.addBlock(t.pre, t.pre.tag, t.code, table);
    } else {
      this.addBlock(table, 'table', t.code);
    }
    // Any other pre in the table is part of this block's chrome.
    for (const p of inside) {
      if (this.visited.has(p)) continue;
      this.visited.add(p);
      this.skipped.push({ reason: 'nested', tag: p.tag, preview: textOf(p).slice(0, 40) });
    }
  }

  /** Code elements inside this one are part of it (a <pre> inside a <pre>). */
  private markNested(el: HElement): void {
    const stack: HElement[] = [el];
    while (stack.length > 0) {
      const n = stack.pop() as HElement;
      for (const c of n.children) {
        if (typeof c === 'string') continue;
        if (c.kind === Kind.CodeBlock && !this.visited.has(c)) {
          this.visited.add(c);
          this.skipped.push({ reason: 'nested', tag: c.tag, preview: textOf(c).slice(0, 40) });
        }
        stack.push(c);
      }
    }
  }
}

/**
 * The page's markdown: the rendered parts joined, code marks replaced by their
 * fences. Part by part, so the page's text is copied once, not joined and then
 * rebuilt around every fence.
 */
export function markdownWithCode(parts: readonly string[], fences: readonly string[]): string {
  const out = new Array<string>(parts.length);
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    out[i] = part.includes(CODE_MARK) ? substituteCode(part, fences) : part;
  }
  return out.join('\n\n');
}

/** Replace code marks with fences; a mark inside a list or quote takes its prefix on every line. */
export function substituteCode(markdown: string, fences: readonly string[]): string {
  let at = markdown.indexOf(CODE_MARK);
  if (at < 0) return markdown;
  const out: string[] = [];
  let from = 0;
  while (at >= 0) {
    const end = markdown.indexOf(CODE_MARK, at + 1);
    if (end < 0) break;
    const lineStart = markdown.lastIndexOf('\n', at) + 1;
    const prefix = markdown.slice(lineStart, at);
    const f = fences[Number(markdown.slice(at + 1, end))] ?? '';
    out.push(markdown.slice(from, lineStart));
    if (f.length === 0) out.push(prefix.trimEnd());
    else if (prefix.length === 0) out.push(f);
    else {
      const cont = prefix.replace(/[-*+] |\d+[.)] /g, (x) => ' '.repeat(x.length));
      out.push(
        f
          .split('\n')
          .map((l, i) => (i === 0 ? prefix + l : l.length > 0 ? cont + l : cont.trimEnd()))
          .join('\n'),
      );
    }
    from = end + 1;
    at = markdown.indexOf(CODE_MARK, from);
  }
  out.push(markdown.slice(from));
  return out.join('');
}
