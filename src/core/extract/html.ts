// HTML (and DocBook XML) pages: metadata, links, main content, code blocks.
import { plainText, resolveContexts, streamHeadings } from './context.js';
import { concealedText } from './html-concealed.js';
import { chooseMainRoot } from './html-main.js';
import { HtmlMarkdownRenderer, markdownWithCode } from './html-markdown.js';
import { buildTree, type HElement, type HtmlTree, isAncestor, textOf } from './html-tree.js';
import { siteIdentity } from './site-identity.js';
import { fence, finaliseSnippets, type RawBlock } from './snippet.js';
import type { ExtractedPage, ExtractResult, SkippedBlock } from './types.js';
import { collapseSpaces } from './whitespace.js';

/** DocBook sources are XML without an <html> root; XHTML (PostgreSQL's docs) stays HTML. */
export function isDocBookXml(text: string): boolean {
  const head = text.slice(0, 4096);
  if (!/^\s*(?:<\?xml|<!DOCTYPE\s+(?:book|article|chapter|section|refentry)|<(?:book|article|chapter|section|refentry)\b)/i.test(head)) return false;
  if (/<html[\s>]/i.test(head)) return false;
  return /<(?:book|article|chapter|section|sect1|refentry|part|appendix)[\s>]/.test(head);
}

// Title suffixes: "Page — Site", "Page | Site", "Page - Site", "Page · Site".
const TITLE_SEPARATORS = [' — ', ' – ', ' | ', ' - ', ' · ', ' :: ', ' » '];

export function splitTitle(title: string): { page: string; site: string | null } {
  let best = -1;
  let sepLen = 0;
  for (const sep of TITLE_SEPARATORS) {
    const i = title.lastIndexOf(sep);
    if (i > best) {
      best = i;
      sepLen = sep.length;
    }
  }
  if (best <= 0) return { page: title, site: null };
  const page = title.slice(0, best).trim();
  const site = title.slice(best + sepLen).trim();
  if (page.length === 0 || site.length === 0) return { page: title, site: null };
  return { page, site };
}

export interface Resolver {
  (href: string): string | null;
  /** The page an href points to: absolute, without its fragment. */
  page(href: string): string | null;
}

// A relative path of plain name characters and no `.` or `..` segment: URL
// resolution appends it to the base's directory unchanged. Most links in a
// documentation site are like this (`library/os.html`), and new URL() parses
// and allocates a whole URL for each.
const PLAIN_RELATIVE = /^[\w~-][\w.~/-]*$/;
const DOT_SEGMENT = /\/\.\.?(?:\/|$)/;

/** Resolves hrefs against the page (or its <base>), caching by href without fragment. */
export function makeResolver(pageUrl: string, baseHref: string | null): Resolver {
  let base: URL | null = null;
  try {
    base = new URL(pageUrl);
    if (baseHref) base = new URL(baseHref.trim(), base);
  } catch {
    base = null;
  }
  let dir: string | null = null;
  if (base !== null && (base.protocol === 'http:' || base.protocol === 'https:')) {
    const h = base.href;
    const noQuery = h.slice(0, h.length - base.search.length - base.hash.length);
    dir = noQuery.slice(0, noQuery.lastIndexOf('/') + 1);
  }
  const cache = new Map<string, string | null>();
  const page = (href: string): string | null => {
    const hash = href.indexOf('#');
    let path = hash >= 0 ? href.slice(0, hash) : href;
    let resolved = cache.get(path);
    if (resolved !== undefined) return resolved;
    const key = path;
    path = path.trim();
    if (base === null) resolved = null;
    else if (dir !== null && PLAIN_RELATIVE.test(path) && !DOT_SEGMENT.test(path)) resolved = dir + path;
    else {
      try {
        // No fragment in `path`, so none in the result.
        resolved = new URL(path, base).href;
      } catch {
        resolved = null;
      }
    }
    cache.set(key, resolved);
    return resolved;
  };
  const resolve = ((href: string): string | null => {
    const resolved = page(href);
    if (resolved === null) return null;
    const hash = href.indexOf('#');
    if (hash < 0) return resolved;
    const frag = href.slice(hash).trim();
    return frag.length > 1 ? `${resolved}${frag}` : resolved;
  }) as Resolver;
  resolve.page = page;
  return resolve;
}

function metaContent(tree: HtmlTree, key: string): string | null {
  for (const m of tree.metas) {
    const name = (m.name ?? m.property ?? '').toLowerCase();
    if (name === key && m.content !== undefined) return m.content;
  }
  return null;
}

/** Contents of the `<meta>` tags whose name or property says version (`docsearch:version`, `nodejs.org:node-version`). */
function versionMetas(tree: HtmlTree): string[] {
  return tree.metas.filter((m) => /(?:^|[:._-])version$/i.test(m.name ?? m.property ?? '') && m.content !== undefined).map((m) => m.content!);
}

/** Titles of the page's OpenSearch description links, which name the whole site. */
function openSearchTitles(tree: HtmlTree): string[] {
  return tree.linkTags.filter((l) => (l.type ?? '').toLowerCase() === 'application/opensearchdescription+xml' && l.title).map((l) => l.title!);
}

/** Titles of the links to the site's home page, `<link rel="home|start">` first, then the page's own. */
function homeTitles(tree: HtmlTree): string[] {
  const linked = tree.linkTags.filter((l) => /(?:^|\s)(?:home|start)(?:\s|$)/i.test(l.rel ?? '') && l.title).map((l) => l.title!);
  return [...linked, ...tree.homeTitles];
}

function collapse(s: string): string {
  return collapseSpaces(s).trim();
}

export function extractHtml(text: string, url: string, contentHash: string): ExtractResult {
  const xml = isDocBookXml(text);
  const tree = buildTree(text, xml);
  const resolve = makeResolver(url, tree.baseHref);

  // Links: every <a href> in the document, absolute http(s), no fragment, first occurrence order.
  const links: string[] = [];
  const seen = new Set<string>();
  for (const href of tree.hrefs) {
    const u = resolve.page(href);
    if (u === null) continue;
    if (!(u.startsWith('http://') || u.startsWith('https://'))) continue;
    if (seen.has(u)) continue;
    seen.add(u);
    links.push(u);
  }

  const titleText = tree.title !== null ? collapse(textOf(tree.title)) : '';
  const split = splitTitle(titleText);
  const ogSite = metaContent(tree, 'og:site_name');
  const robots = (metaContent(tree, 'robots') ?? '').toLowerCase();
  let canonicalUrl: string | null = null;
  for (const l of tree.linkTags) {
    if (l.href && (l.rel ?? '').toLowerCase().split(/\s+/).includes('canonical')) {
      const r = resolve(l.href);
      if (r !== null && /^https?:/.test(r)) canonicalUrl = r;
      break;
    }
  }

  const mainRoot = chooseMainRoot(tree);
  const rendered = new HtmlMarkdownRenderer(tree, mainRoot, resolve).render();
  const heading = rendered.pageHeading ?? (xml ? firstHeading(tree.root) : null);
  const pageHeading = heading !== null ? plainText(heading) : null;
  // The h1 of the main content, not the first h1 anywhere: Node.js's pages put
  // "Node.js v18 documentation" in an h1 of the header.
  const firstH1 = (): string => (tree.h1s.length > 0 ? collapse(textOf(tree.h1s[0] as HElement)) : '');
  const title = pageHeading ?? (split.page || plainText(firstH1()) || (firstHeading(mainRoot) ?? ''));

  const contexts = resolveContexts(rendered.items, rendered.blocks.length);
  const fin = finaliseSnippets(rendered.blocks, contexts, url, title);
  const fences = rendered.blocks.map((b: RawBlock, i: number) => {
    const lang = fin.blockLanguages[i] ?? '';
    return lang === '' ? '' : fence(b.code.replace(/^\s*\n/, '').trimEnd(), lang);
  });

  const skipped: SkippedBlock[] = [...rendered.skipped, ...fin.skipped];
  for (const el of tree.codeElements) {
    if (rendered.visited.has(el)) continue;
    skipped.push({ reason: isAncestor(mainRoot, el) ? 'interface' : 'outside-main', tag: el.tag, preview: collapseSpaces(textOf(el).slice(0, 40)) });
  }

  const page: ExtractedPage = {
    url,
    title,
    description: collapse(metaContent(tree, 'description') ?? metaContent(tree, 'og:description') ?? ''),
    siteName: ogSite !== null && ogSite.trim().length > 0 ? collapse(ogSite) : split.site,
    site: siteIdentity({
      title: titleText,
      siteName: ogSite ?? metaContent(tree, 'application-name'),
      generator: metaContent(tree, 'generator'),
      versions: versionMetas(tree),
      searchTitles: openSearchTitles(tree),
      homeTitles: homeTitles(tree),
      url,
    }),
    canonicalUrl,
    links,
    noFollow: /\b(?:nofollow|none)\b/.test(robots),
    markdown: markdownWithCode(rendered.parts, fences).trim(),
    contentHash,
    format: 'html',
    headings: streamHeadings(rendered.items),
  };
  return { page, snippets: fin.snippets, skipped, origins: fin.origins, concealed: concealedText(tree) };
}

function firstHeading(root: HElement): string | null {
  const stack: HElement[] = [root];
  while (stack.length > 0) {
    const n = stack.pop() as HElement;
    if (/^h[1-6]$/.test(n.tag)) {
      const t = collapse(textOf(n));
      if (t) return t;
    }
    for (let i = n.children.length - 1; i >= 0; i--) {
      const c = n.children[i];
      if (c !== undefined && typeof c !== 'string') stack.push(c);
    }
  }
  return null;
}

/** Code blocks of an HTML fragment (HTML embedded in markdown), without page-level processing. */
export function htmlFragmentBlocks(fragment: string): RawBlock[] {
  const tree = buildTree(fragment, false);
  const rendered = new HtmlMarkdownRenderer(tree, tree.root, () => null).render();
  return rendered.blocks;
}
