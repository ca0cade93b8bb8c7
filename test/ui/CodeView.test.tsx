import { afterEach, describe, expect, it } from 'vitest';
import { CodeView } from '../../src/ui/components/CodeView.js';
import { highlight, highlightLine } from '../../src/ui/syntax.js';
import { lines, renderWithProviders } from './render.js';

let view: ReturnType<typeof renderWithProviders> | undefined;
afterEach(() => view?.unmount());

const code = 'def f():\n    # note\n    return "x" + 1\nline4\nline5';

describe('CodeView', () => {
  it('shows the code verbatim, cut to the height, from the offset', () => {
    view = renderWithProviders(<CodeView code={code} language="python" width={40} height={2} offset={1} />);
    expect(lines(view.lastFrame())).toEqual(['    # note', '    return "x" + 1']);
  });

  it('truncates long lines instead of wrapping them', () => {
    view = renderWithProviders(<CodeView code={'x'.repeat(100)} language="text" width={20} height={3} />);
    expect(lines(view.lastFrame())).toEqual([`${'x'.repeat(19)}…`]);
  });
});

describe('syntax highlighting', () => {
  it('classifies keywords, strings, numbers and comments', () => {
    const tokens = highlightLine('return "x" + 1 # done', 'python');
    expect(tokens).toEqual([
      { kind: 'keyword', text: 'return' },
      { kind: 'plain', text: ' ' },
      { kind: 'string', text: '"x"' },
      { kind: 'plain', text: ' ' },
      { kind: 'punctuation', text: '+' },
      { kind: 'plain', text: ' ' },
      { kind: 'number', text: '1' },
      { kind: 'plain', text: ' ' },
      { kind: 'comment', text: '# done' },
    ]);
  });

  it('uses the comment syntax of the language', () => {
    expect(highlightLine('a # b', 'javascript').some((t) => t.kind === 'comment')).toBe(false);
    expect(highlightLine('a // b', 'javascript').at(-1)).toEqual({ kind: 'comment', text: '// b' });
    expect(highlightLine('SELECT 1 -- b', 'sql').at(-1)).toEqual({ kind: 'comment', text: '-- b' });
  });

  it('carries block comments across lines and survives unterminated strings', () => {
    const out = highlight('a /* b\nc */ d\n"open', 'c');
    expect(out[1]![0]).toEqual({ kind: 'comment', text: 'c */' });
    expect(out[2]).toEqual([{ kind: 'string', text: '"open' }]);
  });
});
