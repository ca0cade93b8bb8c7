import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_LLMS_FULL_PAGES, MAX_LLMS_LINKS, parseLlmsTxt, slugOf, splitLlmsFull } from '../../src/core/crawl/llms-txt.js';
import { findMarkdownAlternate, pageUrlOfTwin, twinContentType, twinUrlFor } from '../../src/core/crawl/markdown-twin.js';

const FILE = 'https://docs.example.com/guide/llms.txt';
const onSite = (u: URL) => u.host === 'docs.example.com';

// Text built from the pieces these files are made of, so the properties reach the interesting paths, plus
// arbitrary strings.
const piece = fc.constantFrom(
  '# Title',
  '# ',
  '#Heading',
  '- [a](/a)',
  '- [b](https://docs.example.com/b): note',
  '* [c](https://other.example.org/c)',
  '1. [d](<../d.md>)',
  '- [e](javascript:alert(1))',
  '- [f](http://[::1/)',
  'Source: https://docs.example.com/s',
  'URL: <https://docs.example.com/u>',
  'https://docs.example.com/bare',
  '```',
  '~~~',
  '',
  '\r',
  '\u0000',
  'x'.repeat(5000),
);
const text = fc.oneof(
  fc.string({ maxLength: 400 }),
  fc.array(fc.oneof(piece, fc.string({ maxLength: 40 })), { maxLength: 60 }).map((lines) => lines.join('\n')),
);

describe('parseLlmsTxt', () => {
  it('takes the links of list items, absolute, in scope, deduplicated, in order', () => {
    const body = [
      '# Lib',
      '',
      '> summary',
      '',
      '## Docs',
      '',
      '- [Intro](intro.html): start here',
      '- [API](/api/)',
      `- [Again](https://docs.example.com/guide/intro.html)`,
      '- [Off](https://elsewhere.example.org/x)',
      'Not a [link](/nope) in a list',
      '- [Optional](mailto:a@b.c)',
    ].join('\n');
    expect(parseLlmsTxt(body, FILE, onSite)).toEqual(['https://docs.example.com/guide/intro.html', 'https://docs.example.com/api/']);
  });

  it('property: any text gives in-scope absolute http(s) URLs, at most MAX_LLMS_LINKS, and never throws', () => {
    fc.assert(
      fc.property(text, (t) => {
        const links = parseLlmsTxt(t, FILE, onSite);
        expect(links.length).toBeLessThanOrEqual(MAX_LLMS_LINKS);
        expect(new Set(links).size).toBe(links.length);
        for (const l of links) {
          const u = new URL(l);
          expect(['http:', 'https:']).toContain(u.protocol);
          expect(onSite(u)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('caps the links of a huge file, and a huge line costs nothing', () => {
    const many = Array.from({ length: MAX_LLMS_LINKS + 50 }, (_, i) => `- [p${i}](/p${i})`).join('\n');
    expect(parseLlmsTxt(many, FILE, onSite)).toHaveLength(MAX_LLMS_LINKS);
    expect(parseLlmsTxt(`- [a](/${'a'.repeat(100_000)})`, FILE, onSite)).toEqual([]);
  });
});

describe('splitLlmsFull', () => {
  const FULL = 'https://docs.example.com/llms-full.txt';

  it('splits at level-one headings outside fences, takes Source/URL lines, falls back to unique heading anchors', () => {
    const body = [
      '# Install',
      'Source: https://docs.example.com/install',
      '',
      'pip install x',
      '# Usage',
      '',
      'URL: <https://docs.example.com/usage>',
      '```sh',
      '# a comment, not a page',
      '```',
      '# FAQ',
      'No source here.',
      '# FAQ',
      'Source: https://elsewhere.example.org/faq',
    ].join('\n');
    const pages = splitLlmsFull(body, FULL, onSite);
    expect(pages.map((p) => [p.url, p.sourced])).toEqual([
      ['https://docs.example.com/install', true],
      ['https://docs.example.com/usage', true],
      [`${FULL}#faq`, false],
      [`${FULL}#faq-2`, false],
    ]);
    expect(pages[0]!.markdown).toBe('# Install\n\npip install x');
    expect(pages[1]!.markdown).toContain('# a comment, not a page');
  });

  it('property: any text splits into at most MAX_LLMS_FULL_PAGES pages with parseable URLs, never throwing, losing no heading', () => {
    fc.assert(
      fc.property(text, (t) => {
        const pages = splitLlmsFull(t, FULL, onSite);
        expect(pages.length).toBeLessThanOrEqual(MAX_LLMS_FULL_PAGES);
        for (const p of pages) {
          const u = new URL(p.url);
          if (p.sourced) expect(onSite(u)).toBe(true);
          else expect(u.href.startsWith(FULL)).toBe(true);
        }
        // Only source lines are taken out: every other line of the file is in some page.
        const kept = pages.map((p) => p.markdown).join('\n');
        for (const line of t.split('\n')) if (line.startsWith('# ') && line.length < 4000) expect(kept).toContain(line);
      }),
      { numRuns: 300 },
    );
  });

  it('slugs are anchors: lower case words joined by hyphens, never empty', () => {
    expect(slugOf('Getting `started` with X!')).toBe('getting-started-with-x');
    expect(slugOf('***')).toBe('page');
  });
});

describe('markdown twins', () => {
  const PAGE = 'https://docs.example.com/guide/page.html';

  it('finds the markdown alternate in the head, whatever the attribute order and quoting', () => {
    expect(findMarkdownAlternate('<head><link rel="stylesheet" href="a.css"><link type="text/markdown" rel="alternate" href="page.md"></head>', PAGE)).toBe('https://docs.example.com/guide/page.md');
    expect(findMarkdownAlternate(`<link rel='alternate nofollow' type='text/markdown; charset=utf-8' href='/x.md?a=1&amp;b=2'>`, PAGE)).toBe('https://docs.example.com/x.md?a=1&b=2');
    expect(findMarkdownAlternate('<head><link rel="alternate" type="application/rss+xml" href="/feed"></head>', PAGE)).toBeNull();
    expect(findMarkdownAlternate('<head></head><body><link rel="alternate" type="text/markdown" href="/late.md"></body>', PAGE)).toBeNull();
    expect(findMarkdownAlternate('<link rel="alternate" type="text/markdown" href="javascript:alert(1)">', PAGE)).toBeNull();
  });

  it('property: any bytes give null or an http(s) URL, never a throw', () => {
    const html = fc.oneof(
      fc.string({ maxLength: 500 }),
      fc.array(fc.constantFrom('<link', ' rel="alternate"', " type='text/markdown'", ' href=', '"/a.md"', '>', '</head>', '<', '=', '"', "'", ' '), { maxLength: 40 }).map((a) => a.join('')),
    );
    fc.assert(
      fc.property(html, (h) => {
        const found = findMarkdownAlternate(Buffer.from(h), PAGE);
        if (found !== null) expect(['http:', 'https:']).toContain(new URL(found).protocol);
      }),
      { numRuns: 500 },
    );
  });

  it('names the convention twin of a page, and maps a twin back to its page', () => {
    expect(twinUrlFor('https://h/docs/')).toBe('https://h/docs/index.html.md');
    expect(twinUrlFor('https://h/docs/page.html')).toBe('https://h/docs/page.html.md');
    expect(twinUrlFor('https://h/docs/page')).toBe('https://h/docs/page.md');
    expect(twinUrlFor('https://h/docs/page.md')).toBeNull();
    expect(twinUrlFor('https://h/docs/page?x=1')).toBeNull();
    expect(pageUrlOfTwin('https://h/docs/index.html.md')).toBe('https://h/docs/');
    expect(pageUrlOfTwin('https://h/docs/page.html.md')).toBe('https://h/docs/page.html');
    expect(pageUrlOfTwin('https://h/docs/page.md')).toBe('https://h/docs/page');
    expect(pageUrlOfTwin('https://h/docs/page.html')).toBeNull();
  });

  it('property: a page round-trips through its twin', () => {
    const segment = fc.stringMatching(/^[a-z0-9_-]{1,12}$/);
    const page = fc.tuple(fc.array(segment, { maxLength: 4 }), fc.constantFrom('', '/', '.html', '.htm')).map(([parts, end]) => `https://h.example/${parts.join('/')}${parts.length > 0 ? end : ''}`);
    fc.assert(
      fc.property(page, (p) => {
        const twin = twinUrlFor(p);
        expect(twin).not.toBeNull();
        expect(pageUrlOfTwin(twin!)).toBe(new URL(p).href);
      }),
    );
  });

  it('takes a twin answer as markdown only when it is markdown, not an HTML shell', () => {
    expect(twinContentType('text/markdown', 'https://h/a')).toBe('text/markdown; charset=utf-8');
    expect(twinContentType('text/plain; charset=ISO-8859-1', 'https://h/a.md')).toBe('text/markdown; charset=ISO-8859-1');
    expect(twinContentType('text/html', 'https://h/a.md')).toBeNull();
    expect(twinContentType('text/plain', 'https://h/a')).toBeNull();
  });
});
