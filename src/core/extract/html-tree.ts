// A lightweight element tree built straight from the parser's events
// (html-parser.ts). domhandler's DOM, a class instance with parent and sibling
// links for every tag and text, cost as much as the parse itself on the doc
// corpus; these plain objects, with shared empty children and attributes, cost
// a fraction of it (bench/extract.ts, the 'extraction / bare' column).
import { ClassMatcher, concealedByAttributes, isPlainCodeSpan } from './code-classes.js';
import { type HtmlSink, NO_ATTRS, parseHtml } from './html-parser.js';
import { type Ink, NO_INK, inkOf } from './ink.js';

export interface HElement {
  tag: string;
  /** What the walkers do with this tag (see Kind), looked up once when the element is built. */
  kind: Kind;
  attrs: Record<string, string>;
  /** Shared NO_CHILDREN until the first child: most elements have one child or none. */
  children: HNode[];
  parent: HElement | null;
  /** Its text's colour cannot be told from the colour behind it (ink.ts): a reader does not see it. */
  inkHidden: boolean;
}

// A plain object rather than an enum: type-stripping tools (Node, esbuild) handle it as is.
export const Kind = {
  Inline: 0,
  Block: 1,
  Junk: 2,
  CodeBlock: 3,
  Heading: 4,
  Code: 5,
  Table: 6,
  Br: 7,
  Hr: 8,
  List: 9,
  Blockquote: 10,
  Dl: 11,
  Dt: 12,
  Link: 13,
  Img: 14,
  Strong: 15,
  Em: 16,
  Del: 17,
  Kbd: 18,
  Caption: 19,
  Aside: 20,
} as const;
export type Kind = (typeof Kind)[keyof typeof Kind];

const KINDS = new Map<string, Kind>([
  ['pre', Kind.CodeBlock],
  ['programlisting', Kind.CodeBlock],
  ['screen', Kind.CodeBlock],
  ['h1', Kind.Heading],
  ['h2', Kind.Heading],
  ['h3', Kind.Heading],
  ['h4', Kind.Heading],
  ['h5', Kind.Heading],
  ['h6', Kind.Heading],
  ['code', Kind.Code],
  ['table', Kind.Table],
  ['br', Kind.Br],
  ['hr', Kind.Hr],
  ['ul', Kind.List],
  ['ol', Kind.List],
  ['blockquote', Kind.Blockquote],
  ['dl', Kind.Dl],
  ['dt', Kind.Dt],
  ['a', Kind.Link],
  ['img', Kind.Img],
  ['strong', Kind.Strong],
  ['b', Kind.Strong],
  ['em', Kind.Em],
  ['i', Kind.Em],
  ['cite', Kind.Em],
  ['del', Kind.Del],
  ['s', Kind.Del],
  ['strike', Kind.Del],
  ['kbd', Kind.Kbd],
  ['samp', Kind.Kbd],
  ['var', Kind.Kbd],
  ['tt', Kind.Kbd],
  ['summary', Kind.Caption],
  ['figcaption', Kind.Caption],
  ['caption', Kind.Caption],
  ['aside', Kind.Aside],
]);
for (const t of [
  'script',
  'style',
  'noscript',
  'template',
  'head',
  'button',
  'nav',
  'footer',
  'form',
  'input',
  'select',
  'textarea',
  'iframe',
  'object',
  'embed',
  'canvas',
  'svg',
  'math',
  'label',
  'dialog',
  'meta',
  'link',
  'title',
  'audio',
  'video',
  'map',
  'frame',
  'frameset',
]) {
  KINDS.set(t, Kind.Junk);
}
for (const t of [
  'address',
  'article',
  'body',
  'center',
  'dd',
  'details',
  'dir',
  'div',
  'fieldset',
  'figure',
  'header',
  'hgroup',
  'html',
  'legend',
  'li',
  'main',
  'menu',
  'p',
  'section',
  'tbody',
  'td',
  'tfoot',
  'th',
  'thead',
  'tr',
  'starlight-tabs',
  '#root',
]) {
  KINDS.set(t, Kind.Block);
}

export function kindOf(tag: string): Kind {
  return KINDS.get(tag) ?? Kind.Inline;
}
export type HNode = HElement | string;

// A fresh array grows to 17 slots on its second push; an element's first child
// gets an exact one-slot array instead (most elements have exactly one), and
// childless elements share this one. Not frozen (frozen arrays take slower
// paths in every loop over children): only the builder adds children, and it
// replaces this array first. (Collecting children on a shared stack and
// copying them out at each close, for exact arrays throughout, measured slower.)
const NO_CHILDREN: HNode[] = [];

function addChild(parent: HElement, child: HNode): void {
  if (parent.children === NO_CHILDREN) parent.children = [child];
  else parent.children.push(child);
}

export interface HtmlTree {
  root: HElement;
  /** Raw href of every <a> in document order (whole document). */
  hrefs: string[];
  /** Every pre / programlisting / screen element, in document order. */
  codeElements: HElement[];
  /** Elements that may hold the main content (main, article, role=main, known theme containers). */
  mainCandidates: HElement[];
  h1s: HElement[];
  title: HElement | null;
  metas: Array<Record<string, string>>;
  linkTags: Array<Record<string, string>>;
  /** Titles of the first few links to the site's home page (`rel="home"`, DocBook's `accesskey="h"`): they name the site. */
  homeTitles: string[];
  baseHref: string | null;
  /** role=tab elements and labels, for tab-label lookup. */
  tabs: HElement[];
  /** Text of the document's HTML comments with letters in them, up to MAX_COMMENT_TEXT characters in all. */
  comments: string[];
  /**
   * Text of hidden elements past MAX_DEPTH (not built, so no walker sees them), up to MAX_COMMENT_TEXT
   * characters: left out of the page like every hidden element's, and kept for screening.
   */
  hiddenPastCap: string[];
}

const MAX_HOME_TITLES = 3;

/** How much comment text a tree keeps for screening. */
export const MAX_COMMENT_TEXT = 64 * 1024;

// Deeper elements are flattened into their ancestor at this depth: text is kept,
// structure is not. Real pages stay far below it; it bounds the walkers'
// recursion on adversarial input (10,000 nested divs).
export const MAX_DEPTH = 300;

const RAW_TEXT = new Set(['script', 'style', 'template', 'noscript', 'iframe', 'xmp', 'noembed', 'noframes']);

const MAIN_CLASS_RE =
  /(?:^|\s)(?:theme-doc-markdown|md-content__inner|md-content|sl-markdown-content|markdown-body|markdown-section|rst-content|body|document|docs-content|doc-content|main-content|page-content|post-content|article-content|entry-content|content|markdown|docMainContainer|contentContainer|content-container|docblock|book-body|page-inner|prose|docs-body|api-content)(?:\s|$)/;
const mainClass = new ClassMatcher(MAIN_CLASS_RE);
// Only block containers can be the main content; testing every <span class> would cost.
const CONTAINER_TAGS = new Set(['div', 'section', 'body', 'td']);
const MAIN_ID_RE = /^(?:main-content|content|main|apicontent|docContent|doc-content|page-content|article|docs-content|primary)$/;

// What the builder needs to know about a tag, in one lookup per element.
interface BuildRule {
  kind: Kind;
  rawText: boolean;
  /** May be the main content by its class or id. */
  container: boolean;
}
const INLINE_RULE: BuildRule = { kind: Kind.Inline, rawText: false, container: false };
const BUILD_RULES = new Map<string, BuildRule>();
for (const tag of new Set([...KINDS.keys(), ...RAW_TEXT, ...CONTAINER_TAGS])) {
  BUILD_RULES.set(tag, { kind: kindOf(tag), rawText: RAW_TEXT.has(tag), container: CONTAINER_TAGS.has(tag) });
}

// DocBook (XML) elements mapped onto their HTML equivalents, so one walker serves both.
const DOCBOOK_TAGS: Record<string, string> = {
  para: 'p',
  simpara: 'p',
  formalpara: 'div',
  itemizedlist: 'ul',
  orderedlist: 'ol',
  listitem: 'li',
  variablelist: 'dl',
  varlistentry: 'div',
  term: 'dt',
  emphasis: 'em',
  literal: 'code',
  code: 'code',
  command: 'code',
  filename: 'code',
  function: 'code',
  varname: 'code',
  option: 'code',
  replaceable: 'code',
  userinput: 'code',
  computeroutput: 'code',
  systemitem: 'code',
  classname: 'code',
  methodname: 'code',
  parameter: 'code',
  type: 'code',
  envar: 'code',
  constant: 'code',
  structname: 'code',
  structfield: 'code',
  ulink: 'a',
  link: 'a',
  xref: 'span',
  note: 'blockquote',
  warning: 'blockquote',
  tip: 'blockquote',
  important: 'blockquote',
  caution: 'blockquote',
  informaltable: 'table',
  tgroup: 'tbody',
  row: 'tr',
  entry: 'td',
  info: 'header',
  bookinfo: 'header',
  articleinfo: 'header',
  programlisting: 'programlisting',
  screen: 'screen',
  literallayout: 'pre',
  synopsis: 'pre',
  blockquote: 'blockquote',
  example: 'figure',
  informalexample: 'div',
  figure: 'figure',
  mediaobject: 'div',
  imageobject: 'div',
  indexterm: 'script',
  remark: 'script',
  abstract: 'div',
  quote: 'q',
  citetitle: 'em',
  firstterm: 'em',
  acronym: 'span',
};
const DOCBOOK_SECTIONS = new Set([
  'book',
  'article',
  'chapter',
  'appendix',
  'preface',
  'part',
  'section',
  'sect1',
  'sect2',
  'sect3',
  'sect4',
  'sect5',
  'refentry',
  'refsect1',
  'refsect2',
  'refsect3',
  'refsection',
  'simplesect',
  'glossary',
  'reference',
  'colophon',
  'dedication',
  'bibliography',
  'index',
]);
const DOCBOOK_CAPTIONED = new Set(['example', 'figure', 'table', 'informalexample', 'equation', 'procedure']);

/** Builds the tree from parse events; deep and code-block content is flattened on the way. */
class TreeBuilder implements HtmlSink {
  readonly tree: HtmlTree;
  private cur: HElement;
  private depth = 0;
  private readonly overflowStack: boolean[] = [];
  // Inside code blocks: per open element, whether it was built (plain token spans are not).
  private readonly codeStack: boolean[] = [];
  private inCode = 0;
  private overflowCode = false;
  private rawText = 0;
  // DocBook section nesting, to turn <title> into h1..h6.
  private sectionDepth = 0;
  private readonly sectionStack: boolean[] = [];
  private commentChars = 0;
  // The ink (text and background colours) in effect, and the enclosing elements' inks, one per open element.
  private ink: Ink = NO_INK;
  private readonly inkStack: Ink[] = [];
  // Past MAX_DEPTH: per open element, whether it began a region whose text is dropped (hidden: also screened).
  private readonly dropStack: Array<'hidden' | 'junk' | null> = [];
  private dropping: 'hidden' | 'junk' | null = null;
  private hiddenChars = 0;

  constructor(private readonly xmlMode: boolean) {
    const root: HElement = { tag: '#root', kind: Kind.Block, attrs: {}, children: NO_CHILDREN, parent: null, inkHidden: false };
    this.tree = {
      root,
      hrefs: [],
      codeElements: [],
      mainCandidates: [],
      h1s: [],
      title: null,
      metas: [],
      homeTitles: [],
      linkTags: [],
      baseHref: null,
      tabs: [],
      comments: [],
      hiddenPastCap: [],
    };
    this.cur = root;
  }

  open(name: string, attrs: Record<string, string>): void {
    if (this.xmlMode) {
      const mapped = this.docbookElement(name, attrs);
      name = mapped.name;
      attrs = mapped.attrs;
    }
    this.inkStack.push(this.ink);
    if (attrs !== NO_ATTRS) this.ink = inkOf(this.ink, name, attrs);
    if (this.depth >= MAX_DEPTH) {
      this.openPastCap(name, attrs);
      return;
    }
    if (this.inCode > 0) {
      // A token span in ink that cannot be seen is built, so the code reader drops it (isCodeJunk).
      if (name === 'span' && !this.ink.hidden && (attrs === NO_ATTRS || isPlainCodeSpan(attrs))) {
        this.codeStack.push(false);
        return;
      }
      this.codeStack.push(true);
    }
    const rule = BUILD_RULES.get(name) ?? INLINE_RULE;
    const el: HElement = { tag: name, kind: rule.kind, attrs, children: NO_CHILDREN, parent: this.cur, inkHidden: this.ink.hidden };
    addChild(this.cur, el);
    this.cur = el;
    this.depth++;
    if (el.kind === Kind.CodeBlock) this.inCode++;
    this.indexByTag(name, attrs, el);
    if (rule.rawText) this.rawText++;
    if (attrs === NO_ATTRS) return;
    const tree = this.tree;
    if (attrs.role !== undefined) {
      if (attrs.role === 'main') tree.mainCandidates.push(el);
      else if (attrs.role === 'tab' && name !== 'a') tree.tabs.push(el);
    } else if (rule.container) {
      const cls = attrs.class;
      const id = attrs.id;
      if ((cls !== undefined && mainClass.test(cls)) || (id !== undefined && MAIN_ID_RE.test(id))) {
        tree.mainCandidates.push(el);
      }
    }
  }

  /** A DocBook element as its HTML equivalent (sections counted, titles made headings or captions). */
  private docbookElement(name: string, attrs: Record<string, string>): { name: string; attrs: Record<string, string> } {
    const isSection = DOCBOOK_SECTIONS.has(name);
    this.sectionStack.push(isSection);
    if (isSection) {
      this.sectionDepth++;
      name = 'section';
    } else if (name === 'title') {
      const parentTag = this.cur.attrs['data-docbook'] ?? this.cur.tag;
      name = DOCBOOK_CAPTIONED.has(parentTag) ? 'figcaption' : `h${Math.min(6, Math.max(1, this.sectionDepth))}`;
    } else {
      const mapped = DOCBOOK_TAGS[name];
      if (mapped !== undefined) {
        if (mapped === 'a') attrs = { ...attrs, href: attrs.url ?? attrs['xlink:href'] ?? (attrs.linkend ? `#${attrs.linkend}` : '') };
        if (mapped === 'programlisting' || mapped === 'screen') {
          if (attrs.language) attrs = { ...attrs, 'data-language': attrs.language };
        }
        if (DOCBOOK_CAPTIONED.has(name)) attrs = { ...attrs, 'data-docbook': name };
        name = mapped;
      }
    }
    if (attrs['xml:id'] && !attrs.id) attrs = { ...attrs, id: attrs['xml:id'] };
    return { name, attrs };
  }

  /**
   * An element past MAX_DEPTH: not built, except one level of code blocks. Its text joins the element at the
   * cap, unless it, or an element around it past the cap, is hidden or holds no prose (a script, a template).
   */
  private openPastCap(name: string, attrs: Record<string, string>): void {
    const tree = this.tree;
    const drops = this.dropping !== null ? null : this.ink.hidden || concealedByAttributes(attrs) ? 'hidden' : BUILD_RULES.get(name)?.kind === Kind.Junk || RAW_TEXT.has(name) ? 'junk' : null;
    this.dropStack.push(drops);
    if (drops !== null) this.dropping = drops;
    if (name === 'a' && attrs.href) tree.hrefs.push(attrs.href);
    // Past the cap everything is flattened, except one level of code blocks,
    // so a <pre> at the bottom of 10,000 <div>s is still a snippet.
    if (!this.overflowCode && (name === 'pre' || name === 'programlisting' || name === 'screen')) {
      const el: HElement = { tag: name, kind: Kind.CodeBlock, attrs, children: NO_CHILDREN, parent: this.cur, inkHidden: this.ink.hidden };
      addChild(this.cur, el);
      this.cur = el;
      tree.codeElements.push(el);
      this.overflowCode = true;
      this.overflowStack.push(true);
    } else {
      this.overflowStack.push(false);
    }
  }

  /** The tree's indexes of elements by tag (links, code blocks, h1s, main candidates, head tags, tabs). */
  private indexByTag(name: string, attrs: Record<string, string>, el: HElement): void {
    const tree = this.tree;
    switch (name) {
      case 'a':
        if (attrs.href) tree.hrefs.push(attrs.href);
        if (attrs.role === 'tab') tree.tabs.push(el);
        if (attrs.title && tree.homeTitles.length < MAX_HOME_TITLES && (attrs.accesskey === 'h' || /(?:^|\s)home(?:\s|$)/i.test(attrs.rel ?? ''))) tree.homeTitles.push(attrs.title);
        break;
      case 'pre':
      case 'programlisting':
      case 'screen':
        tree.codeElements.push(el);
        break;
      case 'h1':
        tree.h1s.push(el);
        break;
      case 'main':
      case 'article':
        tree.mainCandidates.push(el);
        break;
      case 'meta':
        tree.metas.push(attrs);
        break;
      case 'link':
        tree.linkTags.push(attrs);
        break;
      case 'base':
        if (tree.baseHref === null && attrs.href) tree.baseHref = attrs.href;
        break;
      case 'title':
        if (tree.title === null) tree.title = el;
        break;
      case 'label':
        tree.tabs.push(el);
        break;
      default:
        break;
    }
  }

  comment(text: string): void {
    if (this.commentChars >= MAX_COMMENT_TEXT || !/\p{L}{2}/u.test(text)) return;
    const kept = text.slice(0, MAX_COMMENT_TEXT - this.commentChars);
    this.commentChars += kept.length;
    this.tree.comments.push(kept);
  }

  text(text: string): void {
    if (this.dropping !== null) {
      if (this.dropping === 'hidden' && this.hiddenChars < MAX_COMMENT_TEXT && /\p{L}{2}/u.test(text)) {
        const kept = text.slice(0, MAX_COMMENT_TEXT - this.hiddenChars);
        this.hiddenChars += kept.length;
        this.tree.hiddenPastCap.push(kept);
      }
      return;
    }
    const cur = this.cur;
    if (this.rawText > 0 && RAW_TEXT.has(cur.tag) && cur.tag !== 'noscript') return;
    const c = cur.children;
    const last = c.length - 1;
    if (last >= 0 && typeof c[last] === 'string') c[last] = (c[last] as string) + text;
    else addChild(cur, text);
  }

  close(): void {
    this.ink = this.inkStack.pop() ?? NO_INK;
    if (this.xmlMode) {
      const wasSection = this.sectionStack.pop();
      if (wasSection === true) this.sectionDepth--;
    }
    if (this.overflowStack.length > 0) {
      if (this.dropStack.pop() !== null) this.dropping = null;
      if (this.overflowStack.pop() === true && this.cur.parent !== null) {
        this.cur = this.cur.parent;
        this.overflowCode = false;
      }
      return;
    }
    if (this.codeStack.length > 0 && this.codeStack.pop() === false) return;
    const cur = this.cur;
    if (cur.parent === null) return;
    // Only a raw-text element (counted when built) can be one to close.
    if (this.rawText > 0 && RAW_TEXT.has(cur.tag)) this.rawText--;
    if (cur.kind === Kind.CodeBlock) this.inCode--;
    this.cur = cur.parent;
    this.depth--;
  }
}

export function buildTree(html: string, xmlMode: boolean): HtmlTree {
  const builder = new TreeBuilder(xmlMode);
  parseHtml(html, xmlMode, builder);
  return builder.tree;
}

/** Concatenated text of a subtree (iterative: safe on any depth). */
export function textOf(node: HNode): string {
  if (typeof node === 'string') return node;
  let out = '';
  const stack: HNode[] = [node];
  while (stack.length > 0) {
    const n = stack.pop() as HNode;
    if (typeof n === 'string') {
      out += n;
      continue;
    }
    if (n.tag === 'script' || n.tag === 'style') continue;
    if (n.tag === 'br') out += '\n';
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i] as HNode);
  }
  return out;
}

export function isAncestor(ancestor: HElement, node: HElement): boolean {
  let p: HElement | null = node;
  while (p !== null) {
    if (p === ancestor) return true;
    p = p.parent;
  }
  return false;
}
