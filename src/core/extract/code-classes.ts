// Class names that matter inside code blocks, shared by the tree builder (which
// flattens plain highlighter spans), the junk filter and the code reader.
import { detach } from './encoding.js';

// Class attributes repeat across a page and across a site; caching the verdict
// of the long alternations below beats re-running them.
export class ClassMatcher {
  private readonly cache = new Map<string, boolean>();
  constructor(private readonly re: RegExp) {}
  test(cls: string): boolean {
    let v = this.cache.get(cls);
    if (v === undefined) {
      v = this.re.test(cls);
      // Bounded: a crawl sees millions of distinct class strings over time.
      if (this.cache.size >= 20_000) this.cache.clear();
      // Detached: a class string sliced from a page would keep the page alive.
      this.cache.set(detach(cls), v);
    }
    return v;
  }
}

// Inside a code block: gutters, copy buttons, screen-reader labels, popups.
const CODE_JUNK_CLASS =
  /(?:^|\s)(?:linenos|linenodiv|lineno|ln|lnt|gl|line-numbers-rows|line-number|line-numbers|linenumber|blob-num|hljs-ln-numbers|hljs-ln-n|rouge-gutter|gutter|code-line-number|sr-only|visually-hidden|screen-reader-text|copybutton|copy-button|copybtn|copy-btn|btn-copy|copy-code|code-copy|clipboard|md-clipboard|md-code__nav|md-code__button|twoslash-popup-container|code-title|filename|code-block-caption|expressive-code-copy|copy)(?:\s|$)|(?:^|\s)[\w-]*(?:copyButton|CopyButton|clipboardButton|codeLineNumber|buttonGroup|codeBlockTitle|lineNumber)[\w-]*(?:\s|$)/;

export const codeJunkClass = new ClassMatcher(CODE_JUNK_CLASS);

/** Elements that are one line each (Shiki, Prism, Expressive Code, Chroma, CodeMirror). */
export const LINE_CLASS = /(?:^|\s)(?:line|token-line|ec-line|code-line|cm-line|view-line|hljs-ln-line|codeline|highlight-line|react-syntax-highlighter-line-number-line)(?:\s|$)/;

const lineClass = new ClassMatcher(LINE_CLASS);

/**
 * A highlighter token span inside a code block that carries nothing but text
 * (Pygments `<span class="n">`, Prism `<span class="token keyword">`, Shiki
 * `<span style>`): the tree keeps its text and drops the element. Code blocks
 * hold about a third of a documentation page's elements.
 */
// Inline styles that hide an element from a reader (but not from a program reading the text).
const HIDDEN_STYLE =
  /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse)|(?:opacity|font-size)\s*:\s*0(?:\.0*)?(?:[a-z%]+)?\s*(?:!important\s*)?(?:;|$)|clip\s*:\s*rect\(\s*0[a-z]*\s*,?\s*0|(?:left|top|right|text-indent|margin-left|margin-top)\s*:\s*-(?:9{3,}|\d{4,}))/i;
// Text a person cannot make out though it is technically drawn: near-zero opacity, a font of a pixel, a
// clip or scale to nothing, transparent ink.
const FAINT_STYLE =
  /(?:^|;)\s*(?:(?:opacity\s*:\s*0?\.0\d*|font-size\s*:\s*(?:1|0?\.\d+)(?:px|pt))\s*(?:!important\s*)?(?:;|$)|color\s*:\s*transparent\b|clip-path\s*:\s*(?:inset\(\s*(?:50|100)%|circle\(\s*0(?:px|%)?\s*\))|transform\s*:\s*scale\(\s*0(?:\.0*)?\s*[,)])/i;
const ZERO_SIZE = /(?:^|;)\s*(?:max-)?(?:width|height)\s*:\s*(?:0(?:\.0*)?(?:[a-z%]+)?|1px)\s*(?:!important\s*)?(?:;|$)/i;
const OVERFLOW_HIDDEN = /(?:^|;)\s*overflow\s*:\s*hidden/i;

/** An inline style that hides the element: display, visibility, (near) zero opacity, font size or box, a clip to nothing, or off-screen. */
export function hiddenByStyle(style: string): boolean {
  return HIDDEN_STYLE.test(style) || FAINT_STYLE.test(style) || (ZERO_SIZE.test(style) && OVERFLOW_HIDDEN.test(style));
}

const VISUALLY_HIDDEN_CLASS = /(?:^|\s)(?:sr-only|visually-hidden|visuallyhidden|screen-reader-text|screen-reader-only|a11y-hidden|hidden|d-none|invisible)(?:\s|$)/;

/**
 * Hidden from a reader by its attributes: `hidden` (but an inactive tab panel, whose text is indexed and screened
 * as prose), an inline style that hides it, or a visually-hidden class.
 */
export function concealedByAttributes(attrs: Record<string, string>): boolean {
  if (attrs.role === 'tabpanel') return false;
  if (attrs.hidden !== undefined) return true;
  if (attrs.style !== undefined && hiddenByStyle(attrs.style)) return true;
  return attrs.class !== undefined && VISUALLY_HIDDEN_CLASS.test(attrs.class);
}

export function isPlainCodeSpan(attrs: Record<string, string>): boolean {
  if (attrs['aria-hidden'] !== undefined || attrs.hidden !== undefined || attrs['data-line-number'] !== undefined || attrs['data-linenos'] !== undefined) {
    return false;
  }
  if (attrs.style !== undefined && hiddenByStyle(attrs.style)) return false;
  const cls = attrs.class;
  if (cls === undefined || cls.length === 0) return true;
  if (cls.length <= 3) return cls !== 'ln' && cls !== 'lnt' && cls !== 'gl';
  return !lineClass.test(cls) && !codeJunkClass.test(cls);
}
