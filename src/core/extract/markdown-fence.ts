// A fence's info string as documentation generators write it, after the language word:
//
//   ```js:app.js                     (a filename after the language)
//   ```py title="app.py" hl_lines="2" (MkDocs, Docusaurus: key=value)
//   ```ts [vite.config.ts]            (VitePress code groups: a filename, or a tab label like [npm])
//   ```js src/data.js hidden           (react.dev's Sandpack: a path and flags)
//   ```js {2-4} / {expectedErrors: …} (highlighted lines, options: not a name)
//   ```bash npm                        (Mintlify's <CodeGroup>: the tab's title)
import { asFilename } from './filename.js';

export interface FenceInfo {
  lang: string | null;
  filename: string | null;
  /** A title that is not a filename ("Example configuration"). */
  caption: string | null;
  /** A tab label: `[npm]` in a code group, or a bare title in a <CodeGroup>. */
  label: string | null;
  /** The block is part of an example the reader does not see (Sandpack's `hidden`). */
  hidden: boolean;
}

// Bare words of fence meta that are switches, never a name.
const FLAGS = new Set(['hidden', 'active', 'readonly', 'showlinenumbers', 'live', 'noinline', 'twoslash', 'copy', 'nocopy', 'no-copy', 'wrap', 'expandable', 'lines', 'collapse']);
const TITLE_KEYS = /^(?:title|filename|file|name|path)$/i;
const MAX_META = 1000;

/**
 * `meta` without its option groups: brace groups (`{2-4}`, `{expectedErrors: {'a': [1]}}`) and arrays of
 * arrays (react.dev's code steps, `[[1, 2, "ref"]]`), nesting and quotes honoured.
 */
function withoutOptions(meta: string): string {
  let out = '';
  let depth = 0;
  let quote: string | null = null;
  for (let i = 0; i < meta.length; i++) {
    const c = meta[i] as string;
    if (depth === 0) {
      if (c === '{' || (c === '[' && meta[i + 1] === '[')) depth = 1;
      else out += c;
      continue;
    }
    if (quote !== null) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '{' || c === '[') {
      depth++;
    } else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) out += ' ';
    }
  }
  return out;
}

/** The language word without VitePress suffixes (`js{1,3}`, `ts:line-numbers`) and with a `lang:file` split. */
function splitLang(lang: string | null | undefined): { lang: string | null; filename: string | null } {
  if (lang === null || lang === undefined || lang === '') return { lang: null, filename: null };
  let language = lang.replace(/\{.*$/, '');
  let filename: string | null = null;
  const colon = language.indexOf(':');
  if (colon > 0) {
    filename = asFilename(language.slice(colon + 1));
    language = language.slice(0, colon);
  }
  return { lang: language === '' ? null : language, filename };
}

interface MetaWords {
  pairs: Array<[string, string]>;
  brackets: string[];
  bare: string[];
}

function metaWords(meta: string): MetaWords {
  const words: MetaWords = { pairs: [], brackets: [], bare: [] };
  const re = /([\w-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"']+))|\[([^\][",]*)\]|("[^"]*"|'[^']*'|\S+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(meta)) !== null) {
    if (m[1] !== undefined) words.pairs.push([m[1], m[2] ?? m[3] ?? m[4] ?? '']);
    else if (m[5] !== undefined) words.brackets.push(m[5].trim());
    else if (m[6] !== undefined) words.bare.push(m[6].replace(/^["']|["']$/g, ''));
  }
  return words;
}

/** What a fence's language word and meta say; `inCodeGroup`: a bare title names the tab (Mintlify). */
export function parseFenceInfo(langWord: string | null | undefined, meta: string | null | undefined, inCodeGroup = false): FenceInfo {
  const { lang, filename: fromLang } = splitLang(langWord);
  const info: FenceInfo = { lang, filename: fromLang, caption: null, label: null, hidden: false };
  if (!meta) return info;
  const words = metaWords(withoutOptions(meta.slice(0, MAX_META)));
  for (const [key, value] of words.pairs) {
    if (!TITLE_KEYS.test(key) || value.trim() === '') continue;
    const name = asFilename(value);
    if (name !== null) info.filename = name;
    else info.caption ??= value.trim();
  }
  for (const bracket of words.brackets) {
    const name = asFilename(bracket);
    if (name !== null) info.filename ??= name;
    else if (bracket !== '') info.label ??= bracket;
  }
  const titleWords: string[] = [];
  for (const word of words.bare) {
    const flag = word.toLowerCase();
    if (flag === 'hidden') info.hidden = true;
    if (FLAGS.has(flag) || /^[\w-]+=/.test(word)) continue;
    const name = info.filename === null ? asFilename(word) : null;
    if (name !== null) info.filename = name;
    else titleWords.push(word);
  }
  if (inCodeGroup && titleWords.length > 0) info.label ??= titleWords.join(' ').slice(0, 100);
  return info;
}
