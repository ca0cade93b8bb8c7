import { decodeHTML } from 'entities';
import { classifyContentType } from './fetch.js';
import { cleanUrl } from './url.js';

/**
 * Markdown twins: the same page as the HTML, written in markdown by the site for language models. A page
 * announces one with `<link rel="alternate" type="text/markdown" href=…>`; a site following the llms.txt
 * convention serves one beside every page (`page.html` → `page.html.md`, `dir/` → `dir/index.html.md`,
 * `page` → `page.md`). The crawler indexes the twin under the HTML page's URL, so links and anchors stay right.
 */

/** Where a `<link>` in the head is looked for: a head larger than this is not a documentation page's head. */
const HEAD_SCAN_BYTES = 256 * 1024;
/** `<link>` tags read at most; each is a handful of attributes. */
const MAX_LINK_TAGS = 500;

const LINK_TAG = /<link\b([^<>]{0,4000})>/gi;
const ATTRIBUTE = /([a-z][a-z0-9:_-]{0,40})\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'<>`=]+))/gi;
const MARKDOWN_TYPES = new Set(['text/markdown', 'text/x-markdown']);

function attributesOf(tag: string): Map<string, string> {
  const attrs = new Map<string, string>();
  for (const m of tag.matchAll(ATTRIBUTE)) {
    const name = m[1]!.toLowerCase();
    if (!attrs.has(name)) attrs.set(name, decodeHTML(m[2] ?? m[3] ?? m[4] ?? ''));
  }
  return attrs;
}

/**
 * The absolute http(s) URL of the markdown alternate an HTML page declares in its head, or null. Only the
 * head is read (up to `</head>` or HEAD_SCAN_BYTES); any bytes give an answer, never a throw.
 */
export function findMarkdownAlternate(html: Buffer | string, pageUrl: string): string | null {
  const text = (typeof html === 'string' ? html.slice(0, HEAD_SCAN_BYTES) : html.subarray(0, HEAD_SCAN_BYTES).toString('latin1')).split(/<\/head\s*>/i, 1)[0]!;
  let seen = 0;
  for (const m of text.matchAll(LINK_TAG)) {
    if (++seen > MAX_LINK_TAGS) break;
    const attrs = attributesOf(m[1]!);
    const rel = (attrs.get('rel') ?? '').toLowerCase().split(/\s+/);
    const type = (attrs.get('type') ?? '').split(';')[0]!.trim().toLowerCase();
    const href = attrs.get('href');
    if (!rel.includes('alternate') || !MARKDOWN_TYPES.has(type) || !href) continue;
    const url = cleanUrl(href, pageUrl);
    if (url) return url;
  }
  return null;
}

/**
 * The llms.txt convention's twin of an HTML page: `.md` appended to the path (`page.html.md`, `page.md`), and
 * `index.html.md` for a directory URL. Null for a page with a query (the convention names none) or one that is
 * not HTML by its name (already markdown, plain text, a file).
 */
export function twinUrlFor(pageUrl: string): string | null {
  const clean = cleanUrl(pageUrl);
  if (!clean) return null;
  const url = new URL(clean);
  if (url.search) return null;
  if (url.pathname.endsWith('/')) {
    url.pathname += 'index.html.md';
    return url.href;
  }
  const base = url.pathname.slice(url.pathname.lastIndexOf('/') + 1);
  if (/\.[a-z0-9]{1,8}$/i.test(base) && !/\.(html?|xhtml)$/i.test(base)) return null;
  url.pathname += '.md';
  return url.href;
}

/**
 * The HTML page a twin stands for, the inverse of twinUrlFor: `dir/index.html.md` → `dir/`, `page.html.md` →
 * `page.html`, `page.md` → `page`. Null when the URL is not a markdown file's.
 */
export function pageUrlOfTwin(twinUrl: string): string | null {
  const clean = cleanUrl(twinUrl);
  if (!clean) return null;
  const url = new URL(clean);
  if (url.search || !/\.md$/i.test(url.pathname)) return null;
  url.pathname = /\/index\.html\.md$/i.test(url.pathname) ? url.pathname.slice(0, -'index.html.md'.length) : url.pathname.slice(0, -3);
  if (url.pathname === '' || url.pathname.endsWith('//')) return null;
  return url.href;
}

/**
 * The content type to extract a twin's bytes with, or null when the answer is not markdown: a site that
 * answers every unknown path with its HTML application shell (a 200 for `page.md`) is not a twin.
 */
export function twinContentType(contentType: string | null, twinUrl: string): string | null {
  if (classifyContentType(contentType, twinUrl) !== 'markdown') return null;
  const charset = /;\s*charset=([\w.-]{1,40})/i.exec(contentType ?? '')?.[1];
  return `text/markdown; charset=${charset ?? 'utf-8'}`;
}
