// The plain text of a heading's or paragraph's inline markdown, as the extractor reads it from
// an mdast tree: emphasis marks and link syntax gone, escapes resolved, inline code kept in
// backticks, raw HTML dropped, a hard break read as a space. One pass over the source with
// CommonMark's delimiter and bracket rules (micromark's attention and label-end constructs); the
// tree itself is never built.
//
// Constructs this pass does not read exactly return null, and the caller reads that paragraph with
// micromark: character references, images, footnote calls, strikethrough, HTML comments and
// processing instructions, and GFM literal autolinks next to emphasis marks.
import { normalizeLabel } from './markdown-blocks.js';

const PLAIN = /[^\\`*_[\]<\n&~!]+/y;
const ASCII_PUNCTUATION = /[!-/:-@[-`{-~]/;
const WHITESPACE = /\s/u;
const PUNCTUATION = /[\p{P}\p{S}]/u;
const REFERENCE = /&(?:#\d{1,7}|#[xX][\da-fA-F]{1,6}|[A-Za-z][A-Za-z\d]{0,31});/y;
const AUTOLINK = /<([A-Za-z][A-Za-z\d+.-]{1,31}:[^\0- <>]*|[\w.!#$%&'*+/=?^`{|}~-]+@[A-Za-z\d](?:[A-Za-z\d-]{0,61}[A-Za-z\d])?(?:\.[A-Za-z\d](?:[A-Za-z\d-]{0,61}[A-Za-z\d])?)*)>/y;
const ATTRIBUTE = `\\s+[A-Za-z_:][\\w.:-]*(?:\\s*=\\s*(?:[^"'=<>\`\\0- ]+|'[^']*'|"[^"]*"))?`;
const HTML_TAG = new RegExp(`<(?:[A-Za-z][A-Za-z\\d-]*(?:${ATTRIBUTE})*\\s*/?>|/[A-Za-z][A-Za-z\\d-]*\\s*>)`, 'y');
// A GFM literal autolink (www., http(s)://, an e-mail address) with emphasis marks in it.
const LITERAL_AUTOLINK_WITH_MARKS = /(?:www\.|https?:\/\/|@)\S*[*_~]|[*_~]\S*(?:www\.|https?:\/\/|[\w.+-]@)/;

/** A run of `*` or `_`; `count` marks are left once emphasis is resolved. */
interface Delimiter {
  char: string;
  count: number;
  canOpen: boolean;
  canClose: boolean;
  part: number;
}

interface Bracket {
  part: number;
  /** Delimiters before this bracket: emphasis inside a link resolves above them. */
  delimiters: number;
  start: number;
  active: boolean;
}

class Unreadable extends Error {}

/** 1: whitespace or line edge, 2: punctuation, 0: other (micromark's classifyCharacter). */
function classify(ch: string | undefined): number {
  if (ch === undefined || WHITESPACE.test(ch)) return 1;
  return PUNCTUATION.test(ch) ? 2 : 0;
}

/** Where a backtick run of `size` closes, from `from`; -1 when it doesn't. */
function closingTicks(src: string, from: number, size: number): number {
  let i = src.indexOf('`', from);
  while (i >= 0) {
    let k = 0;
    while (src[i + k] === '`') k++;
    if (k === size) return i;
    i = src.indexOf('`', i + k);
  }
  return -1;
}

/** The position after `[label]` at `p`, or -1 (no brackets inside, at most 999 characters). */
function labelEnd(src: string, p: number): number {
  for (let i = p + 1; i < src.length && i - p <= 1000; i++) {
    const c = src[i];
    if (c === '\\') i++;
    else if (c === '[') return -1;
    else if (c === ']') return i + 1;
  }
  return -1;
}

function skipWhitespace(src: string, p: number): number {
  let i = p;
  while (i < src.length && /[ \t\n]/.test(src[i] as string)) i++;
  return i;
}

/** A destination without angle brackets: balanced parentheses, no whitespace or controls. */
function rawDestinationEnd(src: string, p: number): number {
  let depth = 0;
  let i = p;
  for (; i < src.length; i++) {
    const c = src.charCodeAt(i);
    if (c === 92 && ASCII_PUNCTUATION.test(src[i + 1] ?? '')) i++;
    else if (c === 40) {
      if (++depth > 32) return -1;
    } else if (c === 41) {
      if (depth === 0) break;
      depth--;
    } else if (c <= 32 || c === 127) break;
  }
  return depth === 0 && i > p ? i : -1;
}

function titleEnd(src: string, p: number): number {
  const open = src[p];
  const close = open === '(' ? ')' : open;
  if (open !== '"' && open !== "'" && open !== '(') return -1;
  for (let i = p + 1; i < src.length; i++) {
    const c = src[i];
    if (c === '\\') i++;
    else if (c === close) return i + 1;
    else if (open === '(' && c === '(') return -1;
  }
  return -1;
}

/** The position after `(destination "title")` whose `(` is at `p - 1`, or -1. */
function resourceEnd(src: string, p: number): number {
  let i = skipWhitespace(src, p);
  if (src[i] === ')') return i + 1;
  if (src[i] === '<') {
    let j = i + 1;
    for (; j < src.length && src[j] !== '>'; j++) {
      if (src[j] === '\n' || src[j] === '<') return -1;
      if (src[j] === '\\') j++;
    }
    if (j >= src.length) return -1;
    i = j + 1;
  } else {
    i = rawDestinationEnd(src, i);
    if (i < 0) return -1;
  }
  const afterSpace = skipWhitespace(src, i);
  if (src[afterSpace] === ')') return afterSpace + 1;
  if (afterSpace === i) return -1;
  const t = titleEnd(src, afterSpace);
  if (t < 0) return -1;
  const end = skipWhitespace(src, t);
  return src[end] === ')' ? end + 1 : -1;
}

class InlineReader {
  private readonly parts: string[] = [];
  private readonly delimiters: Delimiter[] = [];
  private readonly brackets: Bracket[] = [];
  private buf = '';
  private i = 0;

  constructor(
    private readonly src: string,
    private readonly labels: ReadonlySet<string>,
    private readonly lenient: boolean,
  ) {}

  /** An unreadable construct: null for the caller, or, when lenient, its first character as text. */
  private unreadable(why: string): void {
    if (!this.lenient) throw new Unreadable(why);
    this.buf += this.src[this.i] as string;
    this.i++;
  }

  read(): string {
    const src = this.src;
    while (this.i < src.length) {
      const c = src[this.i] as string;
      if (c === '\\') this.escape();
      else if (c === '`') this.codeSpan();
      else if (c === '*' || c === '_') this.delimiterRun(c);
      else if (c === '[') this.openBracket();
      else if (c === ']') this.closeBracket();
      else if (c === '<') this.angle();
      else if (c === '\n') this.lineEnding();
      else if (c === '&' && this.reference()) this.unreadable('character reference');
      else if (c === '~' || (c === '!' && src[this.i + 1] === '[')) this.unreadable('strikethrough or image');
      else this.plain();
    }
    this.flush();
    this.resolveEmphasis(0);
    for (const d of this.delimiters) this.parts[d.part] = d.char.repeat(d.count);
    return this.parts.join('');
  }

  /** Characters up to the next one that may start a construct, as text. */
  private plain(): void {
    PLAIN.lastIndex = this.i + 1;
    PLAIN.test(this.src);
    const end = PLAIN.lastIndex > this.i + 1 ? PLAIN.lastIndex : this.i + 1;
    this.buf += this.src.slice(this.i, end);
    this.i = end;
  }

  private reference(): boolean {
    REFERENCE.lastIndex = this.i;
    return REFERENCE.test(this.src);
  }

  private flush(): void {
    if (this.buf !== '') this.parts.push(this.buf);
    this.buf = '';
  }

  private escape(): void {
    const next = this.src[this.i + 1];
    if (next === '\n') {
      this.buf += ' ';
      this.i += 2;
    } else if (next !== undefined && ASCII_PUNCTUATION.test(next)) {
      this.buf += next;
      this.i += 2;
    } else {
      this.buf += '\\';
      this.i++;
    }
  }

  private codeSpan(): void {
    let size = 0;
    while (this.src[this.i + size] === '`') size++;
    const close = closingTicks(this.src, this.i + size, size);
    if (close < 0) {
      this.buf += '`'.repeat(size);
      this.i += size;
      return;
    }
    let code = this.src.slice(this.i + size, close);
    if (/^[ \n]/.test(code) && /[ \n]$/.test(code) && /[^ \n]/.test(code)) code = code.slice(1, -1);
    this.buf += `\`${code}\``;
    this.i = close + size;
  }

  private delimiterRun(char: string): void {
    let size = 0;
    while (this.src[this.i + size] === char) size++;
    const before = classify(this.src[this.i - 1]);
    const after = classify(this.src[this.i + size]);
    const left = after !== 1 && (after !== 2 || before !== 0);
    const right = before !== 1 && (before !== 2 || after !== 0);
    this.flush();
    this.delimiters.push({
      char,
      count: size,
      canOpen: char === '*' ? left : left && (!right || before === 2),
      canClose: char === '*' ? right : right && (!left || after === 2),
      part: this.parts.length,
    });
    this.parts.push('');
    this.i += size;
  }

  private openBracket(): void {
    if (this.src[this.i + 1] === '^') {
      this.unreadable('footnote call');
      return;
    }
    this.flush();
    this.brackets.push({ part: this.parts.length, delimiters: this.delimiters.length, start: this.i + 1, active: true });
    this.parts.push('[');
    this.i++;
  }

  private closeBracket(): void {
    const b = this.brackets.pop();
    const end = b?.active ? this.linkEnd(b) : -1;
    if (b === undefined || end < 0) {
      this.buf += ']';
      this.i++;
      return;
    }
    this.flush();
    this.resolveEmphasis(b.delimiters);
    for (const d of this.delimiters.splice(b.delimiters)) this.parts[d.part] = d.char.repeat(d.count);
    this.parts[b.part] = '';
    // Links contain no links: the brackets open before this one read as text.
    for (const open of this.brackets) open.active = false;
    this.i = end;
  }

  /** Where the link closed at this `]` ends (micromark's label end: resource, full, collapsed, shortcut), or -1. */
  private linkEnd(b: Bracket): number {
    const src = this.src;
    const i = this.i;
    const label = src.slice(b.start, i);
    const defined = label.length <= 999 && this.labels.has(normalizeLabel(label));
    if (src[i + 1] === '(') {
      const end = resourceEnd(src, i + 2);
      if (end >= 0) return end;
      return defined ? i + 1 : -1;
    }
    if (src[i + 1] === '[') {
      const end = labelEnd(src, i + 1);
      const full = end < 0 ? '' : normalizeLabel(src.slice(i + 2, end - 1));
      if (full !== '' && this.labels.has(full)) return end;
      if (!defined) return -1;
      return src[i + 2] === ']' ? i + 3 : i + 1;
    }
    return defined ? i + 1 : -1;
  }

  /**
   * micromark's attention resolution over the delimiters from `bottom`: each closer takes the
   * nearest opener it may close; delimiters between them stay text. Delimiters are kept in a linked
   * list and, per kind of closer, the point below which no opener matched it (CommonMark's
   * openers_bottom), so a long run of unmatched openers is walked once, not once per closer.
   */
  private resolveEmphasis(bottom: number): void {
    const ds = this.delimiters;
    // Links by absolute index, held in maps: a link's text resolves only its own few delimiters.
    const prev = new Map<number, number>();
    const next = new Map<number, number>();
    const prevOf = (i: number): number => prev.get(i) ?? i - 1;
    const nextOf = (i: number): number => next.get(i) ?? i + 1;
    const unlink = (i: number): void => {
      const p = prevOf(i);
      const n = nextOf(i);
      if (p >= bottom) next.set(p, n);
      if (n < ds.length) prev.set(n, p);
    };
    const floor = new Map<string, number>();
    let c = bottom;
    while (c < ds.length) {
      const closer = ds[c] as Delimiter;
      if (!closer.canClose || closer.count === 0) {
        c = nextOf(c);
        continue;
      }
      const key = `${closer.char}${closer.canOpen ? 1 : 0}${closer.count % 3}`;
      const o = this.openerFor(closer, prevOf, c, Math.max(bottom - 1, floor.get(key) ?? -1));
      if (o < 0) {
        floor.set(key, prevOf(c));
        const after = nextOf(c);
        if (!closer.canOpen) unlink(c);
        c = after;
        continue;
      }
      const opener = ds[o] as Delimiter;
      const use = opener.count > 1 && closer.count > 1 ? 2 : 1;
      opener.count -= use;
      closer.count -= use;
      // The delimiters between them are text now: out of the list.
      next.set(o, c);
      prev.set(c, o);
      if (opener.count === 0) unlink(o);
      if (closer.count === 0) {
        const after = nextOf(c);
        unlink(c);
        c = after;
      }
    }
  }

  private openerFor(closer: Delimiter, prevOf: (i: number) => number, c: number, stop: number): number {
    for (let o = prevOf(c); o > stop; o = prevOf(o)) {
      const opener = this.delimiters[o] as Delimiter;
      if (opener.char !== closer.char || !opener.canOpen || opener.count === 0) continue;
      const sum = opener.count + closer.count;
      if ((opener.canClose || closer.canOpen) && sum % 3 === 0 && !(opener.count % 3 === 0 && closer.count % 3 === 0)) continue;
      return o;
    }
    return -1;
  }

  /** `<`: an autolink (its address is its text), an HTML tag (dropped), or a literal. */
  private angle(): void {
    const src = this.src;
    AUTOLINK.lastIndex = this.i;
    const link = AUTOLINK.exec(src);
    if (link !== null) {
      this.buf += link[1];
      this.i += link[0].length;
      return;
    }
    HTML_TAG.lastIndex = this.i;
    const tag = HTML_TAG.exec(src);
    if (tag !== null) {
      this.i += tag[0].length;
      return;
    }
    if (src[this.i + 1] === '!' || src[this.i + 1] === '?') {
      this.unreadable('HTML comment or declaration');
      return;
    }
    this.buf += '<';
    this.i++;
  }

  /** A line ending: two or more spaces before it make a hard break (a space); others are dropped. */
  private lineEnding(): void {
    let k = 0;
    while (this.src[this.i - 1 - k] === ' ') k++;
    if (k > 0) this.buf = this.buf.slice(0, -k);
    this.buf += k >= 2 ? ' ' : '\n';
    this.i++;
  }
}

/**
 * The text of inline markdown as the extractor reads it from mdast (see mdText in markdown.ts),
 * given the document's normalised definition labels; null when only micromark reads it exactly.
 * `lenient` reads what it can't read exactly as literal text instead (for sources too long to hand
 * to micromark) and never returns null.
 */
export function inlineText(source: string, labels: ReadonlySet<string>, lenient = false): string | null {
  if (!lenient && LITERAL_AUTOLINK_WITH_MARKS.test(source)) return null;
  try {
    return new InlineReader(source, labels, lenient).read();
  } catch (err) {
    if (err instanceof Unreadable) return null;
    throw err;
  }
}
