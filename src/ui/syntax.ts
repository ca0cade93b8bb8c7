import { tokenizeCode } from '../core/syntax.js';
import type { SyntaxToken } from '../core/syntax.js';

/** The dashboard's side of the one tokenizer (`core/syntax.ts`); `components/CodeView.tsx` renders its tokens. */
export { highlightLine } from '../core/syntax.js';
export type { SyntaxToken, TokenKind } from '../core/syntax.js';

/** Tokens per line, with tabs as four spaces: Ink measures columns, and a tab's width depends on the terminal. */
export function highlight(code: string, language: string): SyntaxToken[][] {
  return tokenizeCode(code.replace(/\t/g, '    '), language);
}
