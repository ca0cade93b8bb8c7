import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { extractDocument } from '../../src/core/extract/index.js';
import { MARKDOWN_CHUNK_CHARS, markdownChunks } from '../../src/core/extract/markdown-chunks.js';
import { limitNesting } from '../../src/core/extract/markdown.js';

/** Nested list items, each one level (two columns) deeper than the last, up to `bytes`. */
function nestedList(bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let depth = 0; size < bytes; depth++) {
    const line = `${'  '.repeat(depth)}- item ${depth}`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n');
}

/** One long list whose items hold a nested list each: micromark copies its events at every inner close. */
function longList(bytes: number): string {
  return '- item one\n  - nested item\n\n'.repeat(Math.ceil(bytes / 28));
}

/**
 * The CPU time of the fastest of three extractions. CPU time, not wall time: other processes on a loaded
 * machine take wall time but not this process's CPU; and a pause of the process (GC) only ever adds time.
 */
function extractCpuMs(body: string): number {
  let fastest = Infinity;
  for (let run = 0; run < 3; run++) {
    const started = process.cpuUsage();
    const r = extractDocument({ url: 'https://docs.example.test/deep.md', body });
    expect(r.error).toBeUndefined();
    const used = process.cpuUsage(started);
    fastest = Math.min(fastest, (used.user + used.system) / 1000);
  }
  return fastest;
}

describe('markdown nesting budget', () => {
  it('flattens list markers indented past the budget, leaving shallower documents unchanged', () => {
    const shallow = nestedList(900);
    expect(limitNesting(shallow)).toBe(shallow);
    const deep = limitNesting(nestedList(200_000));
    const widest = Math.max(...deep.split('\n').map((l) => l.length - l.trimStart().length));
    expect(widest).toBeLessThanOrEqual(64);
    expect(limitNesting('\t'.repeat(20) + '- tabbed')).toBe(' '.repeat(64) + '- tabbed');
  });

  it('keeps the text of a deeply nested list', () => {
    const r = extractDocument({ url: 'https://docs.example.test/deep.md', body: `${nestedList(100_000)}\n\n\`\`\`js\nconst last = 1;\n\`\`\`\n` });
    expect(r.page.markdown).toContain('- item 300');
    expect(r.snippets.map((s) => s.code)).toContain('const last = 1;');
  });

  // Time per byte stays flat as documents grow (it fell with size here, as the JIT warms). Before the budget, a
  // 4x larger nested list cost 8x to 16x more: quadratic, which at 8x the size is up to 8x per byte. The bound
  // of 3 per byte sits between that and flat.
  it('extracts nested lists and long lists of nested lists in time linear in their size', () => {
    for (const make of [nestedList, longList]) {
      extractCpuMs(make(16_000));
      const small = extractCpuMs(make(64_000)) / 64;
      const large = extractCpuMs(make(512_000)) / 512;
      expect(large / small, make.name).toBeLessThan(3);
    }
  }, 300_000);
});

describe('markdown chunks', () => {
  it('parses a short document whole', () => {
    expect(markdownChunks('# Title\n\n- a\n  - b\n')).toEqual(['# Title\n\n- a\n  - b\n']);
  });

  it('cuts a long document only where every block is closed, never inside a fence', () => {
    const fence = '```\nfirst\n\nat column zero\n```\n\n';
    const body = `${fence}${'- item\n  - nested\n\n'.repeat(4_000)}${fence}`;
    const chunks = markdownChunks(body);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.join('')).toBe(body);
    for (const chunk of chunks.slice(0, -1)) expect(chunk.length).toBeGreaterThanOrEqual(MARKDOWN_CHUNK_CHARS);
    for (const chunk of chunks) expect((chunk.match(/```/g) ?? []).length % 2).toBe(0);
  });

  it('copies reference definitions into every chunk, so reference links read as their text', () => {
    const body = `Read the [guide][] first.\n\n\`\`\`js\nrun();\n\`\`\`\n\n${'- item\n  - nested\n\n'.repeat(4_000)}[guide]: https://docs.example.test/guide\n`;
    const chunks = markdownChunks(body);
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) expect(chunk).toContain('[guide]: https://docs.example.test/guide');
    const r = extractDocument({ url: 'https://docs.example.test/guide.md', body });
    expect(r.snippets[0]?.description).toBe('Read the guide first.');
  });

  it('property: without definitions, the chunks put together are the document', () => {
    const piece = fc.constantFrom('- a\n', '  - b\n', '\n', '```\n', '~~~\n', '<pre>\n', '</pre>\n', '> q\n', '# h\n', 'text\n', '---\n', '<!--\n', '-->\n', '\t- t\n');
    fc.assert(
      fc.property(fc.array(piece, { minLength: 0, maxLength: 400 }), fc.integer({ min: 1, max: 200 }), (pieces, repeat) => {
        const body = pieces.join('').repeat(repeat);
        expect(markdownChunks(body).join('')).toBe(body);
      }),
      { numRuns: 200 },
    );
  });
});
