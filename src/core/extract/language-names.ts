// Language names: the canonical names docdex stores and the aliases that declare them. Apart from the
// content classifier (language.ts), whose rules are compiled when it loads, so that what only normalises a
// name (a search's --language, the LLM stage's schema) loads no rules.
//
// Canonical names: python, javascript, typescript, shell, console, sql, json,
// yaml, html, xml, css, go, rust, java, c, cpp, csharp, ruby, php, toml,
// dockerfile, diff, ini, markdown, text. Unknown declared names pass through
// lowercased.

const ALIASES: Record<string, string> = {
  py: 'python',
  py3: 'python',
  python3: 'python',
  python2: 'python',
  py2: 'python',
  pycon: 'python',
  pyi: 'python',
  ipython: 'python',
  ipython3: 'python',
  'python-repl': 'python',
  pytb: 'python',
  sage: 'python',
  js: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  jsx: 'javascript',
  node: 'javascript',
  nodejs: 'javascript',
  es6: 'javascript',
  ecmascript: 'javascript',
  'javascript-repl': 'javascript',
  ts: 'typescript',
  tsx: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  sh: 'shell',
  bash: 'shell',
  zsh: 'shell',
  ksh: 'shell',
  fish: 'shell',
  shell: 'shell',
  shellscript: 'shell',
  'shell-script': 'shell',
  posix: 'shell',
  csh: 'shell',
  tcsh: 'shell',
  console: 'console',
  'shell-session': 'console',
  'sh-session': 'console',
  shellsession: 'console',
  'bash-session': 'console',
  terminal: 'console',
  doscon: 'console',
  pwsh_session: 'console',
  ps1con: 'console',
  sql: 'sql',
  psql: 'sql',
  pgsql: 'sql',
  plpgsql: 'sql',
  postgresql: 'sql',
  postgres: 'sql',
  mysql: 'sql',
  sqlite: 'sql',
  sqlite3: 'sql',
  tsql: 'sql',
  plsql: 'sql',
  mssql: 'sql',
  mariadb: 'sql',
  json: 'json',
  json5: 'json',
  jsonc: 'json',
  jsonl: 'json',
  'json-object': 'json',
  javascriptreact: 'javascript',
  typescriptreact: 'typescript',
  yml: 'yaml',
  yaml: 'yaml',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  'html+django': 'html',
  'html+jinja': 'html',
  vue: 'vue',
  xml: 'xml',
  svg: 'xml',
  xsl: 'xml',
  xslt: 'xml',
  docbook: 'xml',
  rss: 'xml',
  atom: 'xml',
  wsdl: 'xml',
  plist: 'xml',
  css: 'css',
  go: 'go',
  golang: 'go',
  rs: 'rust',
  rust: 'rust',
  java: 'java',
  c: 'c',
  h: 'c',
  'c++': 'cpp',
  cpp: 'cpp',
  cxx: 'cpp',
  cc: 'cpp',
  hpp: 'cpp',
  hxx: 'cpp',
  hh: 'cpp',
  cs: 'csharp',
  'c#': 'csharp',
  csharp: 'csharp',
  dotnet: 'csharp',
  rb: 'ruby',
  ruby: 'ruby',
  gemfile: 'ruby',
  podfile: 'ruby',
  php: 'php',
  php3: 'php',
  php4: 'php',
  php5: 'php',
  php7: 'php',
  php8: 'php',
  'html+php': 'php',
  toml: 'toml',
  dockerfile: 'dockerfile',
  docker: 'dockerfile',
  containerfile: 'dockerfile',
  diff: 'diff',
  patch: 'diff',
  udiff: 'diff',
  ini: 'ini',
  cfg: 'ini',
  conf: 'ini',
  dosini: 'ini',
  properties: 'ini',
  editorconfig: 'ini',
  gitconfig: 'ini',
  md: 'markdown',
  markdown: 'markdown',
  mdx: 'markdown',
  gfm: 'markdown',
  text: 'text',
  txt: 'text',
  none: 'text',
  plain: 'text',
  plaintext: 'text',
  nohighlight: 'text',
  output: 'text',
  'no-highlight': 'text',
  raw: 'text',
  default: 'text',
  '': 'text',
};

export const CANONICAL_LANGUAGES: ReadonlySet<string> = new Set([
  'python',
  'javascript',
  'typescript',
  'shell',
  'console',
  'sql',
  'json',
  'yaml',
  'html',
  'xml',
  'css',
  'go',
  'rust',
  'java',
  'c',
  'cpp',
  'csharp',
  'ruby',
  'php',
  'toml',
  'dockerfile',
  'diff',
  'ini',
  'markdown',
  'text',
]);

/**
 * Canonical name for a declared language. Unknown names pass through lowercased
 * and trimmed, with anything after whitespace or a brace dropped (`{.python}`
 * and `python {linenos}` both mean python).
 */
export function normalizeLanguage(name: string): string {
  let n = String(name ?? '')
    .trim()
    .toLowerCase();
  if (n.startsWith('{') && n.endsWith('}')) n = n.slice(1, -1).trim();
  if (n.startsWith('.')) n = n.slice(1);
  const cut = n.search(/[\s{},;]/);
  if (cut >= 0) n = n.slice(0, cut);
  const alias = ALIASES[n];
  if (alias !== undefined) return alias;
  // GitHub's linguist scopes: `source-python`, `text-html-basic`.
  if (n.startsWith('source-') || n.startsWith('source.')) return normalizeLanguage(n.slice(7));
  if (n.startsWith('text-html') || n.startsWith('text.html')) return 'html';
  // Highlighter variants such as `python-console` or `js-repl`.
  const dash = n.indexOf('-');
  if (dash > 0) {
    const head = ALIASES[n.slice(0, dash)];
    const tail = n.slice(dash + 1);
    if (head !== undefined && /^(console|repl|session)$/.test(tail)) return head === 'shell' ? 'console' : head;
  }
  // Control characters would end up in an index column; drop them.
  return n.replace(/[^\x20-\x7e]/g, '');
}

/** True when the name is a language we recognise (after normalisation). */
export function isKnownLanguage(canonical: string): boolean {
  return CANONICAL_LANGUAGES.has(canonical) || Object.prototype.hasOwnProperty.call(ALIASES, canonical);
}
