import { Slugger } from '../extract/markdown.js';
import type { MarkdownBlock } from './markdown-chunks.js';
import { pageSections } from './page-sections.js';
import type { PageSection } from './page-sections.js';

/**
 * The part of a page a URL fragment names (`…/README.md#usage`), for get_page_markdown: issue #49 found its own
 * hint ("call get_page_markdown with url=…#section") answered with the top of the page, the README's badges.
 *
 * A snippet's URL carries the anchor of the heading above it, as the page gave it: a GitHub-style slug of a
 * markdown heading, or an HTML heading's id, which the stored markdown no longer shows. So a fragment is found,
 * most exact first:
 * 1. the code of the page's snippets whose URL carries that fragment: the sections holding it (an id that is
 *    not a slug, such as Sphinx's `json.dumps`, is found this way);
 * 2. a heading whose slug (or `{#custom-id}`) is the fragment, as the markdown extractor computes it;
 * 3. a heading whose words are the fragment's words (`#json.dumps` for "json.dumps(obj, …)").
 */

export interface FragmentRange {
  /** First block (inclusive) and last block (exclusive) of the page's blocks. */
  start: number;
  end: number;
  /** The first section's breadcrumb. */
  breadcrumb: string[];
}

const HEADING_LINE = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/;
const CUSTOM_ID = /\s*\{\s*#([\w:.-]+)[^}]*\}\s*$/;

/** A heading line's text as the markdown extractor slugs it: inline code, link text and emphasis as plain text. */
function headingText(raw: string): string {
  return raw
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

function words(text: string): string {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .join(' ');
}

/** Each markdown heading section's anchor, as the extractor (src/core/extract/markdown.ts) gives it. */
function anchoredSections(blocks: MarkdownBlock[], sections: PageSection[]): Array<{ section: PageSection; anchor: string }> {
  const slugger = new Slugger();
  const out: Array<{ section: PageSection; anchor: string }> = [];
  for (const section of sections) {
    const block = blocks[section.start];
    const m = block?.heading ? HEADING_LINE.exec(block.text) : null;
    if (!m) continue;
    const text = headingText(m[1]!);
    const custom = CUSTOM_ID.exec(text);
    out.push({ section, anchor: custom?.[1] ?? slugger.slug(text.replace(CUSTOM_ID, '')) });
  }
  return out;
}

/** The sections holding the snippets' code, found by each snippet's longest line. */
function sectionsHoldingCode(sections: PageSection[], codes: string[]): PageSection[] {
  const holding = new Set<PageSection>();
  for (const code of codes) {
    const line = code
      .split('\n')
      .map((l) => l.trim())
      .sort((a, b) => b.length - a.length)[0];
    if (!line) continue;
    const section = sections.find((s) => s.text.includes(line));
    if (section) holding.add(section);
  }
  return [...holding];
}

function rangeOf(found: PageSection[]): FragmentRange | undefined {
  if (found.length === 0) return undefined;
  const first = found.reduce((a, b) => (b.start < a.start ? b : a));
  return { start: first.start, end: Math.max(...found.map((s) => s.end)), breadcrumb: first.breadcrumb };
}

/**
 * The blocks a fragment names, or undefined when no section matches it. `codes` is the code of the page's
 * snippets whose URL carries this fragment, in page order.
 */
export function fragmentRange(blocks: MarkdownBlock[], fragment: string, codes: string[]): FragmentRange | undefined {
  const sections = pageSections(blocks);
  const bySnippets = rangeOf(sectionsHoldingCode(sections, codes));
  if (bySnippets) return bySnippets;
  const anchored = anchoredSections(blocks, sections);
  let decoded = fragment;
  try {
    decoded = decodeURIComponent(fragment);
  } catch {
    // A stray % stays as typed.
  }
  const bySlug = anchored.find((a) => a.anchor === decoded) ?? anchored.find((a) => a.anchor.toLowerCase() === decoded.toLowerCase());
  if (bySlug) return rangeOf(sectionWithChildren(sections, bySlug.section));
  const wanted = words(decoded);
  if (!wanted) return undefined;
  const byWords = sections.find((s) => s.breadcrumb.length > 0 && words(s.breadcrumb.at(-1)!).startsWith(wanted));
  return byWords ? rangeOf(sectionWithChildren(sections, byWords)) : undefined;
}

/** A heading's section and the sections nested under it: what a reader following the link reads. */
function sectionWithChildren(sections: PageSection[], section: PageSection): PageSection[] {
  const depth = section.breadcrumb.length;
  const at = sections.indexOf(section);
  const out = [section];
  for (const next of sections.slice(at + 1)) {
    if (next.breadcrumb.length <= depth) break;
    out.push(next);
  }
  return out;
}
