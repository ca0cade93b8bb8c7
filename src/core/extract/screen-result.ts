// Screening applied to a whole extraction: each snippet is flagged by its own text (code, title,
// description), or else by its page: the page's prose, its title and description, and the text a reader never
// sees (comments, hidden elements). An instruction to an assistant anywhere on a page makes every snippet
// of that page suspect, since the snippet's description and its neighbours come from the same author.
import { visibleText } from './invisible.js';
import { screenText, type ScreenResult } from './screening.js';
import type { ExtractedSection, ExtractedSnippet, ExtractResult } from './types.js';

/** Said before a passage that no reader of the page could see. */
export const CONCEALED_PREFIX = '(hidden from readers of the page) ';

/** HTML comments written into markdown (and so into a markdown page's text): found by indexOf, linear. */
function markdownComments(markdown: string): string[] {
  const out: string[] = [];
  let at = markdown.indexOf('<!--');
  while (at >= 0 && out.length < 1000) {
    const end = markdown.indexOf('-->', at + 4);
    if (end < 0) break;
    out.push(markdown.slice(at + 4, end));
    at = markdown.indexOf('<!--', end + 3);
  }
  return out;
}

function pageTextFinding(concealed: readonly string[], page: { title: string; description: string; markdown: string }): ScreenResult | null {
  for (const piece of concealed) {
    const found = screenText(visibleText(piece), true);
    if (found.passage !== undefined) return { flags: found.flags, passage: CONCEALED_PREFIX + found.passage };
  }
  for (const text of [`${page.title}\n${page.description}`, page.markdown]) {
    const found = screenText(text);
    if (found.passage !== undefined) return found;
  }
  return null;
}

function pageFinding(r: ExtractResult): ScreenResult | null {
  return pageTextFinding([...(r.concealed ?? []), ...(r.page.format === 'html' ? [] : markdownComments(r.page.markdown))], r.page);
}

/**
 * A stored page (its markdown, as an index pack carries it) screened as extraction screens a markdown page:
 * its comments, title and text. Null when nothing was found. Packs are third-party text: whatever flags a
 * pack claims, its rows are screened again here.
 */
export function screenStoredPage(page: { title: string; markdown: string }): ScreenResult | null {
  return pageTextFinding(markdownComments(page.markdown), { title: page.title, description: '', markdown: page.markdown });
}

/** A snippet screened by its own text (code, title, description); null when nothing was found. */
export function screenSnippetText(s: { code: string; title: string; description: string }): ScreenResult | null {
  const own = screenText(`${s.code}\n${s.title}\n${s.description}`);
  return own.passage === undefined ? null : own;
}

function flagged<T extends ExtractedSnippet | ExtractedSection>(s: T, finding: ScreenResult): T {
  return { ...s, flags: finding.flags, flaggedPassage: finding.passage };
}

/**
 * The extraction with the page's screening finding, each snippet's and section's flags set (see above), and the
 * concealed text dropped. The page carries its own finding, so a read of the whole page (get_page_markdown) is
 * flagged as its snippets are, snippets or not.
 */
export function screenResult(r: ExtractResult): ExtractResult {
  const { concealed: _concealed, ...rest } = r;
  const page = pageFinding(r);
  const snippets = r.snippets.map((s) => {
    // The code first: when both the code and its description say something, the code's passage is named.
    const own = screenSnippetText(s);
    if (own !== null) return flagged(s, own);
    return page === null ? s : flagged(s, page);
  });
  const screenedPage = page === null ? r.page : { ...r.page, flags: page.flags, flaggedPassage: page.passage };
  if (r.sections === undefined) return { ...rest, page: screenedPage, snippets };
  // A section by its own text (its prose and code), else by its page, as a snippet is.
  const sections = r.sections.map((s) => {
    const own = screenSnippetText({ code: s.text, title: s.title, description: '' });
    if (own !== null) return flagged(s, own);
    return page === null ? s : flagged(s, page);
  });
  return { ...rest, page: screenedPage, snippets, sections };
}
