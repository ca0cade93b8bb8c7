import type { SiteIdentity } from './site-identity.js';

// The extraction engine's public records. index.ts re-exports these; other
// modules code against them, so fields are only ever added, never changed.

export interface ExtractInput {
  url: string;
  contentType?: string | null;
  body: string | Uint8Array;
}

export type LanguageConfidence = 'declared' | 'filename' | 'detected' | 'unknown';

export interface ExtractedSnippet {
  title: string;
  description: string;
  language: string;
  code: string;
  filename: string | null;
  /** md5 hex of the normalised code (trailing whitespace per line trimmed, blank edge lines dropped). */
  codeHash: string;
  /** 0-based order on the page. */
  position: number;
  /** Page url + '#anchor' of the nearest heading with an id, else the page url. */
  sourceUrl: string;
  languageConfidence: LanguageConfidence;
  // Added fields are optional in the type so that code building snippets by hand
  // (tests, other pipelines) keeps compiling; extractDocument always sets them.
  /** Label of the tab the block sits in (MkDocs, Docusaurus, Starlight, Sphinx tabs), else null. */
  tab?: string | null;
  /** Text of the nearest section heading, '' before any heading. */
  section?: string;
  /** Set by screening when the snippet or its page holds instructions aimed at AI assistants (`possible_prompt_injection`). */
  flags?: string[];
  /** The sentence that raised `flags`, bounded; absent when the snippet is not flagged. */
  flaggedPassage?: string;
}

/**
 * A heading-bounded section of a page (sections.ts): the unit of its prose, stored and searched beside the
 * snippets, shown with the code blocks it holds.
 */
export interface ExtractedSection {
  /** The page title, then the headings above the section, outermost first, then its own. */
  breadcrumb: string[];
  /** The breadcrumb as one line (`useRef › Usage › Referencing a value with a ref`). */
  title: string;
  /** Plain text of its first prose, bounded like a snippet's description. */
  description: string;
  /** Its markdown, code blocks included, its heading line left out. */
  text: string;
  /** The most frequent language of its code blocks, 'markdown' when it has none. */
  language: string;
  codeBlocks: number;
  /** The id its heading is reached by on the page, or null (the page's start). */
  anchor: string | null;
  /** Page url + '#anchor', else the page url. */
  sourceUrl: string;
  /** md5 hex of its heading and text: the same section on two pages of a source is one. */
  hash: string;
  /** 0-based order among the page's sections. */
  position: number;
  /** Set by screening, as on snippets. */
  flags?: string[];
  flaggedPassage?: string;
}

export type PageFormat = 'html' | 'markdown' | 'text' | 'rst' | 'adoc';

export interface ExtractedPage {
  url: string;
  /** h1, else <title> without site suffix, else frontmatter title. */
  title: string;
  /** Meta description ('' if none). */
  description: string;
  /** og:site_name, else the <title> suffix after ' — ', ' - ', ' | ', else null. */
  siteName: string | null;
  /** HTML: the library and version the site says it documents (site-identity.ts); null for other formats. */
  site: SiteIdentity | null;
  /** Absolute rel=canonical. */
  canonicalUrl: string | null;
  /** Absolute http(s) URLs of every <a href> in the whole document, fragments stripped, deduplicated, in order. */
  links: string[];
  /** <meta name=robots content=nofollow|none>. */
  noFollow: boolean;
  /** Main-content markdown rendition (for get_page_markdown). */
  markdown: string;
  /** md5 hex of the raw body bytes. */
  contentHash: string;
  format: PageFormat;
  /**
   * Screening of the whole page (screen-result.ts): its prose, title, description, comments and hidden text.
   * Set by extraction's last step: absent before it, and when nothing was found.
   */
  flags?: string[];
  /** The sentence that raised the flags (prefixed when no reader could see it). */
  flaggedPassage?: string;
  /**
   * The page's headings in reading order, with the ids they are reached by: its headings, and on an HTML page
   * the API entries (`<dt id>`) that act as headings. Sections are cut at them (sections.ts). Optional: records
   * built without it (older code, tests) cut sections at the markdown's own headings.
   */
  headings?: PageHeading[];
}

export interface PageHeading {
  /** 1-6; an API entry ranks below every heading (7 and deeper for nested lists). */
  level: number;
  text: string;
  anchor: string | null;
}

/** Why a code-looking element did not become a snippet. */
export type SkipReason = 'empty' | 'duplicate' | 'outside-main' | 'line-number-gutter' | 'nested' | 'too-large' | 'not-code' | 'interface' | 'hidden';

export interface SkippedBlock {
  reason: SkipReason;
  /** Element name for HTML (`pre`, `code`, `programlisting`, ...), or the block kind for text formats. */
  tag: string;
  /** First characters of the block's text, for diagnostics. */
  preview: string;
}

export interface ExtractResult {
  page: ExtractedPage;
  snippets: ExtractedSnippet[];
  /** The page's sections (sections.ts); always set by extractDocument. */
  sections?: ExtractedSection[];
  /** Code-looking blocks that were deliberately not emitted, each with a reason (always set by extractDocument). */
  skipped?: SkippedBlock[];
  /** Per emitted snippet, the element or block kind it came from, parallel to `snippets` (always set). */
  origins?: string[];
  /** Set when an extractor failed on this input (a bug): the result is then an empty page with its hash. */
  error?: string;
  /**
   * Text of the page a reader does not see (HTML comments, hidden elements), for screening only: never
   * indexed, and removed by extractDocument once screened.
   */
  concealed?: string[];
}
