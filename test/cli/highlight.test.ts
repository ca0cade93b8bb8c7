import { stripVTControlCharacters } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ansi, highlight } from '../../src/cli/highlight.js';
import { tokenizeCode } from '../../src/core/syntax.js';
import { highlight as inkTokens } from '../../src/ui/syntax.js';

/** The CLI's ANSI colours and the dashboard's tokens come from one tokenizer (core/syntax.ts). */

const languages = fc.constantFrom('python', 'javascript', 'sql', 'c', 'bash', 'text', '', 'rust');

describe('one highlighter for the CLI and the dashboard', () => {
  it('never changes the code: without its colours it is the input, for any text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), languages, (code, language) => {
        expect(stripVTControlCharacters(highlight(code, language))).toBe(stripVTControlCharacters(code));
        expect(
          tokenizeCode(code, language)
            .map((line) => line.map((t) => t.text).join(''))
            .join('\n'),
        ).toBe(code);
      }),
    );
  });

  it('colours what the dashboard colours, in the same kinds', () => {
    const code = 'def f():\n    return "x" + 1  # done';
    expect(highlight(code, 'python')).toBe(`${ansi.magenta('def')} f():\n    ${ansi.magenta('return')} ${ansi.green('"x"')} + ${ansi.yellow('1')}  ${ansi.gray('# done')}`);
    expect(inkTokens(code, 'python')).toEqual(tokenizeCode(code, 'python'));
  });

  it('reads SQL keywords in either case, and block comments across lines', () => {
    expect(highlight('select id from t', 'sql')).toBe(`${ansi.magenta('select')} id ${ansi.magenta('from')} t`);
    expect(highlight('const index = 1', 'javascript')).toBe(`${ansi.magenta('const')} index = ${ansi.yellow('1')}`);
    expect(highlight('a /* b\nc */ d', 'c')).toBe(`a ${ansi.gray('/* b')}\n${ansi.gray('c */')} d`);
  });
});
