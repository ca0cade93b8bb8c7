import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fenceFor, formatSnippet } from '../../src/core/mcp/format.js';
import { markdownBlocks, packBlocks } from '../../src/core/mcp/markdown-chunks.js';
import { countTokens, truncateCode } from '../../src/core/mcp/tokens.js';

/** True when every fence opened in `text` is closed again (CommonMark rules for ``` and ~~~ fences). */
function fencesBalanced(text: string): boolean {
  let open: { char: string; length: number } | undefined;
  for (const line of text.split('\n')) {
    const m = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (!m) continue;
    if (!open) {
      if (m[1]!.startsWith('`') && m[2]!.includes('`')) continue;
      open = { char: m[1]![0]!, length: m[1]!.length };
    } else if (m[1]![0] === open.char && m[1]!.length >= open.length && m[2]!.trim() === '') {
      open = undefined;
    }
  }
  return open === undefined;
}

const word = fc.constantFrom('alpha', 'beta', 'gamma', 'delta', 'route', 'handler', 'request', 'token', 'café', '数据', 'x');
const sentence = fc.array(word, { minLength: 3, maxLength: 30 }).map((ws) => `${ws.join(' ')}.`);
const paragraph = fc.array(sentence, { minLength: 1, maxLength: 6 }).map((ss) => ss.join(' '));
const heading = fc.tuple(fc.integer({ min: 1, max: 4 }), sentence).map(([level, s]) => `${'#'.repeat(level)} ${s}`);
const codeLine = fc.array(word, { minLength: 1, maxLength: 12 }).map((ws) => `    call(${ws.join(', ')})`);
const fence = fc
  .tuple(fc.constantFrom('```', '````', '~~~'), fc.constantFrom('python', 'js', ''), fc.array(fc.oneof(codeLine, fc.constant(''), fc.constant('```inner')), { minLength: 1, maxLength: 80 }))
  .map(([marker, lang, lines]) => {
    // A ``` line inside a ```` fence (or a ~~~ fence) is content, not a closing fence.
    const body = marker === '```' ? lines.map((l) => (l === '```inner' ? '  `inner`' : l)) : lines;
    return `${marker}${lang}\n${body.join('\n')}\n${marker}`;
  });
const markdown = fc.array(fc.oneof(paragraph, heading, fence), { minLength: 1, maxLength: 30 }).map((bs) => bs.join('\n\n'));

describe('markdown chunking', () => {
  it('never leaves a code fence open in a chunk and keeps chunks within the budget', () => {
    fc.assert(
      fc.property(markdown, fc.integer({ min: 60, max: 800 }), (md, budget) => {
        const blocks = markdownBlocks(md, budget);
        const chunks = packBlocks(blocks, budget);
        for (const chunk of chunks) {
          expect(fencesBalanced(chunk.text)).toBe(true);
          expect(chunk.tokens).toBe(countTokens(chunk.text));
          expect(chunk.tokens).toBeLessThanOrEqual(budget);
        }
        // Chunks cover every block once, in order.
        chunks.forEach((c, i) => {
          expect(c.start).toBe(i === 0 ? 0 : chunks[i - 1]!.end);
          expect(c.end).toBeGreaterThan(c.start);
        });
        expect(chunks.at(-1)?.end ?? 0).toBe(blocks.length);
      }),
      { numRuns: 150 },
    );
  });

  it('breaks between paragraphs and keeps a heading with the section it introduces', () => {
    const para = (n: number) => `Paragraph ${n} ${'words about routing and handlers '.repeat(12)}`;
    const md = [`# Title`, para(1), para(2), `## Second section`, para(3), para(4)].join('\n\n');
    const chunks = packBlocks(markdownBlocks(md, 150), 150);
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) {
      expect(c.text.trimEnd().split('\n').at(-1)).not.toMatch(/^#/);
      // Every chunk starts at a block boundary: a heading or the start of a paragraph.
      expect(c.text).toMatch(/^(#|Paragraph \d)/);
    }
  });

  it('keeps a code block whole when it fits, and splits one that does not into closed fences', () => {
    const small = '```python\nprint("hi")\n```';
    const md = `Intro paragraph.\n\n${small}\n\nOutro.`;
    const blocks = markdownBlocks(md, 4000);
    expect(blocks.map((b) => b.text)).toEqual(['Intro paragraph.', small, 'Outro.']);

    const big = `\`\`\`python\n${Array.from({ length: 300 }, (_, i) => `value_${i} = compute(${i})`).join('\n')}\n\`\`\``;
    const pieces = markdownBlocks(big, 200);
    expect(pieces.length).toBeGreaterThan(3);
    for (const p of pieces) {
      expect(p.text.startsWith('```python\n')).toBe(true);
      expect(p.text.endsWith('\n```')).toBe(true);
      expect(p.tokens).toBeLessThanOrEqual(200);
    }
    const lines = pieces.flatMap((p) => p.text.split('\n').slice(1, -1));
    expect(lines).toHaveLength(300);
  });

  it('closes a fence the page never closed', () => {
    const blocks = markdownBlocks('Text.\n\n```js\nconst a = 1;', 1000);
    expect(blocks.at(-1)!.text).toBe('```js\nconst a = 1;\n```');
  });
});

describe('snippet formatting', () => {
  it('uses a fence longer than any backtick run in the code', () => {
    expect(fenceFor('plain')).toBe('```');
    expect(fenceFor('a ``` b')).toBe('````');
    const text = formatSnippet({ id: 1, title: 'Nested', description: '', language: 'markdown', code: '```js\nx\n```', source_url: 'https://x.test/a' }, 1, 500);
    expect(text).toContain('````markdown\n```js\nx\n```\n````');
  });

  it('cuts long code on a line boundary with a visible marker naming the page', () => {
    const code = Array.from({ length: 200 }, (_, i) => `line_${i} = value(${i})`).join('\n');
    const cut = truncateCode(code, 100);
    expect(cut.truncated).toBe(true);
    expect(cut.keptTokens).toBeLessThanOrEqual(100);
    expect(code.startsWith(cut.text)).toBe(true);
    expect(cut.text.endsWith(')')).toBe(true);
    const text = formatSnippet({ id: 2, title: 'Long', description: 'd', language: 'python', code, source_url: 'https://x.test/p#s' }, 3, 100);
    expect(text).toMatch(/\[… code truncated: showing \d+ of \d+ tokens, \d+ more lines not shown\. Full code: call get_page_markdown with url="https:\/\/x\.test\/p#s"\.\]/);
  });
});
