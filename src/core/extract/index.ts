// The extraction engine: a document in (URL, content type, body), a page record
// and its code snippets out. Pure: no database, no network, no clock. Never
// throws: an extractor that fails on some input yields an empty result with the
// page's hash, so the crawler can record the page and move on.
import { extractAdoc } from './adoc.js';
import { decodeBody, md5Hex } from './encoding.js';
import { extractHtml } from './html.js';
import { visibleResult } from './invisible.js';
import { isNotebook, notebookToMarkdown } from './ipynb.js';
import { extractMarkdown } from './markdown.js';
import { extractRst } from './rst.js';
import { screenResult } from './screen-result.js';
import { extractSections } from './sections.js';
import type { ExtractInput, ExtractResult, PageFormat } from './types.js';

export type { ExtractInput, ExtractedSnippet, ExtractResult, PageFormat } from './types.js';
export { detectLanguage } from './language.js';
export { normalizeLanguage } from './language-names.js';
export { normalizeCode } from './snippet.js';

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml', 'application/xml', 'text/xml', 'application/docbook+xml']);
const MARKDOWN_TYPES = new Set(['text/markdown', 'text/x-markdown', 'text/mdx', 'text/x-mdx']);
const RST_TYPES = new Set(['text/x-rst', 'text/prs.fallenstein.rst', 'text/rst']);
const ADOC_TYPES = new Set(['text/asciidoc', 'text/x-asciidoc', 'text/adoc']);

function pathOf(url: string): string {
  let p = url;
  const cut = p.search(/[?#]/);
  if (cut >= 0) p = p.slice(0, cut);
  try {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(p)) p = new URL(p).pathname;
  } catch {
    // Not a URL: treat it as a path.
  }
  return decodeURIComponentSafe(p).toLowerCase();
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function formatFromPath(path: string): PageFormat | null | undefined {
  if (path.endsWith('.rst.txt') || path.endsWith('.rst') || path.endsWith('.rest')) return 'rst';
  if (/\.(?:md|markdown|mdx|mdown|mkd|mkdn)$/.test(path)) return 'markdown';
  if (/\.(?:adoc|asciidoc|asc)$/.test(path)) return 'adoc';
  if (path.endsWith('.txt') || path.endsWith('.text')) return 'text';
  if (/\.(?:html?|xhtml|shtml|php|aspx?|jsp|xml|dbk|docbook)$/.test(path)) return 'html';
  const base = path.slice(path.lastIndexOf('/') + 1);
  // No extension (or a version-like dot): a web page.
  if (!/\.[a-z][a-z0-9]{0,7}$/.test(base)) return 'html';
  return undefined;
}

/**
 * The format of a document, from its content type and URL; null when we don't
 * extract it (images, archives, scripts, JSON ...). A generic or missing content
 * type defers to the URL's extension; `text/plain` too, because raw hosts serve
 * `.md` and Python's `_sources/*.rst.txt` as plain text.
 */
export function detectFormat(url: string, contentType?: string | null): PageFormat | null {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const path = pathOf(String(url ?? ''));
  const fromPath = formatFromPath(path);
  if (type === '' || type === 'application/octet-stream' || type === 'binary/octet-stream') return fromPath ?? null;
  if (HTML_TYPES.has(type)) {
    if (type.endsWith('/xml') && fromPath !== 'html') return fromPath === undefined ? null : fromPath;
    return 'html';
  }
  if (MARKDOWN_TYPES.has(type)) return 'markdown';
  if (RST_TYPES.has(type)) return 'rst';
  if (ADOC_TYPES.has(type)) return 'adoc';
  if (type === 'text/plain') {
    if (fromPath === 'rst' || fromPath === 'markdown' || fromPath === 'adoc') return fromPath;
    return 'text';
  }
  return null;
}

function sniffFormat(text: string): PageFormat {
  const head = text.slice(0, 2048).trimStart().toLowerCase();
  if (head.startsWith('<!doctype') || head.startsWith('<html') || head.startsWith('<?xml') || /<(?:body|head|pre|div)[\s>]/.test(head)) {
    return 'html';
  }
  return 'text';
}

function emptyResult(url: string, contentHash: string, format: PageFormat, error: string): ExtractResult {
  return {
    error,
    page: { url, title: '', description: '', siteName: null, site: null, canonicalUrl: null, links: [], noFollow: false, markdown: '', contentHash, format },
    snippets: [],
    skipped: [],
    origins: [],
  };
}

function safeHash(body: string | Uint8Array): string {
  try {
    return md5Hex(body);
  } catch {
    return md5Hex('');
  }
}

/** A document's page record, snippets and sections; each screened for instructions aimed at AI assistants. */
export function extractDocument(input: ExtractInput): ExtractResult {
  return screenResult(withSections(visibleResult(extractAny(input))));
}

/** The result with its page's sections, cut from the page as a reader sees it (after visibleResult). */
function withSections(r: ExtractResult): ExtractResult {
  return { ...r, sections: r.error === undefined ? extractSections(r.page, r.snippets) : [] };
}

function extractAny(input: ExtractInput): ExtractResult {
  const url = String(input?.url ?? '');
  const body = input?.body ?? '';
  const contentHash = safeHash(typeof body === 'string' || body instanceof Uint8Array ? body : String(body));
  let format: PageFormat = 'text';
  try {
    const text = decodeBody(typeof body === 'string' || body instanceof Uint8Array ? body : String(body), input?.contentType);
    const path = pathOf(url);
    // A notebook is JSON: read as markdown of its cells, or recorded with its error when it is not one.
    if (isNotebook(path, input?.contentType)) {
      format = 'markdown';
      return extractMarkdown(notebookToMarkdown(text), url, contentHash, 'markdown', false);
    }
    format = detectFormat(url, input?.contentType) ?? sniffFormat(text);
    switch (format) {
      case 'html':
        return extractHtml(text, url, contentHash);
      case 'markdown':
        return extractMarkdown(text, url, contentHash, 'markdown', path.endsWith('.mdx'));
      case 'rst':
        return extractRst(text, url, contentHash);
      case 'adoc':
        return extractAdoc(text, url, contentHash);
      case 'text':
        return extractMarkdown(text, url, contentHash, 'text', false);
    }
  } catch (err) {
    // A bug in one extractor must not take the crawl down; the page is recorded without snippets.
    return emptyResult(url, contentHash, format, err instanceof Error ? `${err.name}: ${err.message}` : String(err));
  }
}
