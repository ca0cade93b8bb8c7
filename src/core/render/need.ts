/**
 * The `auto` rule: whether a fetched HTML page is worth rendering in headless Chromium. Pure and cheap, so it
 * runs on every fetched HTML page. A page is rendered when either
 * - the site routes by hash: the page's own URL has a `#/` (or `#!/`) route, or its HTML links to at least
 *   HASH_LINKS_MIN such routes; each route is a page only a script can draw; or
 * - its main content is an empty shell while its scripts are substantial: the extractor found under
 *   THIN_TEXT_CHARS of main text, or no code and under SHORT_TEXT_CHARS of text in a page that carries a
 *   client-side app's marks (an empty mount point like `<div id="root"></div>`, or a `<noscript>` asking for
 *   JavaScript); and the page loads at least one external script or SUBSTANTIAL_INLINE_CHARS of inline
 *   script (a page without scripts renders to itself, so rendering it gains nothing).
 * The script and link scans read the raw HTML by indexOf and with regular expressions whose repetitions are
 * bounded, so they stay linear in the page's size and never throw on hostile input.
 */

export const THIN_TEXT_CHARS = 300;
export const SHORT_TEXT_CHARS = 1500;
export const SUBSTANTIAL_INLINE_CHARS = 2000;
export const HASH_LINKS_MIN = 2;

/** What the extractor found in the fetched page's main content. */
export interface MainContent {
  textChars: number;
  codeBlocks: number;
}

export interface ScriptWeight {
  external: number;
  inlineChars: number;
}

export type RenderReason = 'hash-routed' | 'empty-shell';

/** Whether `url` carries a hash route (`#/guide/x`, `#!/guide/x`) rather than an in-page anchor. */
export function isHashRoute(url: string): boolean {
  const hash = url.indexOf('#');
  return hash >= 0 && /^#!?\//.test(url.slice(hash));
}

// Data blocks, not programs: JSON, JSON-LD, templates and import maps.
const DATA_TYPE = /\btype\s*=\s*["']?(?:application\/(?:ld\+)?json|importmap|text\/(?:template|x-template|html))/i;
const HAS_SRC = /\bsrc\s*=/i;

/**
 * The page's external scripts and the size of its inline ones; data blocks (JSON, templates) do not count.
 * A scan by indexOf over the lower-cased page, each character read a bounded number of times: a regular
 * expression would rescan to the end of the page for each unclosed `<script`.
 */
export function scriptWeight(html: string): ScriptWeight {
  const lower = html.toLowerCase();
  let external = 0;
  let inlineChars = 0;
  for (let at = lower.indexOf('<script'); at >= 0;) {
    const tagEnd = lower.indexOf('>', at);
    if (tagEnd < 0) break;
    const close = lower.indexOf('</script', tagEnd);
    const attributes = html.slice(at + 7, tagEnd);
    if (!DATA_TYPE.test(attributes)) {
      if (HAS_SRC.test(attributes)) external++;
      else inlineChars += html.slice(tagEnd + 1, close < 0 ? html.length : close).trim().length;
    }
    if (close < 0) break;
    at = lower.indexOf('<script', close + 8);
  }
  return { external, inlineChars };
}

// Every href and its value; a match never fails once `href=` is found, so the scan moves past each value
// rather than retrying from the next character (which would make a page of `href=href=…` quadratic).
const HREF_VALUE = /\bhref\s*=\s*["']?([^"'\s>]{0,2000})/gi;

/** How many links of the page are hash routes (`href="#/guide"`, `href="/app#!/x"`), counted up to `limit`. */
export function hashRouteLinks(html: string, limit = HASH_LINKS_MIN): number {
  let count = 0;
  for (const match of html.matchAll(HREF_VALUE)) {
    const value = match[1] ?? '';
    const hash = value.indexOf('#');
    if (hash >= 0 && /^#!?\//.test(value.slice(hash)) && ++count >= limit) break;
  }
  return count;
}

const MOUNT_POINT = /<(div|main|section|app-root)\b[^>]{0,500}\bid\s*=\s*["']?(root|app|__next|__nuxt|___gatsby|svelte|main-app)\b[^>]{0,500}>\s*<\/\1\s*>/i;
const NOSCRIPT_JS = /<noscript\b[^>]*>[^<]{0,300}javascript/i;

/** The marks of a client-side app: an empty mount point, or a `<noscript>` asking for JavaScript. */
export function looksLikeAppShell(html: string): boolean {
  return MOUNT_POINT.test(html) || NOSCRIPT_JS.test(html);
}

/** Why the page should be rendered under `auto`, or null when its fetched HTML is the page. Never throws. */
export function renderReason(url: string, html: string, main: MainContent): RenderReason | null {
  if (isHashRoute(url) || hashRouteLinks(html) >= HASH_LINKS_MIN) return 'hash-routed';
  const scripts = scriptWeight(html);
  if (scripts.external === 0 && scripts.inlineChars < SUBSTANTIAL_INLINE_CHARS) return null;
  if (main.textChars < THIN_TEXT_CHARS) return 'empty-shell';
  if (main.codeBlocks === 0 && main.textChars < SHORT_TEXT_CHARS && looksLikeAppShell(html)) return 'empty-shell';
  return null;
}
