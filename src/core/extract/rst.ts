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
  'function',
  'method',
  'class',
  'attribute',
  'data',
  'exception',
  'decorator',
  'decoratormethod',
  'classmethod',
  'staticmethod',
  'opcode',
  'cmdoption',
  'option',
  'envvar',
  'describe',
  'object',
  'property',
  'coroutinefunction',
  'coroutinemethod',
  'abstractmethod',
  'type',
  'member',
  'macro',
  'var',
  'struct',
  'enum',
  'enumerator',
  'c:function',
  'c:type',
  'c:macro',
  'c:member',
  'c:var',
  'c:struct',
  'py:function',
  'py:method',
  'py:class',
  'py:attribute',
  'py:data',
  'py:exception',
  'js:function',
  'js:class',
  'js:method',
  'js:data',
  'js:attribute',
  'cpp:function',
  'cpp:class',
  'cpp:member',
  'cpp:type',
  'pdbcommand',
  'monitoring-event',
  'audit-event-table',
]);
const SKIP_CONTENT = new Set(['toctree', 'productionlist', 'literalinclude', 'image', 'figure', 'raw', 'include', 'index', 'only', 'csv-table', 'list-table', 'grammar-snippet', 'math']);
const LABELS: Record<string, string> = {
  note: 'Note',
  warning: 'Warning',
  seealso: 'See also',
  tip: 'Tip',
  important: 'Important',
  caution: 'Caution',
  danger: 'Danger',
  hint: 'Hint',
  attention: 'Attention',
  versionadded: 'New in version',
  versionchanged: 'Changed in version',
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
  return new RstReader(lines).read().finish(url, contentHash, 'rst');
}

/** The language a code directive declares by its name alone, else its argument or the current `highlight`. */
function directiveLanguage(name: string, arg: string, highlight: string | null): string | null {
  if (name === 'doctest' || name === 'testcode' || name === 'ipython' || name === 'jupyter-execute') return 'python';
  if (name === 'testoutput') return 'text';
  return arg || highlight;
}

function isApiDirective(name: string): boolean {
  return API_DIRECTIVES.has(name) || name.endsWith(':function') || name.endsWith(':method') || name.endsWith(':class');
}

/** One pass over the lines; each reader method takes the construct at a line and returns the next unread line. */
class RstReader {
  private readonly doc = new LineDocument();
  private readonly styles: string[] = [];
  private highlight: string | null = null;
  private pendingLabel: string | null = null;
  private readonly scopes: Scope[] = [];
  private para: string[] = [];
  private paraIndent = 0;

  constructor(private readonly lines: string[]) {}

  read(): LineDocument {
    let i = 0;
    while (i < this.lines.length) i = this.step(i);
    // A trailing `::` with no block after it introduces nothing.
    this.flushPara();
    this.closeScopes(-1);
    return this.doc;
  }

  private step(i: number): number {
    const line = this.lines[i] as string;
    if (isBlank(line)) return this.blankLine(i);
    const indent = indentOf(line);
    const inPara = this.para.length > 0;
    if (!inPara) this.closeScopes(indent);
    const afterTitle = inPara ? null : this.sectionTitle(i, line, indent);
    if (afterTitle !== null) return afterTitle;
    // A transition (---- between blank lines).
    if (ADORNMENT.test(line) && !inPara) return i + 1;
    const d = DIRECTIVE.exec(line);
    if (d && !inPara) return this.directive(d, i, indent);
    // Comments and hyperlink targets.
    if (/^\s*\.\.(?:\s|$)/.test(line) && !inPara) return this.comment(line, i, indent);
    // Doctest block: a paragraph starting with >>>.
    if (!inPara && /^\s*>>>(?:\s|$)/.test(line)) return this.doctestBlock(i);
    // Tables: borders and rows are not prose.
    if (/^\s*(?:\+[-=+]+\+|={2,}(?:\s+={2,})+)\s*$/.test(line)) {
      this.flushPara();
      return i + 1;
    }
    if (/^\s*\|.*\|\s*$/.test(line) && !inPara) {
      this.doc.raw(rstInline(line.trim()));
      return i + 1;
    }
    // A paragraph ends where a less-indented line starts.
    if (inPara && indent < this.paraIndent) this.flushPara();
    if (this.para.length === 0) this.paraIndent = indent;
    this.para.push(line.trim());
    return i + 1;
  }

  private blankLine(i: number): number {
    const { literal } = this.flushPara();
    if (!literal) return i + 1;
    const block = this.indentedBlock(i, this.paraIndent);
    if (block.lines.length > 0) {
      this.doc.code({ code: block.lines.join('\n'), origin: 'literal', declaredLanguage: this.highlight, filename: null, tab: null, caption: null });
    }
    return block.next;
  }

  /** A section title at line i (overlined, or a single underlined line): the next unread line, else null. */
  private sectionTitle(i: number, line: string, indent: number): number | null {
    const lines = this.lines;
    const next = lines[i + 1];
    if (next === undefined) return null;
    const over = ADORNMENT.exec(line);
    if (over && !isBlank(next) && ADORNMENT.exec(lines[i + 2] ?? '')?.[1] === over[1]) {
      this.heading(`${over[1]}o`, next);
      return i + 3;
    }
    if (indent !== 0 || ADORNMENT.test(line)) return null;
    const under = ADORNMENT.exec(next);
    const after = lines[i + 2];
    if (under && next.trim().length >= Math.min(line.trim().length, 3) && (after === undefined || isBlank(after) || !ADORNMENT.test(after))) {
      this.heading(under[1] as string, line);
      return i + 2;
    }
    return null;
  }

  private heading(style: string, titleLine: string): void {
    if (!this.styles.includes(style)) this.styles.push(style);
    const title = rstInline(titleLine.trim());
    this.doc.heading(this.styles.indexOf(style) + 1, title, this.pendingLabel ?? rstId(title));
    this.pendingLabel = null;
  }

  private directive(d: RegExpExecArray, i: number, base: number): number {
    this.flushPara();
    const name = (d[2] as string).toLowerCase();
    const arg = (d[3] ?? '').trim();
    const { options, next: j } = this.directiveOptions(i + 1, base);
    if (name === 'highlight' || name === 'highlightlang') {
      this.highlight = arg || null;
      return this.indentedBlock(j, base).next;
    }
    if (CODE_DIRECTIVES.has(name)) return this.codeDirective(name, arg, options, j, base);
    if (SKIP_CONTENT.has(name)) return this.indentedBlock(j, base).next;
    if (isApiDirective(name)) {
      const level = 7 + this.scopes.length;
      this.doc.entry(level, arg, null);
      this.scopes.push({ indent: base, level });
      return j;
    }
    // Admonitions and other containers: their content is ordinary text, read in place.
    const label = LABELS[name];
    if (label !== undefined) this.doc.prose(arg ? `${label} ${rstInline(arg)}` : `${label}:`, `**${label}${arg ? ` ${rstInline(arg)}` : ':'}**`);
    else if (arg && name !== 'module' && name !== 'currentmodule' && name !== 'sectionauthor' && name !== 'moduleauthor') {
      this.doc.raw(`*${rstInline(arg)}*`);
    }
    return j;
  }

  /** Options (:caption: x) directly below a directive's marker. */
  private directiveOptions(from: number, base: number): { options: Record<string, string>; next: number } {
    const lines = this.lines;
    let j = from;
    const options: Record<string, string> = {};
    while (j < lines.length && !isBlank(lines[j]) && indentOf(lines[j] as string) > base && /^\s*:[\w-]+:/.test(lines[j] as string)) {
      const m = /^\s*:([\w-]+):\s*(.*)$/.exec(lines[j] as string);
      if (m) options[(m[1] as string).toLowerCase()] = (m[2] ?? '').trim();
      j++;
    }
    return { options, next: j };
  }

  private codeDirective(name: string, arg: string, options: Record<string, string>, from: number, base: number): number {
    const block = this.indentedBlock(from, base);
    const caption = options.caption ?? null;
    const filename = caption !== null ? asFilename(caption) : null;
    if (block.lines.length > 0) {
      this.doc.code({
        code: block.lines.join('\n'),
        origin: name,
        declaredLanguage: directiveLanguage(name, arg, this.highlight),
        filename,
        tab: null,
        caption: filename === null ? caption : null,
      });
    }
    return block.next;
  }

  private comment(line: string, i: number, indent: number): number {
    const target = /^\s*\.\.\s+_([^:]+):\s*$/.exec(line);
    if (target?.[1]) this.pendingLabel = rstId(target[1]);
    return this.indentedBlock(i + 1, indent).next;
  }

  private doctestBlock(i: number): number {
    const lines = this.lines;
    const out: string[] = [];
    let j = i;
    while (j < lines.length && !isBlank(lines[j])) out.push(lines[j++] as string);
    this.doc.code({ code: dedent(out).join('\n'), origin: 'doctest', declaredLanguage: 'python', filename: null, tab: null, caption: null });
    return j;
  }

  private closeScopes(indent: number): void {
    const scopes = this.scopes;
    while (scopes.length > 0 && indent <= (scopes[scopes.length - 1] as Scope).indent) {
      this.doc.pop((scopes.pop() as Scope).level);
    }
  }

  /** Lines of an indented block starting at `from` (blank lines first skipped), deeper than `base`. */
  private indentedBlock(from: number, base: number): { lines: string[]; next: number } {
    const lines = this.lines;
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
  }

  private flushPara(): { literal: boolean } {
    if (this.para.length === 0) return { literal: false };
    let t = this.para.join(' ').trim();
    this.para = [];
    let literal = false;
    if (t.endsWith('::')) {
      literal = true;
      t = t === '::' ? '' : t.endsWith(' ::') ? t.slice(0, -3) : t.slice(0, -1);
    }
    // Bullets and enumerators are prose with a marker.
    t = t.replace(/^(?:[-*+•]|#\.|\d+\.|\(?[a-z0-9]\))\s+/, '');
    if (t.length > 0) {
      const plain = rstInline(t);
      this.doc.prose(plain);
    }
    return { literal };
  }
}
