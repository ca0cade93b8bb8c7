import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hashRouteLinks, isHashRoute, looksLikeAppShell, renderReason, scriptWeight, SHORT_TEXT_CHARS, THIN_TEXT_CHARS } from '../../src/core/render/need.js';
import { cleanUrl, normalizeUrl } from '../../src/core/crawl/url.js';

/** The `auto` rule on fixture pages in the shapes documentation sites ship. */

const SHELL = '<!doctype html><html><head><title>Docs</title><script type="module" src="/assets/index-4f2a.js"></script></head><body><div id="root"></div></body></html>';
const SPHINX = `<html><head><script src="/_static/searchtools.js"></script></head><body><main><h1>os</h1><p>${'Prose. '.repeat(300)}</p><pre>import os</pre></main></body></html>`;
const NO_SCRIPT_SHELL = '<html><body><div id="root"></div></body></html>';
const HASH_NAV = '<html><body><div id="app"></div><a href="#/guide">Guide</a><a href="#/api">API</a><script src="app.js"></script></body></html>';
const ANCHORS = '<html><body><a href="#install">Install</a><a href="#usage">Usage</a><script src="app.js"></script></body></html>';
const TEXT_PAGE_WITH_ANALYTICS = `<html><head><script async src="https://analytics.example/a.js"></script></head><body><main><p>${'Long explanation. '.repeat(40)}</p></main></body></html>`;
const NEXT_SHELL = `<html><body><div id="__next"></div><noscript>Please enable JavaScript.</noscript><script src="/_next/main.js"></script></body></html>`;

describe('renderReason: the auto rule', () => {
  it('renders an empty shell whose scripts draw the page', () => {
    expect(renderReason('https://x.dev/docs/', SHELL, { textChars: 0, codeBlocks: 0 })).toBe('empty-shell');
  });
  it('leaves a server-rendered page with text and code alone, whatever scripts it loads', () => {
    expect(renderReason('https://x.dev/library/os.html', SPHINX, { textChars: 2100, codeBlocks: 1 })).toBeNull();
  });
  it('leaves a page without scripts alone: rendering it would change nothing', () => {
    expect(renderReason('https://x.dev/', NO_SCRIPT_SHELL, { textChars: 0, codeBlocks: 0 })).toBeNull();
  });
  it('renders a hash-routed page, by its links or by its own URL', () => {
    expect(renderReason('https://x.dev/', HASH_NAV, { textChars: 5000, codeBlocks: 3 })).toBe('hash-routed');
    expect(renderReason('https://x.dev/#/guide', SPHINX, { textChars: 5000, codeBlocks: 3 })).toBe('hash-routed');
  });
  it('does not take in-page anchors for hash routes', () => {
    expect(hashRouteLinks(ANCHORS)).toBe(0);
    expect(renderReason('https://x.dev/#install', ANCHORS, { textChars: 5000, codeBlocks: 3 })).toBeNull();
  });
  it('a prose page without code renders only when it carries an app shell’s marks', () => {
    const main = { textChars: THIN_TEXT_CHARS + 100, codeBlocks: 0 };
    expect(renderReason('https://x.dev/intro', TEXT_PAGE_WITH_ANALYTICS, main)).toBeNull();
    expect(renderReason('https://x.dev/intro', NEXT_SHELL, main)).toBe('empty-shell');
    expect(renderReason('https://x.dev/intro', NEXT_SHELL, { textChars: SHORT_TEXT_CHARS, codeBlocks: 0 })).toBeNull();
  });
  it('counts scripts, not data blocks', () => {
    expect(scriptWeight('<script type="application/ld+json">{"a":1}</script><script src="a.js"></script><script>var x = 1;</script>')).toEqual({ external: 1, inlineChars: 10 });
    expect(scriptWeight('<SCRIPT SRC=a.js></SCRIPT><script>unclosed')).toEqual({ external: 1, inlineChars: 8 });
    expect(looksLikeAppShell(SHELL)).toBe(true);
    expect(looksLikeAppShell(SPHINX)).toBe(false);
  });
  it('recognises hash routes', () => {
    expect(isHashRoute('https://x.dev/#/guide')).toBe(true);
    expect(isHashRoute('https://x.dev/app#!/guide')).toBe(true);
    expect(isHashRoute('https://x.dev/#guide')).toBe(false);
    expect(isHashRoute('https://x.dev/guide')).toBe(false);
  });
});

describe('hash routes in crawl URLs', () => {
  it('keeps #/ routes as page identity and drops in-page fragments', () => {
    expect(cleanUrl('https://x.dev/#/guide/x')).toBe('https://x.dev/#/guide/x');
    expect(normalizeUrl('https://x.dev/index.html#!/guide')).toBe('https://x.dev/#!/guide');
    expect(cleanUrl('https://x.dev/page#section')).toBe('https://x.dev/page');
    expect(normalizeUrl('https://x.dev/page/#top')).toBe('https://x.dev/page');
  });
});

describe('renderReason on hostile input', () => {
  const htmlish = fc
    .array(fc.constantFrom('<script', '<script src=a>', '</script>', '<div id="root">', '</div>', 'href="#/', 'href=', '<noscript>', 'javascript', '>', '"', "'", ' ', 'x', '#'), { maxLength: 400 })
    .map((parts) => parts.join(''));
  it('never throws, on any string or HTML-like soup, and always answers one of its reasons', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 2000 }), htmlish), fc.string({ maxLength: 200 }), fc.nat(), fc.nat(), (html, url, textChars, codeBlocks) => {
        expect([null, 'hash-routed', 'empty-shell']).toContain(renderReason(url, html, { textChars, codeBlocks }));
      }),
      { numRuns: 500 },
    );
  });
  it('stays linear on pathological pages (unclosed scripts, attributes without end)', () => {
    const pages = ['<script'.repeat(200_000), '<script>'.repeat(200_000), `<div id=${'a'.repeat(1_000_000)}`, 'href='.repeat(300_000), `<div ${'i'.repeat(500_000)}`];
    const started = performance.now();
    for (const page of pages) renderReason('https://x.dev/', page, { textChars: 0, codeBlocks: 0 });
    // A quadratic scan of these pages takes many seconds; a linear one a fraction of a second, even on a loaded machine.
    expect(performance.now() - started).toBeLessThan(3000);
  });
});
