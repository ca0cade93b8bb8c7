import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { extractDocument } from '../../src/core/extract/index.js';
import { NotebookError, notebookToMarkdown } from '../../src/core/extract/ipynb.js';

const notebook = {
  nbformat: 4,
  metadata: { kernelspec: { language: 'python', name: 'python3' }, language_info: { name: 'python' } },
  cells: [
    { cell_type: 'markdown', source: ['# Plotting\n', '\n', 'Draw a line with `plot`.'] },
    { cell_type: 'code', source: 'import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])', outputs: [{ output_type: 'stream', text: 'SECRET_OUTPUT' }] },
    { cell_type: 'code', source: '' },
  ],
};

describe('notebookToMarkdown', () => {
  it('renders markdown cells as text and code cells as fenced code in the kernel language, without outputs', () => {
    const markdown = notebookToMarkdown(JSON.stringify(notebook));
    expect(markdown).toBe('# Plotting\n\nDraw a line with `plot`.\n\n```python\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\n```\n');
    expect(markdown).not.toContain('SECRET_OUTPUT');
  });

  it('fences code that contains backticks with a longer fence', () => {
    const nb = { cells: [{ cell_type: 'code', source: 'print("```")' }], metadata: { language_info: { name: 'python' } } };
    expect(notebookToMarkdown(JSON.stringify(nb))).toBe('````python\nprint("```")\n````\n');
  });

  it('refuses what is not a notebook with a NotebookError', () => {
    expect(() => notebookToMarkdown('{')).toThrow(NotebookError);
    expect(() => notebookToMarkdown('[1]')).toThrow(NotebookError);
    expect(() => notebookToMarkdown('{"a":1}')).toThrow(/no cells/);
  });

  it('any text gives markdown or a NotebookError, never another kind of throw (property)', () => {
    const cell = fc.record(
      { cell_type: fc.oneof(fc.constantFrom('code', 'markdown', 'raw'), fc.anything()), source: fc.oneof(fc.string(), fc.array(fc.oneof(fc.string(), fc.anything())), fc.anything()) },
      { requiredKeys: [] },
    );
    const nbArb = fc.record({ cells: fc.oneof(fc.array(cell), fc.anything()), metadata: fc.anything(), worksheets: fc.anything() }, { requiredKeys: [] });
    const input = fc.oneof(
      fc.string(),
      nbArb.map((nb) => JSON.stringify(nb)),
      fc.uint8Array().map((b) => Buffer.from(b).toString('latin1')),
    );
    fc.assert(
      fc.property(input, (text) => {
        try {
          expect(typeof notebookToMarkdown(text)).toBe('string');
        } catch (error) {
          expect(error).toBeInstanceOf(NotebookError);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('extractDocument and notebooks', () => {
  it('extracts the code cells of an .ipynb as snippets in the kernel language', () => {
    const result = extractDocument({ url: 'https://github.com/o/r/blob/abc/docs/plot.ipynb', contentType: 'application/x-ipynb+json', body: JSON.stringify(notebook) });
    expect(result.page.title).toBe('Plotting');
    expect(result.snippets.map((s) => [s.language, s.code])).toEqual([['python', 'import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])']]);
  });

  it('records a broken notebook with its error instead of throwing (any bytes, property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), (bytes) => {
        const result = extractDocument({ url: 'file:///x/n.ipynb', body: bytes });
        expect(result.page.format).toBe('markdown');
      }),
      { numRuns: 300 },
    );
    expect(extractDocument({ url: 'file:///x/n.ipynb', body: 'nope' }).error).toMatch(/NotebookError: not a Jupyter notebook/);
  });
});
