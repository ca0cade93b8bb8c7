// reStructuredText (Sphinx sources, including Python's `_sources/*.rst.txt`).
// A line reader, not a full docutils: it knows section titles, literal blocks
// (`::`), doctest blocks (`>>>`), and the code directives (`code-block`, `code`,
// `sourcecode`, `doctest`, `testcode`, `testoutput`, `highlight`). Sphinx API
// directives (`function`, `method`, `class`, ...) act as pseudo-headings so a
// block inside one is titled by its signature.
import { asFilename } from './filename.js';
import { dedent, expandTabs, indentOf, isBlank, LineDocument } from './line-doc.js';
import type { ExtractResult } from './types.js';

const ADORNMENT = /^([!-/:-@[-`{-~])\1{2,}\s*$/;
const DIRECTIVE = /^(\s*)\.\.\s+([\w:.+-]+)::(?:\s+(.*))?$/;
const CODE_DIRECTIVES = new Set(['code-block', 'code', 'sourcecode', 'doctest', 'testcode', 'testoutput', 'ipython', 'jupyter-execute']);
const API_DIRECTIVES = new Set([
  'function', 'method', 'class', 'attribute', 'data', 'exception', 'decorator', 'decoratormethod', 'classmethod',
  'staticmethod', 'opcode', 'cmdoption', 'option', 'envvar', 'describe', 'object', 'property', 'coroutinefunction',
  'coroutinemethod', 'abstractmethod', 'type', 'member', 'macro', 'var', 'struct', 'enum', 'enumerator', 'c:function',
  'c:type', 'c:macro', 'c:member', 'c:var', 'c:struct', 'py:function', 'py:method', 'py:class', 'py:attribute',
  'py:data', 'py:exception', 'js:function', 'js:class', 'js:method', 'js:data', 'js:attribute', 'cpp:function',
  'cpp:class', 'cpp:member', 'cpp:type', 'pdbcommand', 'monitoring-event', 'audit-event-table',
]);
const SKIP_CONTENT = new Set(['toctree', 'productionlist', 'literalinclude', 'image', 'figure', 'raw', 'include', 'index', 'only', 'csv-table', 'list-table', 'grammar-snippet', 'math']);
const LABELS: Record<string, string> = {
  note: 'Note', warning: 'Warning', seealso: 'See also', tip: 'Tip', important: 'Important', caution: 'Caution',
  danger: 'Danger', hint: 'Hint', attention: 'Attention', versionadded: 'New in version', versionchanged: 'Changed in version',
  deprecated: 'Deprecated since version',
};

/** Inline markup to plain text: roles, literals, references, emphasis. */
export function rstInline(text: string): string {
  return text
    .replace(/:[\w:.+-]+:`([^`<]*?)\s*<[^`>]*>`/g, '$1')
    .replace(/:[\w:.+-]+:`!?~?([^`]*)`/g, (_m, t: string) => t)
    .replace(/``([^`]+)``/g, '`$1`')
    .replace(/`([^`<]+?)\s*<[^`>]+>`__?/g, '$1')
    .replace(/`([^`]+)`_{1,2}/g, '$1')
    .replace(/\|([\w -]+)\|_?/g, '$1')
    .replace(/\b(\w+)__?(?=[\s.,;:)]|$)/g, '$1')
    .replace(/\\(.)/g, '$1');
}

/** docutils-style id: lower case, runs of other characters become one hyphen. */
function rstId(text: string): string {
  return text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

interface Scope {
  indent: number;
  level: number;
}

export function extractRst(text: string, url: string, contentHash: string): ExtractResult {
  const lines = text.split(/\r?\n/).map(expandTabs);
  const doc = new LineDocument();
  const styles: string[] = [];
  let highlight: string | null = null;
  let pendingLabel: string | null = null;
  const scopes: Scope[] = [];
  let para: string[] = [];
  let paraIndent = 0;

  const closeScopes = (indent: number): void => {
    while (scopes.length > 0 && indent <= (scopes[scopes.length - 1] as Scope).indent) {
      doc.pop((scopes.pop() as Scope).level);
    }
  };

  /** Lines of an indented block starting at `from` (blank lines first skipped), deeper than `base`. */
  const indentedBlock = (from: number, base: number): { lines: string[]; next: number } => {
    let j = from;
    while (j < lines.length && isBlank(lines[j])) j++;
    const out: string[] = [];
    while (j < lines.length) {
      const l = lines[j] as string;
      if (!isBlank(l) && indentOf(l) <= base) break;
      out.push(l);
      j++;
    }
    while (out.length > 0 && isBlank(out[out.length - 1])) out.pop();
    return { lines: dedent(out), next: j };
  };

  const flushPara = (): { literal: boolean } => {
    if (para.length === 0) return { literal: false };
    let t = para.join(' ').trim();
    para = [];
    let literal = false;
    if (t.endsWith('::')) {
      literal = true;
      t = t === '::' ? '' : t.endsWith(' ::') ? t.slice(0, -3) : t.slice(0, -1);
    }
    // Bullets and enumerators are prose with a marker.
    t = t.replace(/^(?:[-*+•]|#\.|\d+\.|\(?[a-z0-9]\))\s+/, '');
    if (t.length > 0) {
      const plain = rstInline(t);
      doc.prose(plain);
    }
    return { literal };
  };

  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as string;
    if (isBlank(line)) {
      const { literal } = flushPara();
      if (literal) {
        const block = indentedBlock(i, paraIndent);
        if (block.lines.length > 0) {
          doc.code({ code: block.lines.join('\n'), origin: 'literal', declaredLanguage: highlight, filename: null, tab: null, caption: null });
        }
        i = block.next;
        continue;
      }
      i++;
      continue;
    }
    const indent = indentOf(line);
    if (para.length === 0) closeScopes(indent);

    // Section title with overline.
    const next = lines[i + 1];
    const over = ADORNMENT.exec(line);
    if (over && para.length === 0 && next !== undefined && !isBlank(next) && ADORNMENT.exec(lines[i + 2] ?? '')?.[1] === over[1]) {
      const style = `${over[1]}o`;
      if (!styles.includes(style)) styles.push(style);
      const title = rstInline(next.trim());
      doc.heading(styles.indexOf(style) + 1, title, pendingLabel ?? rstId(title));
      pendingLabel = null;
      i += 3;
      continue;
    }
    // Section title with underline (the title is this single line).
    if (para.length === 0 && indent === 0 && next !== undefined && !ADORNMENT.test(line)) {
      const under = ADORNMENT.exec(next);
      if (under && next.trim().length >= Math.min(line.trim().length, 3) && (lines[i + 2] === undefined || isBlank(lines[i + 2]) || !ADORNMENT.test(lines[i + 2] as string))) {
        const style = under[1] as string;
        if (!styles.includes(style)) styles.push(style);
        const title = rstInline(line.trim());
        doc.heading(styles.indexOf(style) + 1, title, pendingLabel ?? rstId(title));
        pendingLabel = null;
        i += 2;
        continue;
      }
    }
    // A transition (---- between blank lines).
    if (ADORNMENT.test(line) && para.length === 0) {
      i++;
      continue;
    }

    const d = DIRECTIVE.exec(line);
    if (d && para.length === 0) {
      flushPara();
      const name = (d[2] as string).toLowerCase();
      const arg = (d[3] ?? '').trim();
      const base = indent;
      // Options (:caption: x) directly below the marker.
      let j = i + 1;
      const options: Record<string, string> = {};
      while (j < lines.length && !isBlank(lines[j]) && indentOf(lines[j] as string) > base && /^\s*:[\w-]+:/.test(lines[j] as string)) {
        const m = /^\s*:([\w-]+):\s*(.*)$/.exec(lines[j] as string);
        if (m) options[(m[1] as string).toLowerCase()] = (m[2] ?? '').trim();
        j++;
      }
      if (name === 'highlight' || name === 'highlightlang') {
        highlight = arg || null;
        i = indentedBlock(j, base).next;
        continue;
      }
      if (CODE_DIRECTIVES.has(name)) {
        const block = indentedBlock(j, base);
        const lang =
          name === 'doctest' || name === 'testcode' || name === 'ipython' || name === 'jupyter-execute'
            ? 'python'
            : name === 'testoutput'
              ? 'text'
              : arg || highlight;
        const caption = options.caption ?? null;
        const filename = caption !== null ? asFilename(caption) : null;
        if (block.lines.length > 0) {
          doc.code({
            code: block.lines.join('\n'),
            origin: name,
            declaredLanguage: lang,
            filename,
            tab: null,
            caption: filename === null ? caption : null,
          });
        }
        i = block.next;
        continue;
      }
      if (SKIP_CONTENT.has(name)) {
        i = indentedBlock(j, base).next;
        continue;
      }
      if (API_DIRECTIVES.has(name) || name.endsWith(':function') || name.endsWith(':method') || name.endsWith(':class')) {
        const level = 7 + scopes.length;
        doc.entry(level, arg, null);
        scopes.push({ indent: base, level });
        i = j;
        continue;
      }
      // Admonitions and other containers: their content is ordinary text, read in place.
      const label = LABELS[name];
      if (label !== undefined) doc.prose(arg ? `${label} ${rstInline(arg)}` : `${label}:`, `**${label}${arg ? ` ${rstInline(arg)}` : ':'}**`);
      else if (arg && name !== 'module' && name !== 'currentmodule' && name !== 'sectionauthor' && name !== 'moduleauthor') {
        doc.raw(`*${rstInline(arg)}*`);
      }
      i = j;
      continue;
    }
    // Comments and hyperlink targets.
    if (/^\s*\.\.(?:\s|$)/.test(line) && para.length === 0) {
      const target = /^\s*\.\.\s+_([^:]+):\s*$/.exec(line);
      if (target?.[1]) pendingLabel = rstId(target[1]);
      i = indentedBlock(i + 1, indent).next;
      continue;
    }
    // Doctest block: a paragraph starting with >>>.
    if (para.length === 0 && /^\s*>>>(?:\s|$)/.test(line)) {
      const out: string[] = [];
      let j = i;
      while (j < lines.length && !isBlank(lines[j])) out.push(lines[j++] as string);
      doc.code({ code: dedent(out).join('\n'), origin: 'doctest', declaredLanguage: 'python', filename: null, tab: null, caption: null });
      i = j;
      continue;
    }
    // Tables: borders and rows are not prose.
    if (/^\s*(?:\+[-=+]+\+|={2,}(?:\s+={2,})+)\s*$/.test(line)) {
      flushPara();
      i++;
      continue;
    }
    if (/^\s*\|.*\|\s*$/.test(line) && para.length === 0) {
      doc.raw(rstInline(line.trim()));
      i++;
      continue;
    }
    // A paragraph ends where a less-indented line starts.
    if (para.length > 0 && indent < paraIndent) flushPara();
    if (para.length === 0) paraIndent = indent;
    para.push(line.trim());
    i++;
  }
  // A trailing `::` with no block after it introduces nothing.
  flushPara();
  closeScopes(-1);
  return doc.finish(url, contentHash, 'rst');
}
