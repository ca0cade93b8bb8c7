/**
 * A small, language-agnostic highlighter for the snippet view: comments, strings, numbers and the keywords of
 * the languages docdex indexes most. It never parses, so it cannot fail on odd input; a wrong colour is the
 * worst case, which is acceptable for a preview (the stored code is shown verbatim).
 */
export type TokenKind = 'keyword' | 'string' | 'number' | 'comment' | 'punctuation' | 'plain';
export interface SyntaxToken {
  kind: TokenKind;
  text: string;
}

const KEYWORDS = new Set(
  (
    'abstract and as async await break case catch class const continue def default defer del do elif else enum ' +
    'except export extends false final finally fn for from func function go if impl import in interface is let ' +
    'match mod module mut new nil none not null of or package pass private protected pub public raise return ' +
    'self select static struct super switch this throw throws true try type typeof use var void while with yield ' +
    'None True False SELECT FROM WHERE INSERT INTO UPDATE DELETE CREATE TABLE INDEX VALUES JOIN ON AND OR NOT NULL ' +
    'AS ORDER BY GROUP LIMIT BEGIN COMMIT'
  ).split(' '),
);

const HASH_COMMENT = new Set(['python', 'py', 'bash', 'sh', 'shell', 'zsh', 'ruby', 'rb', 'yaml', 'yml', 'toml', 'r', 'perl', 'make', 'makefile', 'dockerfile', 'powershell', 'console', 'ini', 'conf']);
const DASH_COMMENT = new Set(['sql', 'plpgsql', 'pgsql', 'postgresql', 'lua', 'haskell']);

function commentStarts(language: string): string[] {
  const l = language.toLowerCase();
  if (HASH_COMMENT.has(l)) return ['#'];
  if (DASH_COMMENT.has(l)) return ['--', '/*'];
  if (l === 'text' || l === '') return [];
  return ['//', '/*'];
}

/** Tokenises one line; block comments spanning lines are carried by `inBlock`. */
export function highlightLine(line: string, language: string, state: { inBlock: boolean } = { inBlock: false }): SyntaxToken[] {
  const tokens: SyntaxToken[] = [];
  const starts = commentStarts(language);
  const push = (kind: TokenKind, text: string) => {
    if (!text) return;
    const last = tokens.at(-1);
    if (last && last.kind === kind) last.text += text;
    else tokens.push({ kind, text });
  };
  let i = 0;
  while (i < line.length) {
    if (state.inBlock) {
      const end = line.indexOf('*/', i);
      if (end === -1) {
        push('comment', line.slice(i));
        return tokens;
      }
      push('comment', line.slice(i, end + 2));
      i = end + 2;
      state.inBlock = false;
      continue;
    }
    const rest = line.slice(i);
    const comment = starts.find((s) => rest.startsWith(s));
    if (comment === '/*') {
      state.inBlock = true;
      push('comment', '/*');
      i += 2;
      continue;
    }
    if (comment) {
      push('comment', rest);
      return tokens;
    }
    const ch = line[i]!;
    if (ch === '"' || ch === "'" || ch === '`') {
      let j = i + 1;
      while (j < line.length && line[j] !== ch) j += line[j] === '\\' ? 2 : 1;
      push('string', line.slice(i, Math.min(j + 1, line.length)));
      i = j + 1;
      continue;
    }
    const word = /^[A-Za-z_$][\w$]*/.exec(rest);
    if (word) {
      push(KEYWORDS.has(word[0]) ? 'keyword' : 'plain', word[0]);
      i += word[0].length;
      continue;
    }
    const number = /^(0x[\da-fA-F]+|\d+(\.\d+)?([eE][+-]?\d+)?)/.exec(rest);
    if (number) {
      push('number', number[0]);
      i += number[0].length;
      continue;
    }
    push(/[{}()[\];,.:=<>+\-*/%!&|^~?]/.test(ch) ? 'punctuation' : 'plain', ch);
    i += 1;
  }
  return tokens;
}

export function highlight(code: string, language: string): SyntaxToken[][] {
  const state = { inBlock: false };
  return code.split('\n').map((line) => highlightLine(line.replace(/\t/g, '    '), language, state));
}
