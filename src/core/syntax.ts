/**
 * The one syntax tokenizer, for the CLI's search results (ANSI, `cli/highlight.ts`) and the dashboard's snippet
 * view (Ink, `ui/components/CodeView.tsx`): comments, strings, numbers and the keywords of the languages docdex
 * indexes most. It never parses, so it cannot fail on odd input; a wrong colour is the worst case, which is
 * acceptable for a preview (the stored code is shown verbatim). Pure: no colours, no terminal, no React.
 */
export type TokenKind = 'keyword' | 'string' | 'number' | 'comment' | 'punctuation' | 'plain';
export interface SyntaxToken {
  kind: TokenKind;
  text: string;
}

const KEYWORDS = new Set(
  (
    'abstract and as async await break case catch class const continue def default defer del do elif else enum ' +
    'except export extends false final finally fn for from func function go if impl import in interface is lambda let ' +
    'match mod module mut new nil none not null of or package pass private protected pub public raise return ' +
    'self select static struct super switch this throw throws trait true try type typeof use var void while with yield ' +
    'None True False SELECT FROM WHERE INSERT INTO UPDATE DELETE CREATE TABLE INDEX VALUES JOIN ON AND OR NOT NULL ' +
    'AS ORDER BY GROUP LIMIT BEGIN COMMIT'
  ).split(' '),
);

// SQL, which documentation writes in either case: in SQL code these are keywords however they are spelled.
const SQL_KEYWORDS = new Set(
  (
    'select insert update delete into values where join left right inner outer on group by order having limit ' +
    'offset create table index view alter drop primary key references returning begin commit rollback union all ' +
    'distinct set grant revoke and or not null as in is from with case when then else end'
  ).split(' '),
);

const HASH_COMMENT = new Set([
  'python',
  'py',
  'bash',
  'sh',
  'shell',
  'zsh',
  'ruby',
  'rb',
  'yaml',
  'yml',
  'toml',
  'r',
  'perl',
  'make',
  'makefile',
  'dockerfile',
  'powershell',
  'console',
  'ini',
  'conf',
]);
const DASH_COMMENT = new Set(['sql', 'plpgsql', 'pgsql', 'postgresql', 'lua', 'haskell']);
const SQL = new Set(['sql', 'plpgsql', 'pgsql', 'postgresql']);

function commentStarts(language: string): string[] {
  const l = language.toLowerCase();
  if (HASH_COMMENT.has(l)) return ['#'];
  if (DASH_COMMENT.has(l)) return ['--', '/*'];
  if (l === 'text' || l === '') return [];
  return ['//', '/*'];
}

function isKeyword(word: string, sql: boolean): boolean {
  return KEYWORDS.has(word) || (sql && SQL_KEYWORDS.has(word.toLowerCase()));
}

/** The end of a string opened by the quote at `start`: after its closing quote, or the end of the line. */
function stringEnd(line: string, start: number): number {
  const quote = line[start];
  let j = start + 1;
  while (j < line.length && line[j] !== quote) j += line[j] === '\\' ? 2 : 1;
  return Math.min(j + 1, line.length);
}

/** The kind and length of the token (other than a comment) that starts at `i`. */
function nextToken(line: string, i: number, sql: boolean): [TokenKind, number] {
  const ch = line[i]!;
  if (ch === '"' || ch === "'" || ch === '`') return ['string', stringEnd(line, i) - i];
  const rest = line.slice(i);
  const word = /^[A-Za-z_$][\w$]*/.exec(rest);
  if (word) return [isKeyword(word[0], sql) ? 'keyword' : 'plain', word[0].length];
  const number = /^(0x[\da-fA-F]+|\d+(\.\d+)?([eE][+-]?\d+)?)/.exec(rest);
  if (number) return ['number', number[0].length];
  return [/[{}()[\];,.:=<>+\-*/%!&|^~?]/.test(ch) ? 'punctuation' : 'plain', 1];
}

/** Tokenises one line; block comments spanning lines are carried by `inBlock`. */
export function highlightLine(line: string, language: string, state: { inBlock: boolean } = { inBlock: false }): SyntaxToken[] {
  const tokens: SyntaxToken[] = [];
  const starts = commentStarts(language);
  const sql = SQL.has(language.toLowerCase());
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
      const stop = end === -1 ? line.length : end + 2;
      push('comment', line.slice(i, stop));
      i = stop;
      state.inBlock = end === -1;
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
    const [kind, length] = nextToken(line, i, sql);
    push(kind, line.slice(i, i + length));
    i += length;
  }
  return tokens;
}

/** Tokenises code line by line (block comments carried across lines); the text of the tokens is the code's. */
export function tokenizeCode(code: string, language: string): SyntaxToken[][] {
  const state = { inBlock: false };
  return code.split('\n').map((line) => highlightLine(line, language, state));
}
