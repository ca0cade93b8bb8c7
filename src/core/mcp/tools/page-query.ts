import { SEPARATOR } from '../format.js';
import { packBlocks } from '../markdown-chunks.js';
import type { MarkdownBlock } from '../markdown-chunks.js';
import { matchingSections, pageSections, sectionName } from '../page-sections.js';
import type { RankedSection } from '../page-sections.js';
import { countTokens } from '../tokens.js';
import { SOURCE_TRUST, neutraliseDocumentationTags, wrapDocumentation } from '../trust.js';
import { plural } from './common.js';
import { quoteQuery } from './snippet-args.js';

/**
 * get_page_markdown with a query: the page's sections that match it, best first, each whole, within
 * max_tokens (the whole answer), and the matching sections left out named by heading.
 */

export interface FocusedPage {
  url: string;
  title: string;
  library: string;
  version: string;
}

interface Shown {
  section: RankedSection;
  text: string;
  cut: boolean;
}

// Past this many, the names of left-out sections cost more than they tell.
const MAX_NAMED_LEFT_OUT = 15;
const MAX_NAMED_SECTIONS = 30;
// The cut marker line and the section's breadcrumb line.
const CUT_MARKER_RESERVE = 60;
// A listed section is named by its own heading and its parent's: the page title repeated on each costs tokens.
const LISTED_DEPTH = 2;

function renderSection(section: RankedSection, text: string): string {
  return `Section: ${sectionName(section)}\n\n${text}`;
}

/** The best section cut to `tokens` on a block boundary, with a marker saying how to read it whole. */
function cutSection(blocks: MarkdownBlock[], section: RankedSection, tokens: number): Shown {
  const part = packBlocks(blocks.slice(section.start, section.end), Math.max(20, tokens), 1)[0];
  const marker = `[… section cut to stay within max_tokens: ${section.tokens - (part?.tokens ?? 0)} more tokens; call again with max_tokens=${section.tokens + 200} to read it whole.]`;
  return { section, text: renderSection(section, `${part?.text ?? ''}\n\n${marker}`), cut: true };
}

function listNames(sections: RankedSection[], max: number): string {
  const named = sections.slice(0, max).map((s) => JSON.stringify(sectionName(s, LISTED_DEPTH)));
  return sections.length > max ? `${named.join(', ')} and ${sections.length - max} more` : named.join(', ');
}

function footerFor(leftOut: RankedSection[], maxTokens: number): string {
  if (leftOut.length === 0) return '';
  return (
    `Left out to stay within max_tokens=${maxTokens}: ${plural(leftOut.length, 'matching section')}, ${listNames(leftOut, MAX_NAMED_LEFT_OUT)}. ` +
    'Call again with a higher max_tokens or a narrower query to read them.'
  );
}

function assemble(header: string, shown: Shown[], footer: string): string {
  const block = shown.length > 0 ? wrapDocumentation(shown.map((s) => s.text).join(SEPARATOR)) : '';
  return [header, block, footer].filter((p) => p !== '').join('\n\n');
}

const costOf = (text: string) => countTokens(neutraliseDocumentationTags(text)) + countTokens(SEPARATOR);

function choose(blocks: MarkdownBlock[], ranked: RankedSection[], available: number): Shown[] {
  const shown: Shown[] = [];
  let left = available;
  let firstCut = 0;
  ranked.forEach((section, i) => {
    const text = renderSection(section, section.text);
    const cost = costOf(text);
    if (cost <= left) {
      shown.push({ section, text, cut: false });
      left -= cost;
    } else if (i === 0) {
      // The best section alone is over the budget: its start, in at most half, so others can follow;
      // whatever they leave unused is given back to it below.
      const cut = cutSection(blocks, section, Math.floor(left / 2) - CUT_MARKER_RESERVE);
      firstCut = costOf(cut.text);
      shown.push(cut);
      left -= firstCut;
    }
  });
  if (shown[0]?.cut && left > 0) shown[0] = cutSection(blocks, shown[0].section, firstCut + left - CUT_MARKER_RESERVE);
  return shown;
}

/** The answer to a focused read: text within `maxTokens` and its structured facts. */
export function focusedRead(page: FocusedPage, blocks: MarkdownBlock[], query: string, maxTokens: number): { text: string; structured: Record<string, unknown> } {
  const sections = pageSections(blocks);
  const ranked = matchingSections(sections, query);
  const base = [`# ${page.title || page.url}`, `URL: ${page.url}`, `Library: ${page.version ? `${page.library} ${page.version}` : page.library}`];
  const structuredBase = { source_trust: SOURCE_TRUST, url: page.url, title: page.title, library: page.library, version: page.version, query, max_tokens: maxTokens };
  if (ranked.length === 0) {
    const noMatch = (named: number) =>
      [
        ...base,
        `No section of this page matches ${quoteQuery(query)}. Its ${plural(sections.length, 'section')}: ${listNames(sections as RankedSection[], named)}.`,
        'Call again with other words, or without query to read the page in chunks.',
      ].join('\n');
    let named = MAX_NAMED_SECTIONS;
    while (named > 0 && countTokens(noMatch(named)) > maxTokens) named -= 5;
    const text = noMatch(Math.max(0, named));
    return { text, structured: { ...structuredBase, tokens: countTokens(text), total_sections: sections.length, sections: [], left_out: [] } };
  }
  const headerFor = (shown: Shown[]) =>
    [...base, `Sections matching ${quoteQuery(query)}: ${shown.length} of ${plural(ranked.length, 'matching section')} shown (the page has ${sections.length}), best first.`].join('\n');
  const reserve = countTokens(assemble(headerFor([]), [], footerFor(ranked, maxTokens))) + countTokens(wrapDocumentation(''));
  let shown = choose(blocks, ranked, maxTokens - reserve);
  let text: string;
  for (;;) {
    const kept = new Set(shown.map((s) => s.section.start));
    text = assemble(
      headerFor(shown),
      shown,
      footerFor(
        ranked.filter((s) => !kept.has(s.start)),
        maxTokens,
      ),
    );
    if (countTokens(text) <= maxTokens || shown.length === 0) break;
    shown = shown.slice(0, -1);
  }
  const kept = new Set(shown.map((s) => s.section.start));
  return {
    text,
    structured: {
      ...structuredBase,
      tokens: countTokens(text),
      total_sections: sections.length,
      sections: shown.map((s) => ({ heading: sectionName(s.section), tokens: s.section.tokens, cut: s.cut })),
      left_out: ranked.filter((s) => !kept.has(s.start)).map((s) => sectionName(s, LISTED_DEPTH)),
    },
  };
}
