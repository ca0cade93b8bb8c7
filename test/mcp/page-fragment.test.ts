import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { extractDocument } from '../../src/core/extract/index.js';
import { markdownBlocks } from '../../src/core/mcp/markdown-chunks.js';
import { fragmentRange } from '../../src/core/mcp/page-fragment.js';

/** The section a URL fragment names (get_page_markdown), against the anchors the extractor gives snippets. */

const PAGE = [
  '# lib',
  '',
  '[![badge](https://img.shields.io/x.svg)](https://ci.example)',
  '',
  '## Usage',
  '',
  '```js\nlib.first()\n```',
  '',
  '### Options `opts`',
  '',
  '```js\nlib.options({ a: 1 })\n```',
  '',
  '## Usage',
  '',
  '```js\nlib.second()\n```',
  '',
  '## Custom place {#here}',
  '',
  '```js\nlib.custom()\n```',
  '',
  '**lib.term(x)**',
  '',
  'A term.',
].join('\n');

function textOf(fragment: string, codes: string[] = []): string | undefined {
  const blocks = markdownBlocks(PAGE, 4000);
  const range = fragmentRange(blocks, fragment, codes);
  return (
    range &&
    blocks
      .slice(range.start, range.end)
      .map((b) => b.text)
      .join('\n\n')
  );
}

describe('fragmentRange', () => {
  it('finds each anchor the markdown extractor gave a snippet, with the sections nested under it', () => {
    const extracted = extractDocument({ url: 'https://x.example/README.md', contentType: 'text/markdown', body: PAGE });
    const anchors = new Map(extracted.snippets.map((s) => [s.code.trim(), s.sourceUrl.split('#')[1]]));
    expect(anchors.get('lib.first()')).toBe('usage');
    expect(anchors.get('lib.second()')).toBe('usage-1');
    for (const snippet of extracted.snippets) {
      const fragment = snippet.sourceUrl.split('#')[1]!;
      // Found by the heading's slug alone, without the snippets' code.
      expect(textOf(fragment), fragment).toContain(snippet.code.trim());
    }
    expect(textOf('usage')).toContain('lib.options({ a: 1 })');
    expect(textOf('usage')).not.toContain('lib.second()');
    expect(textOf('usage')).not.toContain('img.shields.io');
    expect(textOf('here')).toContain('lib.custom()');
  });

  it("finds an HTML id that is not a slug through the code of the snippets that carry it, else by the heading's words", () => {
    expect(textOf('module-lib.second', ['lib.second()'])).toContain('lib.second()');
    expect(textOf('module-lib.second', ['lib.second()'])).not.toContain('lib.first()');
    expect(textOf('lib.term')).toContain('A term.');
    expect(textOf('nothing-like-it')).toBeUndefined();
    expect(textOf('%E0%A4%A')).toBeUndefined();
  });

  it('never throws and stays within the page, for any page and fragment', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), fc.string({ maxLength: 40 }), fc.array(fc.string({ maxLength: 40 }), { maxLength: 3 }), (markdown, fragment, codes) => {
        const blocks = markdownBlocks(markdown, 200);
        const range = fragmentRange(blocks, fragment, codes);
        if (range) {
          expect(range.start).toBeGreaterThanOrEqual(0);
          expect(range.end).toBeLessThanOrEqual(blocks.length);
          expect(range.start).toBeLessThan(range.end);
        }
      }),
      { numRuns: 500 },
    );
  });
});
