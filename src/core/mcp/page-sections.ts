import { identifierParts, parseQuery } from '../search/query.js';
import type { MarkdownBlock } from './markdown-chunks.js';
import { countTokens } from './tokens.js';

/**
 * A page cut into sections for a focused read: a section starts at each heading, and at each API entry's
 * term (a paragraph that is one bold line, as `**os.chmod(path, mode)**`: how definition lists of reference
 * pages come out in markdown), which nests under the heading before it. Blocks are never split here (a code
 * block is one block), so a section never cuts one in half. Each section knows its breadcrumb: the headings
 * it sits under, outermost first, and its own.
 */

export interface PageSection {
  /** Headings from the outermost to the section's own; empty for text before the first heading. */
  breadcrumb: string[];
  /** Its blocks (start inclusive, end exclusive) in the page's block list. */
  start: number;
  end: number;
  text: string;
  tokens: number;
}

const HEADING_LINE = /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/;
const BOLD_TERM = /^\*\*([^\n]+)\*\*$/;
// An API entry ranks below every real heading level.
const TERM_LEVEL = 7;

function headingOf(block: MarkdownBlock): { level: number; title: string } | undefined {
  if (block.heading) {
    const m = HEADING_LINE.exec(block.text);
    if (m) return { level: m[1]!.length, title: plainHeading(m[2]!) };
  }
  const term = BOLD_TERM.exec(block.text.trim());
  return term ? { level: TERM_LEVEL, title: plainHeading(term[1]!) } : undefined;
}

/** A heading as a reader names it: link targets, code ticks and bold/italic stars dropped (underscores are identifiers'). */
function plainHeading(text: string): string {
  return text
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .replace(/[¶#]+$/, '')
    .trim();
}

function joinBlocks(blocks: MarkdownBlock[], start: number, end: number): string {
  return blocks
    .slice(start, end)
    .map((b) => b.text)
    .join('\n\n');
}

/** The page's sections in page order. */
export function pageSections(blocks: MarkdownBlock[]): PageSection[] {
  const sections: PageSection[] = [];
  const stack: Array<{ level: number; title: string }> = [];
  let start = 0;
  let crumbs: string[] = [];
  const close = (end: number) => {
    if (end <= start) return;
    const text = joinBlocks(blocks, start, end);
    sections.push({ breadcrumb: crumbs, start, end, text, tokens: countTokens(text) });
  };
  blocks.forEach((block, i) => {
    const heading = headingOf(block);
    if (!heading) return;
    close(i);
    while (stack.length > 0 && stack[stack.length - 1]!.level >= heading.level) stack.pop();
    stack.push(heading);
    crumbs = stack.map((h) => h.title);
    start = i;
  });
  close(blocks.length);
  return sections;
}

// Words that match nearly every section and say nothing about which one is meant.
const STOP_WORDS = new Set(['a', 'an', 'and', 'are', 'as', 'at', 'be', 'by', 'can', 'do', 'does', 'for', 'from', 'how', 'i', 'in', 'is', 'it', 'of', 'on', 'or', 'the', 'to', 'use', 'what', 'with']);

/** A light stem so "directories" finds "directory" and "files" finds "file". */
function stem(word: string): string {
  if (word.length <= 3) return word;
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.endsWith('es') && /(?:ss|x|ch|sh)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

function wordCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const word of identifierParts(text)) {
    const key = stem(word);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

export interface SectionQuery {
  /** The identifiers and phrases of the query, lower-cased: found verbatim, they weigh most. */
  wholes: string[];
  /** Its stemmed words, stop words dropped (unless nothing else is left). */
  words: string[];
}

/** The query read as the search reads it (src/core/search/query.ts): terms, identifiers split into words. */
export function sectionQuery(query: string): SectionQuery {
  const parsed = parseQuery(query);
  const wholes = parsed.terms.filter((t) => t.identifier || t.phrase).map((t) => t.text.toLowerCase());
  const all = [...new Set(parsed.terms.flatMap((t) => t.words).map(stem))];
  const words = all.filter((w) => !STOP_WORDS.has(w));
  return { wholes, words: words.length > 0 ? words : all };
}

/**
 * How well a section matches: each query word found in its headings counts 3, in its text 1 plus a little for
 * repeats; each identifier or phrase found verbatim adds 4 in the headings, 2 in the text. Sections holding
 * more of the query's words come first.
 */
export function scoreSection(section: PageSection, query: SectionQuery): number {
  const heading = section.breadcrumb.join(' \n ');
  const headingWords = wordCounts(heading);
  const own = section.breadcrumb[section.breadcrumb.length - 1] ?? '';
  const ownWords = wordCounts(own);
  const textWords = wordCounts(section.text);
  const lowerText = section.text.toLowerCase();
  let score = 0;
  for (const word of query.words) {
    if (ownWords.has(word)) score += 3;
    else if (headingWords.has(word)) score += 1.5;
    const n = textWords.get(word) ?? 0;
    if (n > 0) score += 1 + Math.min(1, Math.log10(n));
  }
  for (const whole of query.wholes) {
    if (own.toLowerCase().includes(whole)) score += 4;
    if (lowerText.includes(whole)) score += 2;
  }
  return score;
}

/** A section counts as matching when it scores at least this share of the best section's score. */
export const MATCH_SHARE_OF_BEST = 0.25;

export interface RankedSection extends PageSection {
  score: number;
}

/** The sections that match the query, best first (ties in page order). */
export function matchingSections(sections: PageSection[], query: string): RankedSection[] {
  const parsed = sectionQuery(query);
  const scored = sections.map((s) => ({ ...s, score: scoreSection(s, parsed) })).filter((s) => s.score > 0);
  const best = Math.max(0, ...scored.map((s) => s.score));
  return scored.filter((s) => s.score >= best * MATCH_SHARE_OF_BEST).sort((a, b) => b.score - a.score || a.start - b.start);
}

/**
 * A section's name in the answer: its breadcrumb (the last `depth` headings of it when given: lists of many
 * sections name each by its own heading and its parent's), or "(top of page)".
 */
export function sectionName(section: Pick<PageSection, 'breadcrumb'>, depth = Number.POSITIVE_INFINITY): string {
  return section.breadcrumb.length > 0 ? section.breadcrumb.slice(-depth).join(' › ') : '(top of page)';
}
