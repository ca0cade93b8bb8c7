// MDX as authors write it, read by the markdown extractor without an MDX parser (see markdown.ts for why):
//
// - JSX component tags (`<Sandpack>`, `<Pitfall>`, `<TabItem value="a">`) on lines of their own are set
//   apart by blank lines before parsing, as MDX reads them, so CommonMark does not swallow the markdown
//   and code around them into one HTML block;
// - an HTML block that is JSX gives its tags (for tab labels and code groups) and its inner markdown,
//   parsed again by the caller, so a component's text is prose and its code blocks are snippets;
// - `{/*id*\/}` heading ids become the heading's anchor, and `{/* comments */}` leave the text.
// All of it is linear in the document's size.

/** Whether a `.md` document is written as MDX: a JSX component tag at a line start, or an MDX comment. */
export function looksLikeMdx(text: string): boolean {
  return /^[ \t]{0,3}<\/?[A-Z][\w.]*(?:[\s/>]|$)/m.test(text) || /\{\/\*[\s\S]{0,500}?\*\/\}/.test(text);
}

const MAX_TAG_CHARS = 4000;

/** A JSX tag at `i` (`<Name attr="x" expr={a > b}>`, `</Name>`, `<Name />`, `<>`): its end, or -1. */
function tagEnd(s: string, i: number): number {
  if (s[i] !== '<') return -1;
  let j = i + 1;
  if (s[j] === '/') j++;
  if (s[j] === '>') return j + 1;
  if (!/[A-Za-z]/.test(s[j] ?? '')) return -1;
  let quote: string | null = null;
  let braces = 0;
  // A tag longer than this is not one a person wrote: bounded, so reading a block stays linear.
  const stop = Math.min(s.length, i + MAX_TAG_CHARS);
  for (; j < stop; j++) {
    const c = s[j] as string;
    if (quote !== null) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'" || c === '`') {
      quote = c;
    } else if (c === '{') {
      braces++;
    } else if (c === '}') {
      braces = Math.max(0, braces - 1);
    } else if (c === '>' && braces === 0) {
      return j + 1;
    } else if (c === '\n' && braces === 0 && quote === null && s[j + 1] === '\n') {
      return -1;
    }
  }
  return -1;
}

export interface JsxTag {
  name: string;
  closing: boolean;
  selfClosing: boolean;
  /** The tag's source, for reading its attributes. */
  source: string;
}

const COMPONENT_NAME = /^<\/?([A-Z][\w.]*)?/;

function readTag(source: string): JsxTag {
  const m = COMPONENT_NAME.exec(source);
  return { name: m?.[1] ?? '', closing: source.startsWith('</'), selfClosing: source.endsWith('/>'), source };
}

/** The component tags a line is made of (only tags and spaces), else null. Fragments (`<>`) have an empty name. */
function lineTags(line: string): JsxTag[] | null {
  const tags: JsxTag[] = [];
  let i = 0;
  for (;;) {
    while (line[i] === ' ' || line[i] === '\t') i++;
    if (i >= line.length) break;
    if (!/^<\/?(?:[A-Z]|>)/.test(line.slice(i, i + 3))) return null;
    const end = tagEnd(line, i);
    if (end < 0) return null;
    tags.push(readTag(line.slice(i, end)));
    i = end;
  }
  return tags.length > 0 ? tags : null;
}

const FENCE_LINE = /^[ \t]*(`{3,}|~{3,})/;

/** Per line, whether it is fenced code or one of its fence lines: what MDX and include readers leave alone. */
export function fencedLines(lines: readonly string[]): boolean[] {
  const fenced = new Array<boolean>(lines.length).fill(false);
  let fence: string | null = null;
  for (let k = 0; k < lines.length; k++) {
    const line = lines[k] as string;
    const f = FENCE_LINE.exec(line);
    if (fence !== null) {
      fenced[k] = true;
      if (f && (f[1] as string)[0] === fence[0] && (f[1] as string).length >= fence.length && line.trim() === f[1]) fence = null;
    } else if (f) {
      fenced[k] = true;
      fence = f[1] as string;
    }
  }
  return fenced;
}

/**
 * The document with a blank line before and after every line that is only JSX component tags, outside
 * fenced code: MDX reads such a line as a block of its own, CommonMark as the start of an HTML block
 * that runs to the next blank line, with whatever markdown or fence follows it.
 */
export function separateJsxLines(text: string): string {
  const lines = text.split('\n');
  const fenced = fencedLines(lines);
  const out: string[] = [];
  let changed = false;
  for (let k = 0; k < lines.length; k++) {
    const line = lines[k] as string;
    if (fenced[k]) {
      out.push(line);
      continue;
    }
    if (line.length < 2000 && line.trimStart().startsWith('<') && lineTags(line) !== null) {
      if (out.length > 0 && (out[out.length - 1] as string).trim() !== '') out.push('');
      out.push(line);
      if (k + 1 < lines.length && (lines[k + 1] as string).trim() !== '') out.push('');
      changed = true;
      continue;
    }
    out.push(line);
  }
  return changed ? out.join('\n') : text;
}

/** A piece of an HTML block written as JSX: a component tag, or the markdown between tags. */
export type JsxPart = { tag: JsxTag } | { text: string };

/**
 * The HTML block as JSX when it starts with a component tag (or a fragment), else null: its tags that
 * `isStructural` picks (tabs, code groups) as parts of their own, in order with the markdown between them;
 * other component tags are left out of the text.
 */
export function readJsxBlock(value: string, isStructural: (tag: JsxTag) => boolean): JsxPart[] | null {
  if (!/^<\/?(?:[A-Z]|>)/.test(value.trimStart())) return null;
  const parts: JsxPart[] = [];
  let text = '';
  const flush = (): void => {
    if (text.trim() !== '') parts.push({ text });
    text = '';
  };
  let i = 0;
  while (i < value.length) {
    const lt = value.indexOf('<', i);
    if (lt < 0) {
      text += value.slice(i);
      break;
    }
    const end = /^<\/?(?:[A-Z]|>)/.test(value.slice(lt, lt + 3)) ? tagEnd(value, lt) : -1;
    if (end < 0) {
      text += value.slice(i, lt + 1);
      i = lt + 1;
      continue;
    }
    text += value.slice(i, lt);
    const tag = readTag(value.slice(lt, end));
    if (isStructural(tag)) {
      flush();
      parts.push({ tag });
    }
    i = end;
  }
  flush();
  return parts;
}

/** A JSX attribute's string value (`label="x"`, `label='x'`, `label={"x"}`, `label={`x`}`), else null. */
export function jsxAttribute(tag: JsxTag, name: string): string | null {
  const re = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|\\{\\s*["'\`]([^"'\`]*)["'\`]\\s*\\})`);
  const m = re.exec(tag.source);
  return m ? (m[1] ?? m[2] ?? m[3] ?? null) : null;
}

const HEADING_ID = /\s*\{\/\*?\s*([\w:.-]+)\s*\*?\/\}\s*$/;

// A heading's text without a trailing MDX comment id (`{/*id*\/}`), and the id; micromark may have read the
// comment's stars as emphasis.
export function mdxHeadingId(text: string): { text: string; id: string } | null {
  const m = HEADING_ID.exec(text);
  return m ? { text: text.slice(0, m.index).trim(), id: m[1] as string } : null;
}

// Text without MDX comments (`{/* … *\/}`), and `{/word/}` where emphasis took a comment's stars.
export function stripMdxComments(text: string): string {
  if (!text.includes('{/')) return text;
  return text.replace(/\{\/\*[\s\S]*?\*\/\}|\{\/[\w:.-]+\/\}/g, ' ').replace(/[ \t]{2,}/g, ' ');
}

const IMPORT_EXPORT = /^(?:import|export)\s/;
const HEADING_LINE = /^ {0,3}#{1,6}\s/;

/** Component tags outside inline code spans removed from a line of text. */
function withoutTags(line: string): string {
  if (!/<\/?(?:[A-Z]|>)/.test(line)) return line;
  const spans = line.split(/(`+[^`]*`+)/);
  for (let k = 0; k < spans.length; k += 2) {
    const span = spans[k] as string;
    let out = '';
    let i = 0;
    while (i < span.length) {
      const lt = span.indexOf('<', i);
      if (lt < 0) {
        out += span.slice(i);
        break;
      }
      const end = /^<\/?(?:[A-Z]|>)/.test(span.slice(lt, lt + 3)) ? tagEnd(span, lt) : -1;
      out += span.slice(i, end < 0 ? lt + 1 : lt);
      i = end < 0 ? lt + 1 : end;
    }
    spans[k] = out;
  }
  return spans.join('');
}

function indentWidth(line: string): number {
  return line.length - line.trimStart().length;
}

/**
 * Lines inside a component (between its tag lines) lose their common indentation: MDX reads a component's
 * children as markdown whatever their indentation, where CommonMark would read four spaces as code.
 */
function dedentComponents(lines: string[], fenced: readonly boolean[]): string[] {
  let depth = 0;
  let start = -1;
  for (let k = 0; k < lines.length; k++) {
    const line = lines[k] as string;
    if (fenced[k]) continue;
    const tags = line.length < 2000 && line.trimStart().startsWith('<') ? lineTags(line) : null;
    if (tags === null) continue;
    for (const tag of tags) {
      if (tag.selfClosing) continue;
      if (!tag.closing && depth++ === 0) start = k + 1;
      if (tag.closing && depth > 0 && --depth === 0) dedentRange(lines, start, k);
    }
  }
  return lines;
}

function dedentRange(lines: string[], from: number, to: number): void {
  let common = Infinity;
  for (let k = from; k < to; k++) if ((lines[k] as string).trim() !== '') common = Math.min(common, indentWidth(lines[k] as string));
  if (common === 0 || !Number.isFinite(common)) return;
  for (let k = from; k < to; k++) lines[k] = (lines[k] as string).slice(Math.min(common, indentWidth(lines[k] as string)));
}

/**
 * An MDX page as markdown for readers (the page's stored text): component tags, `import`/`export` lines
 * and MDX comments left out, `{/*id*\/}` heading ids written `{#id}`; fenced code as written.
 */
export function mdxToMarkdown(text: string): string {
  const out: string[] = [];
  const source = text.split('\n');
  const fenced = fencedLines(source);
  const lines = dedentComponents(source, fenced);
  for (let k = 0; k < lines.length; k++) {
    const line = lines[k] as string;
    if (fenced[k]) {
      out.push(line);
      continue;
    }
    if (IMPORT_EXPORT.test(line)) continue;
    if (HEADING_LINE.test(line)) {
      const id = mdxHeadingId(line);
      if (id) {
        out.push(`${id.text} {#${id.id}}`);
        continue;
      }
    }
    const clean = stripMdxComments(withoutTags(line));
    // A line that held only tags or a comment goes, and with it the blank line it would leave doubled.
    if (clean.trim() === '' && line.trim() !== '') continue;
    if (clean.trim() === '' && out.length > 0 && (out[out.length - 1] as string).trim() === '') continue;
    out.push(clean.trim() === '' ? '' : clean === line ? line : clean.trimEnd());
  }
  return out.join('\n');
}
