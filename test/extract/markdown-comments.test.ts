import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitMarkdownComments } from '../../src/core/extract/markdown-comments.js';

/** HTML comments leave a markdown page's text (markdown-comments.ts); code is kept as written. */

describe('splitMarkdownComments', () => {
  it('removes comments from prose, whole lines and across lines, and keeps code blocks, indented code and code spans', () => {
    const text = [
      '# Title',
      '<!-- badges -->',
      'Before <!-- a --> after <!-- b -->.',
      '<!--',
      'Hidden over',
      'three lines -->',
      'Kept `<!-- span -->` and ``x <!-- y --> ` z``.',
      '',
      '~~~~',
      '<!-- fenced -->',
      '```',
      '~~~~',
      '',
      '    <!-- indented code -->',
      'End.',
    ].join('\n');
    const { text: out, comments } = splitMarkdownComments(text);
    expect(out).toBe(
      ['# Title', 'Before  after .', 'Kept `<!-- span -->` and ``x <!-- y --> ` z``.', '', '~~~~', '<!-- fenced -->', '```', '~~~~', '', '    <!-- indented code -->', 'End.'].join('\n'),
    );
    expect(comments).toEqual([' badges ', ' a ', ' b ', '\nHidden over\nthree lines ']);
  });

  it('leaves a comment that is never closed as text, and text without comments untouched', () => {
    expect(splitMarkdownComments('Intro\n<!-- open\nstill text')).toEqual({ text: 'Intro\n<!-- open\nstill text', comments: [] });
    expect(splitMarkdownComments('a -- b --> c')).toEqual({ text: 'a -- b --> c', comments: [] });
  });

  // Prose lines never open a fence; they may hold a code span.
  const prose = fc.tuple(fc.stringMatching(/^[a-z][a-z .-]{0,20}$/), fc.constantFrom('', ' `a <!-- b --> c`')).map(([t, span]) => t + span);
  const body = fc.stringMatching(/^[a-z \n]{0,20}$/);
  const fenced = fc.tuple(fc.constantFrom('```', '~~~', '````'), fc.array(fc.oneof(prose, fc.constant('<!-- in code -->')), { maxLength: 3 })).map(([f, lines]) => [f, ...lines, f].join('\n'));

  it('keeps every fenced block byte for byte, takes out every comment in prose, and is idempotent (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            prose,
            fenced,
            body.map((b) => `<!--${b}-->`),
          ),
          { maxLength: 12 },
        ),
        (parts) => {
          const text = parts.join('\n');
          const { text: out, comments } = splitMarkdownComments(text);
          for (const part of parts) if (/^(```|~~~)/.test(part)) expect(out).toContain(part);
          expect(comments.length).toBe(parts.filter((p) => p.startsWith('<!--')).length);
          const outside = parts.filter((p) => /^(```|~~~)/.test(p)).reduce((rest, p) => rest.replace(p, ''), out);
          expect(outside.replace(/`[^`]*`/g, '')).not.toMatch(/<!--[\s\S]*?-->/);
          expect(splitMarkdownComments(out).text).toBe(out);
        },
      ),
    );
  });

  it('answers any input in linear time without throwing (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('<', '!', '-', '>', '`', '~', '\n', ' ', 'a', '\t') }), (text) => {
        const { text: out, comments } = splitMarkdownComments(text);
        expect(out.length).toBeLessThanOrEqual(text.length);
        for (const c of comments) expect(text).toContain(c);
      }),
    );
    const big = '<!-- x '.repeat(50_000);
    expect(splitMarkdownComments(big).text).toBe(big);
  });
});
