// A page's sections: the units of its prose. Each heading starts one that runs to the next heading (of any
// level), so every line of the page belongs to exactly one section and no text is indexed twice; the headings
// above it are its breadcrumb. Cut from the page's markdown, which every format renders (HTML, markdown, rst,
// AsciiDoc, notebooks), so the rule lives once. On an HTML page an API entry's term (`**json.dumps(obj, …)**`:
// how a definition list comes out in markdown) starts a section too, nested under its heading, as the snippets'
// titles already treat it; a bold line that is not one (a table's caption) does not. A section keeps its code
// blocks in its text: it is shown with them.
//
// Where sections start: the extractor's headings (ExtractedPage.headings: the page's headings and, on an HTML
// page, its API entries) found as lines of the markdown, in order; without that list, the markdown's heading
// lines. Anchors, so that a section's URL opens it: an id written on the heading line (`{#id}`, MkDocs'
// `{ #id }`, MDX's `{/*id*/}`), else the id the extractor read for the heading (an HTML element's id), else
// the one the page's snippets under that heading link to, else the heading's GitHub-style slug.
import { plainText, truncateWords, DESCRIPTION_MAX } from './context.js';
import { md5Hex } from './encoding.js';
import { normalizeLanguage } from './language-names.js';
import { Slugger } from './markdown.js';
import { pageUrlWithoutFragment } from './snippet.js';
import type { ExtractedPage, ExtractedSection, ExtractedSnippet, PageHeading } from './types.js';
import { collapseSpaces } from './whitespace.js';

// A section's stored text is bounded: past this a section is a page of its own (a changelog), and its start
// says what it is about.
export const MAX_SECTION_CHARS = 24_000;

const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const BOLD_TERM = /^\*\*([^\n]+)\*\*\s*$/;
const FENCE_OPEN = /^([ \t]*)(`{3,}|~{3,})(.*)$/;
const EXPLICIT_ID = /\s*\{\s*#([\w:.-]+)[^}]*\}\s*$/;
const MDX_ID = /\s*\{\/\*\s*([\w:.-]+)\s*\*\/\}\s*$/;
// A line with a word of prose: not markup alone (a JSX or HTML tag line, a rule, a table border).
const PROSE_WORD = /[\p{L}\p{N}]{2,}/u;
const LINK_DESTINATION = /\]\([^)\s]*(?:\s+"[^"]*")?\)/g;
const MARKUP_LINE = /^\s*(?:<\/?[A-Za-z][^<>]*>\s*)+$|^\s*(?:[-*_]\s*){3,}$|^\s*\|?(?:\s*:?-+:?\s*\|)+\s*$/;

interface Boundary {
  line: number;
  level: number;
  title: string;
  /** The id written on the heading line, or the one the extractor read for it (an HTML element's id). */
  anchor: string | null;
  term: boolean;
}

/** A heading line's own text and the id written on it, if any. */
function headingParts(raw: string): { title: string; explicit: string | null } {
  const m = EXPLICIT_ID.exec(raw) ?? MDX_ID.exec(raw);
  const text = m ? raw.slice(0, m.index) : raw;
  return { title: plainText(text.replace(/[¶#]+$/, '')), explicit: m?.[1] ?? null };
}

/** Where a fence opened at `line` closes (the line after the page's end when it never does). */
function fenceEnd(lines: readonly string[], line: number, marker: string): number {
  const closing = new RegExp(`^[ \\t]*${marker[0] === '`' ? '`' : '~'}{${marker.length},}[ \\t]*$`);
  for (let i = line + 1; i < lines.length; i++) if (closing.test(lines[i]!)) return i;
  return lines.length;
}

/** A heading's text reduced to its letters and digits: the markdown line and the extractor's text compare equal. */
function headingKey(text: string): string {
  return text
    .replace(/\{[^{}]*\}/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '');
}

// How far ahead in the extractor's headings a markdown heading line is looked for: a heading the markdown does
// not show as a line (an empty one, one inside a table) is passed over.
const HEADING_LOOKAHEAD = 16;

/** The index of the heading with `key` among the next few from `from`, or -1. */
function findHeading(headings: ReadonlyArray<{ key: string }>, from: number, key: string): number {
  for (let j = from; j < Math.min(headings.length, from + HEADING_LOOKAHEAD); j++) if (headings[j]!.key === key) return j;
  return -1;
}

/**
 * The section boundaries of the page's lines, outside code fences: each heading line, and each line that is
 * one of the extractor's headings (an API entry's bold term on an HTML page). Without the extractor's list,
 * the heading lines alone.
 */
function boundaries(lines: readonly string[], headings: readonly PageHeading[] | undefined): Boundary[] {
  const expected = (headings ?? []).map((h) => ({ ...h, key: headingKey(h.text) }));
  let next = 0;
  const out: Boundary[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = FENCE_OPEN.exec(line);
    if (fence && !(fence[2]!.startsWith('`') && fence[3]!.includes('`'))) {
      i = fenceEnd(lines, i, fence[2]!);
      continue;
    }
    const atx = ATX.exec(line);
    // A term stands alone: a blank line (or the page's start) before it.
    const term = atx ? null : BOLD_TERM.exec(line);
    if (!atx && !(term && (i === 0 || lines[i - 1]!.trim() === ''))) continue;
    const parts = atx ? headingParts(atx[2] ?? '') : { title: plainText(term![1]!), explicit: null };
    if (parts.title === '') continue;
    const j = findHeading(expected, next, headingKey(parts.title));
    if (j >= 0) {
      out.push({ line: i, level: expected[j]!.level, title: parts.title, anchor: parts.explicit ?? expected[j]!.anchor, term: !atx });
      next = j + 1;
    } else if (atx) {
      out.push({ line: i, level: atx[1]!.length, title: parts.title, anchor: parts.explicit, term: false });
    }
  }
  return out;
}

/** The anchor each heading text links to in the page's snippets (the first snippet under it). */
function snippetAnchors(snippets: readonly Pick<ExtractedSnippet, 'section' | 'sourceUrl'>[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of snippets) {
    const hash = s.sourceUrl.indexOf('#');
    if (s.section === undefined || s.section === '' || hash < 0) continue;
    const key = headingKey(s.section);
    if (!out.has(key)) out.set(key, s.sourceUrl.slice(hash + 1));
  }
  return out;
}

/** The most frequent language of the section's fenced code, or 'markdown' when it shows none. */
function sectionLanguage(body: readonly string[]): { language: string; blocks: number } {
  const counts = new Map<string, number>();
  let blocks = 0;
  for (let i = 0; i < body.length; i++) {
    const fence = FENCE_OPEN.exec(body[i]!);
    if (!fence || (fence[2]!.startsWith('`') && fence[3]!.includes('`'))) continue;
    blocks++;
    i = fenceEnd(body, i, fence[2]!);
    const language = fence[3]!.trim() === '' ? '' : normalizeLanguage(fence[3]!);
    if (language !== '') counts.set(language, (counts.get(language) ?? 0) + 1);
  }
  const best = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0];
  return { language: best?.[0] ?? 'markdown', blocks };
}

/** Whether the body says anything outside its code: a line of words that is not markup alone. */
function hasProse(body: readonly string[]): boolean {
  for (let i = 0; i < body.length; i++) {
    const line = body[i]!;
    const fence = FENCE_OPEN.exec(line);
    if (fence && !(fence[2]!.startsWith('`') && fence[3]!.includes('`'))) {
      i = fenceEnd(body, i, fence[2]!);
      continue;
    }
    if (PROSE_WORD.test(line) && !MARKUP_LINE.test(line)) return true;
  }
  return false;
}

/** The body's text: blank edges dropped, runs of blank lines as one, bounded with any open fence closed. */
function bodyText(body: readonly string[]): string {
  let text = body
    .map((l) => l.replace(/[ \t]+$/, ''))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  if (text.length <= MAX_SECTION_CHARS) return text;
  text = text.slice(0, text.lastIndexOf('\n', MAX_SECTION_CHARS) > 0 ? text.lastIndexOf('\n', MAX_SECTION_CHARS) : MAX_SECTION_CHARS);
  // Cut inside a fence: close it, so the text stays valid markdown.
  let open: string | null = null;
  for (const line of text.split('\n')) {
    const fence = FENCE_OPEN.exec(line);
    if (!fence) continue;
    if (open === null && !(fence[2]!.startsWith('`') && fence[3]!.includes('`'))) open = fence[2]!;
    else if (open !== null && fence[2]![0] === open[0] && fence[2]!.length >= open.length && fence[3]!.trim() === '') open = null;
  }
  return open === null ? text : `${text}\n${open}`;
}

/** A section's lead for listings: the plain text of its first prose, bounded like a snippet's description. */
function leadText(text: string): string {
  const prose = text
    .split(/\n{2,}/)
    .filter((p) => !FENCE_OPEN.test(p.split('\n')[0]!) && PROSE_WORD.test(p) && !MARKUP_LINE.test(p))
    .slice(0, 3)
    .join(' ');
  return truncateWords(plainText(prose), DESCRIPTION_MAX);
}

/**
 * The page's sections in page order: each with its breadcrumb (the page title, then the headings above it and
 * its own), its anchor and URL, its text (markdown, code blocks included, its heading line left out), and the
 * language of its code. Sections that say nothing outside code are left out: their snippets stand for them.
 */
export function extractSections(page: Pick<ExtractedPage, 'url' | 'title' | 'markdown' | 'headings'>, snippets: readonly Pick<ExtractedSnippet, 'section' | 'sourceUrl'>[]): ExtractedSection[] {
  const lines = page.markdown.replace(/\r\n?/g, '\n').split('\n');
  const found = boundaries(lines, page.headings);
  const anchors = snippetAnchors(snippets);
  const base = pageUrlWithoutFragment(page.url);
  const root = collapseSpaces(page.title).trim();
  const slugger = new Slugger();
  const stack: Boundary[] = [];
  const out: ExtractedSection[] = [];
  const emit = (from: number, to: number, own: Boundary | null, anchor: string | null) => {
    const body = lines.slice(from, to);
    if (!hasProse(body)) return;
    const crumbs = stack.map((b) => b.title);
    // The page's own level-1 heading names it in place of its title.
    const named = root === '' || stack[0]?.level === 1 || crumbs[0] === root;
    const breadcrumb = named ? (crumbs.length > 0 ? crumbs : [root || base]) : [root, ...crumbs];
    const text = bodyText(body);
    const { language, blocks } = sectionLanguage(body);
    out.push({
      breadcrumb,
      title: breadcrumb.join(' › '),
      description: leadText(text),
      text,
      language,
      codeBlocks: blocks,
      anchor,
      sourceUrl: anchor ? `${base}#${anchor}` : base,
      // Link destinations left out: the same section on two pages of a site (Node's all.html and fs.html) links
      // to the same places by different relative URLs.
      hash: md5Hex(`${own?.title ?? ''}\n${text.replace(LINK_DESTINATION, ']')}`),
      position: out.length,
    });
  };
  let start = 0;
  let current: { own: Boundary | null; anchor: string | null } = { own: null, anchor: null };
  for (const b of found) {
    emit(start, b.line, current.own, current.anchor);
    while (stack.length > 0 && stack[stack.length - 1]!.level >= b.level) stack.pop();
    stack.push(b);
    const slug = slugger.slug(b.title);
    const anchor = b.anchor ?? anchors.get(headingKey(b.title)) ?? slug;
    current = { own: b, anchor: anchor === '' ? null : anchor };
    start = b.line + 1;
  }
  emit(start, lines.length, current.own, current.anchor);
  return out;
}
