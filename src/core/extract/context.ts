// Titles and descriptions for code blocks, from a flat stream of what the page
// says in reading order: headings, prose paragraphs and code blocks. Every input
// format (HTML, markdown, rst, adoc) produces this stream, so the rules live once.
//
// - section: the nearest preceding heading (its anchor is the nearest one in the
//   heading path that has an id);
// - before: the prose between that heading (or the previous code block under it)
//   and the block, its last sentences up to BEFORE_MAX characters; consecutive
//   blocks with no prose between them share the first one's context (the Node.js
//   docs show every example twice, as ESM and as CommonJS);
// - after: the first sentence of the paragraph right after the block, when it
//   reads as an explanation of the block ("This prints ...", "The output is ...");
// - a paragraph right before the block that is nothing but a path (`src/app.ts`)
//   is a filename hint, not context.
import { filenameFromProseLine } from './filename.js';
import { collapseSpaces } from './whitespace.js';

export interface HeadingItem {
  kind: 'heading';
  level: number;
  text: string;
  anchor: string | null;
}

export type StreamItem =
  | HeadingItem
  /** Ends the scope of pseudo-headings at `level` and deeper (API entries in a <dl>). */
  | { kind: 'pop'; level: number }
  | { kind: 'prose'; text: string }
  | { kind: 'code'; block: number };

export interface BlockContext {
  section: string;
  sectionLevel: number;
  anchor: string | null;
  before: string;
  after: string;
  filenameHint: string | null;
}

const BEFORE_MAX = 420;
const AFTER_MAX = 240;
export const DESCRIPTION_MAX = 640;
const SECTION_MAX = 160;

// The paragraph after a block explains it when it points back at it.
const EXPLAINS =
  /^(?:this|these|that|those|here|above|it|which|the (?:above|previous|preceding|example|code|output|result|snippet|command|program|script|function|call|query|statement|listing|configuration|file|first|second|last)|in (?:this|the above|the previous|the example)|running|when (?:run|executed|you run)|output|result|returns?|prints?|produces|outputs?|note(?: that)?|as (?:you can see|shown)|you (?:can|should) (?:now )?see|after (?:running|this)|now\b|then\b|the \w+ (?:above|shown))\b/i;

const LINE_MARKERS = /^\s*(?:[-*+]|\d+[.)]|>+|#{1,6})\s+/gm;
const FIRST_LINE_MARKER = /^\s*(?:[-*+]|\d+[.)]|>+|#{1,6})\s+/;
// What ends a line for `^` under the m flag.
const LINE_BREAK = /[\n\r\u2028\u2029]/;

// Version and stability notes that API reference pages put under every heading ("Added in: v7.6.0",
// "Stability: 1 - Experimental", "N-API version: 3"): page chrome, the same on hundreds of entries, that says
// nothing of what the code does and would make every such snippet match "added", "version" or "experimental".
const VERSION_LIST = String.raw`v\d+(?:\.\d+)*(?:,\s*v\d+(?:\.\d+)*)*`;
const STABILITY = String.raw`Stability: \d(?:\.\d)? - (?:Deprecated|Experimental|Stable|Legacy|Active development|Release candidate|Early development)`;
const PAGE_CHROME = new RegExp(String.raw`\b(?:(?:Added|Removed) in: ${VERSION_LIST}|Deprecated since: ${VERSION_LIST}|N-API version: \d+|${STABILITY})[.:]?\s*`, 'g');
// A "History" disclosure (its table of versions follows) read as a paragraph of its own.
const HISTORY_LABEL = /^History$/;

/** `text` without the page chrome of API reference pages (PAGE_CHROME). */
export function stripPageChrome(text: string): string {
  if (HISTORY_LABEL.test(text)) return '';
  if (!text.includes(': ')) return text;
  return text.replace(PAGE_CHROME, '').trim();
}

/** Plain text of a markdown-ish inline string: links to their text, emphasis and code marks dropped. */
export function plainText(md: string): string {
  let s = md;
  if (s.includes('](')) {
    s = s
      .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/\[((?:[^[\]]|\[[^\]]*\])*)\]\([^)]*\)/g, '$1')
      // Footnote references ("[4]") say nothing on their own.
      .replace(/\[\d{1,3}\]/g, '');
  }
  if (s.includes('<')) s = s.replace(/<\/?[A-Za-z][^<>]{0,200}>/g, '');
  if (s.includes('*') || s.includes('_') || s.includes('`')) {
    s = s.replace(/(\*\*|__|`+)/g, '').replace(/(^|[\s(])[*_]([^*_\s][^*_]*?)[*_](?=[\s).,;:!?]|$)/g, '$1$2');
  }
  // List, quote and heading markers at line starts; a single line (most prose) can only have one, at its start.
  s = LINE_BREAK.test(s) ? s.replace(LINE_MARKERS, '') : s.replace(FIRST_LINE_MARKER, '');
  return collapseSpaces(s).trim();
}

function sentences(text: string): string[] {
  // A sentence ends at . ! ? or : followed by a space and an upper-case letter,
  // a digit, a quote or a bracket; "e.g." and "i.e." are not ends.
  const out: string[] = [];
  const re = /(?<!\b(?:e\.g|i\.e|etc|vs|cf|approx|Mr|Dr|St|No))[.!?:](?=\s+["'(`[]?[A-Z0-9])/g;
  let start = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    out.push(text.slice(start, m.index + 1).trim());
    start = m.index + 1;
  }
  const rest = text.slice(start).trim();
  if (rest.length > 0) out.push(rest);
  return out;
}

export function truncateWords(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const sp = cut.lastIndexOf(' ');
  return `${(sp > max * 0.6 ? cut.slice(0, sp) : cut).replace(/[\s,;:.-]+$/, '')}…`;
}

function tailSentences(text: string, max: number): string {
  if (text.length <= max) return text;
  const parts = sentences(text);
  let out = '';
  for (let i = parts.length - 1; i >= 0; i--) {
    const p = parts[i] as string;
    const next = out.length === 0 ? p : `${p} ${out}`;
    if (next.length > max) break;
    out = next;
  }
  if (out.length > 0) return out;
  // One long sentence: keep its start, which usually names the subject.
  return truncateWords(parts[parts.length - 1] ?? text, max);
}

function explainingSentence(text: string): string {
  const first = sentences(text)[0] ?? '';
  // "The command prints one line per table:" introduces the next block, it doesn't explain this one.
  if (!EXPLAINS.test(first) || first.endsWith(':')) return '';
  return truncateWords(first, AFTER_MAX);
}

interface HeadingEntry {
  level: number;
  text: string;
  anchor: string | null;
  /** The section title for its code blocks, computed for the first one. */
  section?: string;
}

/** The stream's headings, in order: what the page's sections are cut at (sections.ts). */
export function streamHeadings(items: readonly StreamItem[]): Array<{ level: number; text: string; anchor: string | null }> {
  return items.flatMap((item) => (item.kind === 'heading' ? [{ level: item.level, text: item.text, anchor: item.anchor }] : []));
}

/** Context for every code item in the stream, indexed by its block number. */
export function resolveContexts(items: readonly StreamItem[], blockCount: number): BlockContext[] {
  const out: BlockContext[] = new Array<BlockContext>(blockCount);
  const path: HeadingEntry[] = [];
  let prose: string[] = [];
  // The block waiting for its explaining sentence.
  let pendingAfter: BlockContext | null = null;
  // The previous block, while nothing but code has followed it in the same section.
  let chainBefore: BlockContext | null = null;

  for (const item of items) {
    switch (item.kind) {
      case 'heading': {
        popDeeper(path, item.level);
        path.push({ level: item.level, text: item.text, anchor: item.anchor });
        prose = [];
        pendingAfter = null;
        chainBefore = null;
        break;
      }
      case 'pop': {
        popDeeper(path, item.level);
        prose = [];
        pendingAfter = null;
        chainBefore = null;
        break;
      }
      case 'prose': {
        if (item.text.length === 0) break;
        if (pendingAfter !== null) {
          // Only the first sentence can matter.
          pendingAfter.after = explainingSentence(plainText(item.text.length > 600 ? item.text.slice(0, 600) : item.text));
          pendingAfter = null;
        }
        prose.push(item.text);
        chainBefore = null;
        break;
      }
      case 'code': {
        const ctx = codeContext(prose, path, chainBefore);
        if (item.block >= 0 && item.block < blockCount) out[item.block] = ctx;
        prose = [];
        pendingAfter = ctx;
        chainBefore = ctx;
        break;
      }
    }
  }
  for (let i = 0; i < blockCount; i++) {
    if (out[i] === undefined) {
      out[i] = { section: '', sectionLevel: 0, anchor: null, before: '', after: '', filenameHint: null };
    }
  }
  return out;
}

/** Leaves the headings at `level` and deeper. */
function popDeeper(path: HeadingEntry[], level: number): void {
  while (path.length > 0 && (path[path.length - 1] as HeadingEntry).level >= level) path.pop();
}

/** A code block's context from the prose since the last heading or block and the heading path above it. */
function codeContext(prose: string[], path: HeadingEntry[], chainBefore: BlockContext | null): BlockContext {
  let filenameHint: string | null = null;
  let paragraphs = prose;
  const last = paragraphs[paragraphs.length - 1];
  // Plain text of a short last paragraph, kept for the `before` context below.
  let lastPlain: string | null = null;
  if (last !== undefined) {
    if (last.length <= 200) {
      lastPlain = plainText(last);
      filenameHint = filenameFromProseLine(lastPlain);
    }
    if (filenameHint !== null) paragraphs = paragraphs.slice(0, -1);
  }
  let before = '';
  if (paragraphs.length > 0) before = beforeText(paragraphs, last, lastPlain);
  else if (chainBefore !== null) before = chainBefore.before;
  const top = path[path.length - 1];
  return {
    section: top ? (top.section ??= truncateWords(plainText(top.text), SECTION_MAX)) : '',
    sectionLevel: top ? top.level : 0,
    anchor: nearestAnchor(path),
    before,
    after: '',
    filenameHint,
  };
}

/** The last sentences of the paragraphs before a block; `lastPlain` is the plain text of `last`, when known. */
function beforeText(paragraphs: readonly string[], last: string | undefined, lastPlain: string | null): string {
  // Only the last sentences can matter: clean just enough of the nearest paragraphs.
  const recent: string[] = [];
  let size = 0;
  for (let i = paragraphs.length - 1; i >= 0 && size < BEFORE_MAX * 2 && recent.length < 4; i--) {
    const p = paragraphs[i] as string;
    const tail = p.length > BEFORE_MAX * 3 ? p.slice(p.length - BEFORE_MAX * 3) : p;
    const plain = stripPageChrome(lastPlain !== null && i === paragraphs.length - 1 && tail === last ? lastPlain : plainText(tail));
    if (plain.length === 0) continue;
    recent.unshift(plain);
    size += plain.length;
  }
  return tailSentences(recent.join(' '), BEFORE_MAX);
}

/** The nearest anchor in the heading path. */
function nearestAnchor(path: readonly HeadingEntry[]): string | null {
  for (let i = path.length - 1; i >= 0; i--) {
    const a = (path[i] as HeadingEntry).anchor;
    if (a) return a;
  }
  return null;
}

/** "Section (Tab) | Page", collapsing parts that repeat the page title. */
export function composeTitle(pageHeading: string, section: string, tab: string | null): string {
  const page = pageHeading.trim();
  let head = section.trim();
  if (head === page) head = '';
  if (tab) head = head ? `${head} (${tab})` : tab;
  if (head && page) return `${head} | ${page}`;
  return head || page;
}

export function composeDescription(parts: Array<string | null | undefined>): string {
  const text = parts
    .filter((p): p is string => typeof p === 'string' && p.trim().length > 0)
    .map((p) => p.trim())
    .join(' ');
  return truncateWords(collapseSpaces(text), DESCRIPTION_MAX);
}
