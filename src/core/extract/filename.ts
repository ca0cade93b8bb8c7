// Filename hints and what a filename says about the language.

const EXTENSION_LANGUAGE: Record<string, string> = {
  py: 'python',
  pyw: 'python',
  pyi: 'python',
  js: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  jsx: 'javascript',
  ts: 'typescript',
  tsx: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  sh: 'shell',
  bash: 'shell',
  zsh: 'shell',
  ksh: 'shell',
  fish: 'shell',
  sql: 'sql',
  psql: 'sql',
  json: 'json',
  jsonc: 'json',
  json5: 'json',
  ipynb: 'json',
  yaml: 'yaml',
  yml: 'yaml',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  jinja: 'html',
  jinja2: 'html',
  j2: 'html',
  xml: 'xml',
  xsd: 'xml',
  xsl: 'xml',
  xslt: 'xml',
  svg: 'xml',
  plist: 'xml',
  csproj: 'xml',
  pom: 'xml',
  css: 'css',
  scss: 'scss',
  sass: 'sass',
  less: 'less',
  go: 'go',
  rs: 'rust',
  java: 'java',
  kt: 'kotlin',
  kts: 'kotlin',
  scala: 'scala',
  swift: 'swift',
  c: 'c',
  h: 'c',
  cpp: 'cpp',
  cc: 'cpp',
  cxx: 'cpp',
  hpp: 'cpp',
  hh: 'cpp',
  hxx: 'cpp',
  cs: 'csharp',
  rb: 'ruby',
  rake: 'ruby',
  gemspec: 'ruby',
  php: 'php',
  toml: 'toml',
  diff: 'diff',
  patch: 'diff',
  ini: 'ini',
  cfg: 'ini',
  conf: 'ini',
  properties: 'ini',
  editorconfig: 'ini',
  md: 'markdown',
  markdown: 'markdown',
  mdx: 'markdown',
  txt: 'text',
  text: 'text',
  log: 'text',
  lua: 'lua',
  pl: 'perl',
  pm: 'perl',
  r: 'r',
  dart: 'dart',
  ex: 'elixir',
  exs: 'elixir',
  erl: 'erlang',
  hs: 'haskell',
  clj: 'clojure',
  vue: 'vue',
  svelte: 'svelte',
  graphql: 'graphql',
  gql: 'graphql',
  proto: 'protobuf',
  tf: 'hcl',
  hcl: 'hcl',
  ps1: 'powershell',
  bat: 'batch',
  cmd: 'batch',
  mk: 'makefile',
  dockerfile: 'dockerfile',
};

const SPECIAL_NAMES: Record<string, string> = {
  dockerfile: 'dockerfile',
  containerfile: 'dockerfile',
  makefile: 'makefile',
  gnumakefile: 'makefile',
  gemfile: 'ruby',
  rakefile: 'ruby',
  podfile: 'ruby',
  vagrantfile: 'ruby',
  procfile: 'text',
  '.bashrc': 'shell',
  '.zshrc': 'shell',
  '.profile': 'shell',
  '.bash_profile': 'shell',
  '.env': 'shell',
  '.gitignore': 'text',
  '.dockerignore': 'text',
  '.npmrc': 'ini',
  '.editorconfig': 'ini',
  '.gitconfig': 'ini',
  'cmakelists.txt': 'cmake',
  'go.mod': 'go',
  'cargo.lock': 'toml',
  pipfile: 'toml',
};

/** Language implied by a filename, or null when the name says nothing. */
export function languageFromFilename(filename: string): string | null {
  const base = (filename.split(/[\\/]/).pop() ?? '').toLowerCase().trim();
  if (base.length === 0) return null;
  const special = SPECIAL_NAMES[base];
  if (special !== undefined) return special;
  if (base.startsWith('dockerfile.') || base.endsWith('.dockerfile')) return 'dockerfile';
  const dot = base.lastIndexOf('.');
  if (dot < 0) return null;
  return EXTENSION_LANGUAGE[base.slice(dot + 1)] ?? null;
}

// A path or file name: optional ./ ../ ~/ or /, segments, and a name with a
// letter-led extension, or one of the well-known extension-less names.
const PATH_RE =
  /^(?:~\/|\.{1,2}\/|\/)?(?:\.?[\w@+-][\w@.+-]*\/)*(?:[\w@+-][\w@.+-]*\.[A-Za-z][\w]{0,9}|\.[A-Za-z][\w.-]{1,30}|Dockerfile|Makefile|Gemfile|Rakefile|Procfile|Containerfile|Vagrantfile)$/;
// "Node.js", "Vue.js": product names, not files.
const PRODUCT_RE = /^[A-Z][a-z]+\.js$/;

/** A string that is a filename or path on its own, cleaned; null otherwise. */
export function asFilename(text: string): string | null {
  let s = text.trim();
  if (s.length === 0 || s.length > 200) return null;
  s = s.replace(/^(?:file(?:name)?|path)\s*:\s*/i, '').replace(/^[`'"*_]+|[`'"*_]+$/g, '');
  s = s.replace(/:$/, '').trim();
  if (s.length === 0 || /\s/.test(s)) return null;
  // An absolute or relative path names a file even without an extension (/etc/cron.d/backup).
  if (/^(?:~|\.{1,2})?\/(?:[\w@.+-]+\/)+[\w@.+-]+$/.test(s)) return s;
  if (!PATH_RE.test(s) || PRODUCT_RE.test(s)) return null;
  // A bare "name.ext" must have an extension we know, else "e.g." or "v1.2" sneak in.
  if (!s.includes('/') && languageFromFilename(s) === null && !/\.(?:lock|env|cfg|conf|rc|local|example|sample|tpl|template)$/i.test(s)) {
    return null;
  }
  return s;
}

/** A prose paragraph that is just a path (`src/app.ts`, "**app.py**", "File: x.toml") names the next block's file. */
export function filenameFromProseLine(plain: string): string | null {
  if (plain.length > 120) return null;
  return asFilename(plain);
}

/** A filename attribute value (`data-filename`, `title`), or null when it is a caption rather than a name. */
export function filenameFromAttribute(value: string | undefined): string | null {
  if (value === undefined) return null;
  return asFilename(value);
}
