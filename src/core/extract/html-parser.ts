// htmlparser2's tree rules (implied end tags, void elements, foreign content,
// the ignored second <form>) over the tokens of htmlparser2's own Tokenizer:
// the open / text / close events its Parser (12.0.0) hands a handler. Parser
// keeps the open elements in an array it shifts and unshifts, re-slices every
// token through its chunk list and allocates names and attribute objects per
// token; with one complete string and one consumer none of that is needed, and
// on the doc corpus it was a large share of the bare tokeniser's time
// (bench/extract.ts).
// test/extract/html-parser.test.ts holds the events to Parser's.
import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';

/** What the tree builder receives, in document order. */
export interface HtmlSink {
  open(name: string, attrs: Record<string, string>): void;
  /** Text, CDATA and decoded character references; may be empty (`<![CDATA[]]>`). */
  text(text: string): void;
  /** Closes the most recently opened element that is still open. */
  close(): void;
  /** The text of an HTML comment (not part of the tree; read for screening only). */
  comment?(text: string): void;
}

const { fromCodePoint } = String;

/**
 * The attributes of every element without any (about half of them): nothing
 * writes to an element's attributes once it is built, and `attrs === NO_ATTRS`
 * lets the filters skip their attribute lookups.
 */
export const NO_ATTRS: Readonly<Record<string, string>> = Object.freeze({});

const formTags = new Set(['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea']);
const pTag = new Set(['p']);
const headingTags = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p']);
const tableSectionTags = new Set(['thead', 'tbody']);
const ddtTags = new Set(['dd', 'dt']);
const rtpTags = new Set(['rt', 'rp']);
const openImpliesClose = new Map<string, Set<string>>([
  ['tr', new Set(['tr', 'th', 'td'])],
  ['th', new Set(['th'])],
  ['td', new Set(['thead', 'th', 'td'])],
  ['body', new Set(['head', 'link', 'script'])],
  ['a', new Set(['a'])],
  ['li', new Set(['li'])],
  ['p', pTag],
  ['h1', headingTags],
  ['h2', headingTags],
  ['h3', headingTags],
  ['h4', headingTags],
  ['h5', headingTags],
  ['h6', headingTags],
  ['select', formTags],
  ['input', formTags],
  ['output', formTags],
  ['button', formTags],
  ['datalist', formTags],
  ['textarea', formTags],
  ['option', new Set(['option'])],
  ['optgroup', new Set(['optgroup', 'option'])],
  ['dd', ddtTags],
  ['dt', ddtTags],
  ['address', pTag],
  ['article', pTag],
  ['aside', pTag],
  ['blockquote', pTag],
  ['details', pTag],
  ['div', pTag],
  ['dl', pTag],
  ['fieldset', pTag],
  ['figcaption', pTag],
  ['figure', pTag],
  ['footer', pTag],
  ['form', pTag],
  ['header', pTag],
  ['hr', pTag],
  ['main', pTag],
  ['nav', pTag],
  ['ol', pTag],
  ['pre', pTag],
  ['section', pTag],
  ['table', pTag],
  ['ul', pTag],
  ['rt', rtpTags],
  ['rp', rtpTags],
  ['tbody', tableSectionTags],
  ['tfoot', tableSectionTags],
]);
const voidElements = new Set(['area', 'base', 'basefont', 'br', 'col', 'command', 'embed', 'frame', 'hr', 'img', 'input', 'isindex', 'keygen', 'link', 'meta', 'param', 'source', 'track', 'wbr']);
// Foreign content: inside <svg> and <math> tag names keep SVG casing and
// <script>/<style> are not raw text; integration points switch back to HTML.
const FOREIGN_NONE = 0;
const FOREIGN_SVG = 1;
const FOREIGN_MATHML = 2;
const htmlIntegrationElements = new Set(['mi', 'mo', 'mn', 'ms', 'mtext', 'annotation-xml', 'foreignObject', 'desc', 'title']);
const svgTagNameAdjustments = new Map<string, string>([
  ['altglyph', 'altGlyph'],
  ['altglyphdef', 'altGlyphDef'],
  ['altglyphitem', 'altGlyphItem'],
  ['animatecolor', 'animateColor'],
  ['animatemotion', 'animateMotion'],
  ['animatetransform', 'animateTransform'],
  ['clippath', 'clipPath'],
  ['feblend', 'feBlend'],
  ['fecolormatrix', 'feColorMatrix'],
  ['fecomponenttransfer', 'feComponentTransfer'],
  ['fecomposite', 'feComposite'],
  ['feconvolvematrix', 'feConvolveMatrix'],
  ['fediffuselighting', 'feDiffuseLighting'],
  ['fedisplacementmap', 'feDisplacementMap'],
  ['fedistantlight', 'feDistantLight'],
  ['fedropshadow', 'feDropShadow'],
  ['feflood', 'feFlood'],
  ['fefunca', 'feFuncA'],
  ['fefuncb', 'feFuncB'],
  ['fefuncg', 'feFuncG'],
  ['fefuncr', 'feFuncR'],
  ['fegaussianblur', 'feGaussianBlur'],
  ['feimage', 'feImage'],
  ['femerge', 'feMerge'],
  ['femergenode', 'feMergeNode'],
  ['femorphology', 'feMorphology'],
  ['feoffset', 'feOffset'],
  ['fepointlight', 'fePointLight'],
  ['fespecularlighting', 'feSpecularLighting'],
  ['fespotlight', 'feSpotLight'],
  ['fetile', 'feTile'],
  ['feturbulence', 'feTurbulence'],
  ['foreignobject', 'foreignObject'],
  ['glyphref', 'glyphRef'],
  ['lineargradient', 'linearGradient'],
  ['radialgradient', 'radialGradient'],
  ['textpath', 'textPath'],
]);

// Everything the rules above say about one tag, looked up once per tag.
interface TagRule {
  impliesClose: Set<string> | undefined;
  isVoid: boolean;
  /** Foreign context entered while the element is open; -1 for none. */
  foreign: number;
}
const PLAIN_TAG: TagRule = { impliesClose: undefined, isVoid: false, foreign: -1 };
const TAG_RULES = new Map<string, TagRule>();
for (const name of new Set([...openImpliesClose.keys(), ...voidElements, ...htmlIntegrationElements, 'svg', 'math'])) {
  TAG_RULES.set(name, {
    impliesClose: openImpliesClose.get(name),
    isVoid: voidElements.has(name),
    foreign: name === 'svg' ? FOREIGN_SVG : name === 'math' ? FOREIGN_MATHML : htmlIntegrationElements.has(name) ? FOREIGN_NONE : -1,
  });
}

// Tag and attribute names repeat endlessly ("span", "class"). Reading them
// through this cache returns one shared string instead of a fresh slice and
// its lower-case copy per token: less garbage, and the builder's Map and Set
// lookups hit a string whose hash is already known. Slots are picked by length
// and four sampled characters, then verified character by character; only
// ASCII names are cached.
/**
 * The engine's canonical copy of `s`: property keys are interned, so the key
 * read back is the copy every string literal of the same text shares. Tag
 * names compared with literals (`name === 'pre'`, switch cases) then compare
 * by pointer, and Map and Set lookups and attribute stores skip hashing.
 */
function internalized(s: string): string {
  const o: Record<string, number> = {};
  o[s] = 0;
  return Object.keys(o)[0] ?? s;
}

class NameCache {
  private readonly slots: Array<string | undefined>;

  constructor(
    private readonly lower: boolean,
    private readonly size: number,
    private readonly maxLength: number,
  ) {
    this.slots = new Array<string | undefined>(size);
  }

  read(src: string, start: number, end: number): string {
    const len = end - start;
    if (len <= 0 || len > this.maxLength) return this.slow(src, start, end);
    const lower = this.lower;
    let c0 = src.charCodeAt(start);
    let c1 = src.charCodeAt(end - 1);
    let c2 = src.charCodeAt(start + (len >> 1));
    let c3 = src.charCodeAt(start + (len >> 2));
    if (lower) {
      c0 = c0 >= 65 && c0 <= 90 ? c0 | 0x20 : c0;
      c1 = c1 >= 65 && c1 <= 90 ? c1 | 0x20 : c1;
      c2 = c2 >= 65 && c2 <= 90 ? c2 | 0x20 : c2;
      c3 = c3 >= 65 && c3 <= 90 ? c3 | 0x20 : c3;
    }
    let h = Math.imul(len ^ (c0 << 8) ^ (c1 << 16), 0x9e3779b1);
    h = Math.imul(h ^ c2 ^ (c3 << 12), 0x85ebca6b);
    const slot = (h ^ (h >>> 15)) & (this.size - 1);
    const cached = this.slots[slot];
    if (cached !== undefined && cached.length === len) {
      let i = 0;
      if (lower) {
        for (; i < len; i++) {
          const c = src.charCodeAt(start + i);
          if ((c >= 65 && c <= 90 ? c | 0x20 : c) !== cached.charCodeAt(i)) break;
        }
      } else {
        for (; i < len; i++) if (src.charCodeAt(start + i) !== cached.charCodeAt(i)) break;
      }
      if (i === len) return cached;
    }
    const name = this.slow(src, start, end);
    if (!/[\u0080-\uffff]/.test(name)) {
      const own = internalized(name);
      this.slots[slot] = own;
      return own;
    }
    return name;
  }

  private slow(src: string, start: number, end: number): string {
    const s = src.slice(start, end);
    return this.lower ? s.toLowerCase() : s;
  }
}

const htmlNames = new NameCache(true, 1024, 24);
const xmlNames = new NameCache(false, 1024, 24);

class TreeParser implements TokenizerCallbacks {
  private readonly html: boolean;
  private readonly names: NameCache;
  private tagname = '';
  /** The open tag being read is a void element (HTML): it closes as soon as it opens. */
  private tagIsVoid = false;
  private attribname = '';
  private attribvalue = '';
  private attribs: Record<string, string> | null = null;
  /** Open element names, innermost last. */
  private readonly stack: string[] = [];
  /** Innermost last; never empty. */
  private readonly foreign: number[] = [FOREIGN_NONE];

  constructor(
    private readonly src: string,
    xmlMode: boolean,
    private readonly sink: HtmlSink,
  ) {
    this.html = !xmlMode;
    this.names = xmlMode ? xmlNames : htmlNames;
  }

  isInForeignContext(): boolean {
    return this.foreign[this.foreign.length - 1] !== FOREIGN_NONE;
  }

  ontext(start: number, endIndex: number): void {
    this.sink.text(this.src.slice(start, endIndex));
  }

  ontextentity(cp: number): void {
    this.sink.text(fromCodePoint(cp));
  }

  private readTagName(start: number, endIndex: number): string {
    const name = this.names.read(this.src, start, endIndex);
    if (!this.html) return name;
    const foreign = this.foreign;
    if (foreign[foreign.length - 1] === FOREIGN_SVG) return svgTagNameAdjustments.get(name) ?? name;
    if (foreign.length > 1) {
      const adjusted = svgTagNameAdjustments.get(name);
      if (adjusted !== undefined && this.stack.includes(adjusted)) return adjusted;
    }
    if (foreign[foreign.length - 1] === FOREIGN_NONE) return name === 'image' ? 'img' : name;
    return name;
  }

  onopentagname(start: number, endIndex: number): void {
    this.emitOpenTag(this.readTagName(start, endIndex));
  }

  private emitOpenTag(name: string): void {
    this.tagname = name;
    const html = this.html;
    const stack = this.stack;
    // A second <form> inside an open one is ignored (HTML spec), with its attributes.
    if (html && name === 'form' && stack.includes('form')) {
      this.tagname = '';
      this.tagIsVoid = false;
      return;
    }
    if (html) {
      const rule = TAG_RULES.get(name) ?? PLAIN_TAG;
      const impliesClose = rule.impliesClose;
      if (impliesClose !== undefined) {
        while (stack.length > 0 && impliesClose.has(stack[stack.length - 1] as string)) this.popElement();
      }
      this.tagIsVoid = rule.isVoid;
      if (!rule.isVoid) {
        stack.push(name);
        if (rule.foreign !== -1) this.foreign.push(rule.foreign);
      }
    } else {
      stack.push(name);
    }
    this.attribs = NO_ATTRS;
  }

  private endOpenTag(): void {
    if (this.attribs !== null) {
      this.sink.open(this.tagname, this.attribs);
      this.attribs = null;
    }
    if (this.tagIsVoid) this.sink.close();
    this.tagname = '';
    this.tagIsVoid = false;
  }

  onopentagend(): void {
    this.endOpenTag();
  }

  onclosetag(start: number, endIndex: number): void {
    // Well-formed markup closes the innermost element: compare in place, no name read.
    const top = this.stack[this.stack.length - 1];
    if (top !== undefined && this.foreign.length === 1 && top !== 'image' && this.isNamed(top, start, endIndex)) {
      this.popElement();
      return;
    }
    const name = this.readTagName(start, endIndex);
    if (!this.html || !voidElements.has(name)) {
      const stack = this.stack;
      const at = stack.lastIndexOf(name);
      if (at !== -1) {
        for (let n = stack.length - at; n > 0; n--) this.popElement();
      } else if (this.html && name === 'p') {
        // </p> without <p>: an empty paragraph.
        this.emitOpenTag('p');
        this.closeCurrentTag();
      }
    } else if (name === 'br') {
      // </br> is a <br>.
      this.sink.open('br', NO_ATTRS);
      this.sink.close();
    }
  }

  /** The source name equals `name` (ASCII only, lower-cased in HTML): readTagName would return `name`. */
  private isNamed(name: string, start: number, endIndex: number): boolean {
    const len = endIndex - start;
    if (name.length !== len) return false;
    const src = this.src;
    for (let i = 0; i < len; i++) {
      let c = src.charCodeAt(start + i);
      if (c >= 128) return false;
      if (this.html && c >= 65 && c <= 90) c |= 0x20;
      if (c !== name.charCodeAt(i)) return false;
    }
    return true;
  }

  onselfclosingtag(): void {
    // HTML ignores `/>` except in foreign content; XML honours it.
    if (!this.html || this.isInForeignContext()) this.closeCurrentTag();
    else this.endOpenTag();
  }

  private popElement(): void {
    const name = this.stack.pop() as string;
    // Only an element that entered a foreign context (one is open) leaves one.
    if (this.foreign.length > 1 && (TAG_RULES.get(name) ?? PLAIN_TAG).foreign !== -1) this.foreign.pop();
    this.sink.close();
  }

  private closeCurrentTag(): void {
    const name = this.tagname;
    this.endOpenTag();
    if (this.stack[this.stack.length - 1] === name) this.popElement();
  }

  onattribname(start: number, endIndex: number): void {
    this.attribname = this.names.read(this.src, start, endIndex);
  }

  onattribdata(start: number, endIndex: number): void {
    this.attribvalue += this.src.slice(start, endIndex);
  }

  onattribentity(cp: number): void {
    this.attribvalue += fromCodePoint(cp);
  }

  onattribend(): void {
    const attribs = this.attribs;
    const name = this.attribname;
    if (attribs === NO_ATTRS) {
      const own: Record<string, string> = {};
      own[name] = this.attribvalue;
      this.attribs = own;
    } else if (attribs !== null && (attribs[name] === undefined || !Object.hasOwn(attribs, name))) {
      // The first of repeated attributes wins (`constructor` and friends are inherited, not repeated).
      attribs[name] = this.attribvalue;
    }
    this.attribvalue = '';
  }

  oncdata(start: number, endIndex: number, endOffset: number): void {
    this.sink.text(this.src.slice(start, endIndex - endOffset));
  }

  // Comments, declarations and processing instructions are not part of the tree; a comment's text is
  // handed to a sink that asks for it (screening: a comment addressed to an assistant marks the page).
  oncomment(start: number, endIndex: number, endOffset: number): void {
    this.sink.comment?.(this.src.slice(start, endIndex - endOffset));
  }

  ondeclaration(): void {}

  onprocessinginstruction(): void {}

  onend(): void {}
}

/**
 * Parse a complete document into open / text / close events, as htmlparser2's
 * Parser does with `{ xmlMode, decodeEntities: true, recognizeCDATA: true }`.
 */
export function parseHtml(html: string, xmlMode: boolean, sink: HtmlSink): void {
  // Elements still open at the end need no close events: the builder is done with them.
  const tokenizer = new Tokenizer({ xmlMode, decodeEntities: true }, new TreeParser(html, xmlMode, sink));
  tokenizer.write(html);
  tokenizer.end();
}
