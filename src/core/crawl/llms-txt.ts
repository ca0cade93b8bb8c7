import { cleanUrl } from './url.js';

/**
 * llms.txt and llms-full.txt (llmstxt.org): a site's own list of its documentation pages for language
 * models, and the same pages' text in one markdown file. Both are outside input: the parsers never throw and
 * are bounded the way robots.txt and sitemap parsing are (lines, links and pages capped).
 */

/** Links taken from one llms.txt; as with a sitemap, each becomes a frontier row and a request. */
export const MAX_LLMS_LINKS = 10_000;
/** Lines longer than this are ignored: no real list item or heading is that long, and each is scanned. */
export const MAX_LLMS_LINE_CHARS = 4000;
/** Pages taken from one llms-full.txt; the rest of the file stays with the last page. */
export const MAX_LLMS_FULL_PAGES = 10_000;

/** The files' names, tried at the start URL's path and at the site root. */
export const LLMS_FULL_FILE = 'llms-full.txt';
export const LLMS_FILE = 'llms.txt';

// A markdown list item holding a link first: `- [title](url)` or `- [title](url): notes` (also `*`, `+`, `1.`).
const LIST_LINK = /^\s{0,8}(?:[-*+]|\d{1,4}[.)])\s+\[[^\]\n]{0,1000}\]\(\s*<?([^)\s>]{1,2048})>?(?:\s+"[^"\n]*")?\s*\)/;

/**
 * The links of an llms.txt's list items, absolute (relative links resolve against the file's own URL), http(s)
 * only, deduplicated, in file order, and only those `inScope` admits. Text that is not an llms.txt yields an
 * empty list.
 */
export function parseLlmsTxt(text: string, fileUrl: string, inScope: (url: URL) => boolean): string[] {
  const out = new Set<string>();
  for (const line of text.split('\n')) {
    if (out.size >= MAX_LLMS_LINKS) break;
    if (line.length > MAX_LLMS_LINE_CHARS) continue;
    const m = LIST_LINK.exec(line);
    if (!m) continue;
    const url = cleanUrl(m[1]!, fileUrl);
    if (url && inScope(new URL(url))) out.add(url);
  }
  return [...out];
}

export interface LlmsFullPage {
  /** The page's own URL (its `Source:`/`URL:` line), else `<file URL>#<heading slug>`. */
  url: string;
  /** Whether `url` came from the file (false: the heading-anchored fallback). */
  sourced: boolean;
  markdown: string;
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})/;
const PAGE_HEADING = /^#[ \t]+(\S.*)$/;
// `Source: <url>`, `URL: <url>`, `url: <url>` (optionally bold or in angle brackets), or a bare URL line.
const SOURCE_LINE = /^\s*(?:(?:\*\*|__)?(?:source|url)(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*)?<?(https?:\/\/[^\s>]{1,2048})>?\s*$/i;
/** How many lines below a page's heading its source line may sit (blank lines included). */
const SOURCE_WINDOW = 4;

/**
 * Splits an llms-full.txt into its pages. The rule: a page begins at each level-one ATX heading (`# Title`)
 * outside fenced code (a `# comment` in a shell block is not a heading); its URL is the first `Source:` /
 * `URL:` / bare http(s) line within SOURCE_WINDOW lines below the heading, when `inScope` admits it (that line
 * is left out of the page's text), else the heading-anchored fallback `<file URL>#<slug>` (slugs made unique
 * with `-2`, `-3`...). Text before the first heading, when it holds anything, is a page of its own at the
 * file's URL. At most MAX_LLMS_FULL_PAGES pages; later headings stay inside the last page.
 */
export function splitLlmsFull(text: string, fileUrl: string, inScope: (url: URL) => boolean): LlmsFullPage[] {
  const pages: Array<{ lines: string[]; title: string | null }> = [{ lines: [], title: null }];
  let fence: string | null = null;
  for (const line of text.split('\n')) {
    const f = line.length <= MAX_LLMS_LINE_CHARS ? FENCE.exec(line) : null;
    if (f) fence = fence === null ? f[1]![0]! : fence === f[1]![0] ? null : fence;
    const heading = fence === null && line.length <= MAX_LLMS_LINE_CHARS ? PAGE_HEADING.exec(line) : null;
    if (heading && pages.length < MAX_LLMS_FULL_PAGES) pages.push({ lines: [line], title: headingText(heading[1]!) });
    else pages.at(-1)!.lines.push(line);
  }
  const slugs = new Map<string, number>();
  const out: LlmsFullPage[] = [];
  for (const page of pages) {
    if (page.title === null) {
      if (page.lines.join('').trim()) out.push({ url: cleanUrl(fileUrl) ?? fileUrl, sourced: false, markdown: page.lines.join('\n') });
      continue;
    }
    out.push(pageWithUrl(page.lines, page.title, fileUrl, inScope, slugs));
  }
  return out;
}

/** The heading's text without the closing `#`s ATX allows (by hand: a regex anchored at the end rescans). */
function headingText(raw: string): string {
  let end = raw.length;
  while (end > 1 && (raw[end - 1] === '#' || raw[end - 1] === ' ' || raw[end - 1] === '\t' || raw[end - 1] === '\r')) end--;
  return raw.slice(0, end);
}

function pageWithUrl(lines: string[], title: string, fileUrl: string, inScope: (url: URL) => boolean, slugs: Map<string, number>): LlmsFullPage {
  for (let i = 1; i < Math.min(lines.length, SOURCE_WINDOW + 1); i++) {
    const line = lines[i]!;
    if (line.length > MAX_LLMS_LINE_CHARS) break;
    const m = SOURCE_LINE.exec(line);
    const url = m ? cleanUrl(m[1]!) : null;
    if (url && inScope(new URL(url))) return { url, sourced: true, markdown: [lines[0]!, ...lines.slice(1, i), ...lines.slice(i + 1)].join('\n') };
    if (line.trim() && !m) break;
  }
  const base = slugOf(title);
  const n = (slugs.get(base) ?? 0) + 1;
  slugs.set(base, n);
  const file = new URL(cleanUrl(fileUrl) ?? fileUrl);
  file.hash = n === 1 ? base : `${base}-${n}`;
  return { url: file.href, sourced: false, markdown: lines.join('\n') };
}

/** A heading's anchor as documentation generators make it: lower case, words joined by hyphens. */
export function slugOf(title: string): string {
  const slug = title
    .toLowerCase()
    .replace(/[`*_~[\]()<>!]/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100);
  return slug || 'page';
}
