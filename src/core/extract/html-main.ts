// Main-content detection and interface junk. Documentation themes wrap the
// article in navigation, sidebars, breadcrumbs, "edit this page" links, copy
// buttons and tab strips; none of that is context for a code example, and none
// of it belongs in the page's markdown.
import { ClassMatcher, codeJunkClass, hiddenByStyle } from './code-classes.js';
import { NO_ATTRS } from './html-parser.js';
import { type HElement, type HtmlTree, Kind } from './html-tree.js';

export { ClassMatcher } from './code-classes.js';

// Theme containers that hold exactly the article (specific), then landmarks,
// then generic names. Higher wins among candidates that hold the page's code.
const SPECIFIC_CLASS = /(?:^|\s)(?:theme-doc-markdown|md-content__inner|sl-markdown-content|markdown-body|markdown-section|api-content)(?:\s|$)/;
const SPECIFIC_ID = /^(?:apicontent|main-content)$/;

function candidateScore(el: HElement): number {
  const a = el.attrs;
  if ((a.class !== undefined && SPECIFIC_CLASS.test(a.class)) || (a.id !== undefined && SPECIFIC_ID.test(a.id))) return 30;
  if (a.role === 'main') return 25;
  if (el.tag === 'main') return 20;
  if (el.tag === 'article') return 15;
  if (a.id !== undefined && /^(?:content|main|doc-content|page-content|docs-content)$/.test(a.id)) return 12;
  return 10;
}

function insideChrome(el: HElement): boolean {
  for (let p = el.parent; p !== null; p = p.parent) {
    if (p.tag === 'nav' || p.tag === 'aside' || p.tag === 'footer') return true;
  }
  return false;
}

function findBody(root: HElement): HElement {
  // <html><body> or a bare fragment.
  for (const c of root.children) {
    if (typeof c === 'string') continue;
    if (c.tag === 'body') return c;
    if (c.tag === 'html') {
      for (const d of c.children) if (typeof d !== 'string' && d.tag === 'body') return d;
      return c;
    }
  }
  return root;
}

/** The element holding the page's main content; the body (or the whole fragment) when nothing better exists. */
export function chooseMainRoot(tree: HtmlTree): HElement {
  const body = findBody(tree.root);
  const candidates = tree.mainCandidates.filter((c) => !insideChrome(c) && !isJunk(c));
  if (candidates.length === 0) return body;
  const code = tree.codeElements.filter((c) => !insideChrome(c));
  // Code elements inside each element, counted up each code element's ancestors
  // once: testing every candidate against every code element was quadratic
  // (a page of 20,000 <main><pre> pairs made 400 million tests).
  const inside = new Map<HElement, number>();
  for (const c of code) {
    for (let p: HElement | null = c; p !== null; p = p.parent) inside.set(p, (inside.get(p) ?? 0) + 1);
  }
  const coverage = candidates.map((c) => inside.get(c) ?? 0);
  let maxCoverage = 0;
  for (const cov of coverage) if (cov > maxCoverage) maxCoverage = cov;
  let best: HElement | null = null;
  let bestScore = -1;
  for (let i = 0; i < candidates.length; i++) {
    const cov = coverage[i] as number;
    if (cov < maxCoverage * 0.8) continue;
    const score = candidateScore(candidates[i] as HElement);
    if (score > bestScore) {
      bestScore = score;
      best = candidates[i] as HElement;
    }
  }
  // A landmark that misses most of the code the page shows outside chrome is the wrong landmark.
  if (best === null || (code.length > 0 && maxCoverage < code.length * 0.5)) return body;
  return best;
}

const JUNK_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'search', 'tablist', 'tab', 'button', 'toolbar', 'menu', 'menubar', 'dialog', 'alertdialog', 'status', 'complementary']);
// Matched against the whole class attribute, token by token.
const JUNK_CLASS =
  /(?:^|\s)(?:sr-only|sr-only-focusable|visually-hidden|visuallyhidden|screen-reader-text|screen-reader-only|a11y-hidden|skip-link|skip-nav|skip-to-content|headerlink|header-anchor|hash-link|anchorjs-link|anchor-link|heading-anchor|copybutton|copy-button|copybtn|copy-btn|btn-copy|copy-code|copy-code-button|code-copy|clipboard|md-clipboard|clipboard-btn|edit-this-page|theme-edit-this-page|md-content__button|edit-page|editlink|edit-link|edit-on-github|breadcrumb|breadcrumbs|md-path|pagination-nav|md-footer|md-sidebar|md-header|md-tabs|sphinxsidebar|sphinxsidebarwrapper|related|rellinks|navheader|navfooter|navbar|nav-bar|sidebar|sidenav|side-nav|toc|table-of-contents|theme-doc-toc-mobile|theme-doc-toc-desktop|theme-doc-footer|theme-doc-breadcrumbs|theme-doc-version-badge|theme-last-updated|right-sidebar|sl-sidebar|page-nav|prev-next|footer|site-footer|page-footer|top-nav|sub-nav|nav-list|legal-copy|flex-header|out-of-band|srclink|rustdoc-breadcrumbs|tabbed-labels|sd-tab-label|tab-strip|tablist|tabs__item|expand-button|collapse-button|toggle-button|code-toggle|admonition-toggle|linenos|linenodiv|lineno|line-numbers-rows|line-number|line-numbers|blob-num|hljs-ln-numbers|rouge-gutter|gutter|cookie-banner|announcement|announcementBar|theme-announcement-bar|feedback|page-feedback|hidden|d-none|print-only|mobile-only)(?:\s|$)|(?:^|\s)[\w-]*(?:copyButton|CopyButton|clipboardButton|codeLineNumber|tocCollapsible|breadcrumbs|paginationNav|editThisPage|lastUpdated|copyCode)[\w-]*(?:\s|$)/;

const CONTENT_ASIDE = /admonition|aside|callout|note|tip|warning|hint|caution|danger|info|important/;

const junkClass = new ClassMatcher(JUNK_CLASS);

/** Interface junk inside (or instead of) the main content: skipped with its whole subtree. */
export function isJunk(el: HElement): boolean {
  if (el.kind === Kind.Junk || el.inkHidden) return true;
  const tag = el.tag;
  const a = el.attrs;
  if (el.kind === Kind.Aside) {
    const c = a.class ?? '';
    return !CONTENT_ASIDE.test(c);
  }
  if (a === NO_ATTRS) return false;
  // Inactive tab panels carry `hidden` (Docusaurus, Starlight) and still hold real examples.
  if (a.hidden !== undefined && a.role !== 'tabpanel') return true;
  if (a.style !== undefined && a.role !== 'tabpanel' && hiddenByStyle(a.style)) return true;
  if (a['aria-hidden'] === 'true' && tag !== 'pre' && tag !== 'code' && tag !== 'table' && tag !== 'div') return true;
  if (a.role !== undefined && JUNK_ROLES.has(a.role)) return true;
  const cls = a.class;
  if (cls !== undefined && cls.length > 0 && junkClass.test(cls)) {
    // Never drop a code block because a theme put "hidden" or "tabs" on it.
    return tag !== 'pre' && tag !== 'code';
  }
  if (a.id !== undefined && /^(?:toc|sidebar|breadcrumbs?|edit-this-page|page-footer|footer|header-nav|navbar)$/.test(a.id)) return true;
  return false;
}

export function isCodeJunk(el: HElement): boolean {
  if (el.inkHidden) return true;
  const tag = el.tag;
  if (tag === 'button' || tag === 'script' || tag === 'style' || tag === 'svg' || tag === 'input' || tag === 'label' || tag === 'template') {
    return true;
  }
  const a = el.attrs;
  if (a === NO_ATTRS) return false;
  if (a.hidden !== undefined) return true;
  if (a.style !== undefined && hiddenByStyle(a.style)) return true;
  const cls = a.class;
  if (cls !== undefined && cls.length > 0) {
    // Highlighter token classes (Pygments `n`, `s1`, `gp`; Chroma `nx`) are short; only three short names are gutters.
    if (cls.length <= 3) {
      if (cls === 'ln' || cls === 'lnt' || cls === 'gl') return true;
    } else if (codeJunkClass.test(cls)) {
      return true;
    }
  }
  if (a['data-line-number'] !== undefined || a['data-linenos'] !== undefined) {
    // A gutter cell carries the number in an attribute (shown by CSS) and no code.
    return true;
  }
  if (a['aria-hidden'] === 'true') {
    // Hidden decorations inside code are gutters or icons; hidden text with letters would be code.
    return !/[A-Za-z]{2}/.test(shallowText(el));
  }
  return false;
}

function shallowText(el: HElement): string {
  let s = '';
  for (const c of el.children) {
    if (typeof c === 'string') s += c;
    else s += shallowText(c);
    if (s.length > 200) break;
  }
  return s;
}
