/**
 * Light syntax colour for code in a terminal: comments, strings, numbers and the keywords of common languages.
 * Deliberately shallow (one regular expression pass, no grammar): it only has to make code easier to scan.
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

const KEYWORDS = new Set(
  (
    'and as async await break case catch class const continue def default del do elif else enum except export extends ' +
    'false finally fn for from func function go if impl import in interface is lambda let match mod module new nil ' +
    'none not null or package pass pub raise return self static struct super switch this throw trait true try type ' +
    'typeof use var void while with yield ' +
    // SQL, which documentation writes in upper case
    'select insert update delete into values where join left right inner outer on group by order having limit ' +
    'offset create table index view alter drop primary key references returning begin commit rollback union all ' +
    'distinct set grant revoke'
  ).split(' '),
);

const HASH_COMMENT = new Set(['python', 'shell', 'console', 'ruby', 'yaml', 'toml', 'ini', 'dockerfile']);
const DASH_COMMENT = new Set(['sql']);

function tokenPattern(language: string): RegExp {
  const comment = HASH_COMMENT.has(language) ? '#[^\\n]*' : DASH_COMMENT.has(language) ? '--[^\\n]*' : '\\/\\/[^\\n]*|\\/\\*[\\s\\S]*?\\*\\/';
  return new RegExp(`(${comment})|("(?:[^"\\\\\\n]|\\\\.)*"|'(?:[^'\\\\\\n]|\\\\.)*'|\`(?:[^\`\\\\]|\\\\.)*\`)|(\\b\\d+(?:\\.\\d+)?\\b)|([A-Za-z_][A-Za-z0-9_]*)`, 'g');
}

export function highlight(code: string, language: string): string {
  return code.replace(tokenPattern(language), (match, comment?: string, string?: string, num?: string, word?: string) => {
    if (comment) return ansi.gray(match);
    if (string) return ansi.green(match);
    if (num) return ansi.yellow(match);
    if (word && KEYWORDS.has(word.toLowerCase()) && (language === 'sql' || word === word.toLowerCase() || /^(True|False|None)$/.test(word))) {
      return ansi.magenta(match);
    }
    return match;
  });
}
