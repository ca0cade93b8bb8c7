import { tokenizeCode } from '../core/syntax.js';
import type { TokenKind } from '../core/syntax.js';

/**
 * Syntax colour for code in a terminal: the one tokenizer (`core/syntax.ts`, shared with the dashboard) rendered
 * as ANSI, in the dashboard's colours.
 */

const ESC = '\u001b[';
export const ansi = {
  bold: (s: string) => `${ESC}1m${s}${ESC}22m`,
  dim: (s: string) => `${ESC}2m${s}${ESC}22m`,
  underline: (s: string) => `${ESC}4m${s}${ESC}24m`,
  cyan: (s: string) => `${ESC}36m${s}${ESC}39m`,
  green: (s: string) => `${ESC}32m${s}${ESC}39m`,
  yellow: (s: string) => `${ESC}33m${s}${ESC}39m`,
  magenta: (s: string) => `${ESC}35m${s}${ESC}39m`,
  gray: (s: string) => `${ESC}90m${s}${ESC}39m`,
};

const COLOUR: Record<TokenKind, ((s: string) => string) | undefined> = {
  keyword: ansi.magenta,
  string: ansi.green,
  number: ansi.yellow,
  comment: ansi.gray,
  punctuation: undefined,
  plain: undefined,
};

/** The code with ANSI colours around its tokens; the text is unchanged. */
export function highlight(code: string, language: string): string {
  return tokenizeCode(code, language)
    .map((line) => line.map((t) => COLOUR[t.kind]?.(t.text) ?? t.text).join(''))
    .join('\n');
}
