// Reading one HTML code block: its exact text (gutters, copy buttons and
// screen-reader labels removed, one line per Shiki/Prism line element), the
// language its classes declare, its filename or caption, and its tab label.
import { filenameFromAttribute, asFilename } from './filename.js';
import { LINE_CLASS } from './code-classes.js';
import { isCodeJunk } from './html-main.js';
import { type HElement, type HNode, type HtmlTree, isAncestor, Kind, textOf } from './html-tree.js';
import { languageFromClass } from './language.js';
import { isKnownLanguage, normalizeLanguage } from './language-names.js';
import { collapseSpaces } from './whitespace.js';

// ---------------------------------------------------------------------------
// Text.

const COPY_LINE = /^(?:copy|copied!?|copy code|copy to clipboard|copied to clipboard!?)$/i;

function collect(node: HElement, parts: string[]): void {
  for (const c of node.children) {
    if (typeof c === 'string') parts.push(c);
    else if (c.tag === 'br') parts.push('\n');
    else if (!isCodeJunk(c)) collect(c, parts);
  }
}

function textWithoutJunk(node: HElement): string {
  const parts: string[] = [];
  collect(node, parts);
  return parts.join('');
}

/** The element whose children are the lines, when the highlighter renders one element per line. */
function lineElements(el: HElement): HElement[] | null {
  let parent = el;
  // pre > code > lines: descend through single wrapper elements.
  for (let i = 0; i < 3; i++) {
    const els = parent.children.filter((c): c is HElement => typeof c !== 'string' && !isCodeJunk(c));
    const texts = parent.children.filter((c): c is string => typeof c === 'string');
    if (els.length === 1 && texts.every((t) => t.trim().length === 0) && !LINE_CLASS.test((els[0] as HElement).attrs.class ?? '')) {
      parent = els[0] as HElement;
      continue;
    }
    break;
  }
  let lines = 0;
  let divs = 0;
  let others = 0;
  for (const c of parent.children) {
    if (typeof c === 'string') {
      if (c.trim().length > 0) return null;
      continue;
    }
    if (isCodeJunk(c)) continue;
    if (LINE_CLASS.test(c.attrs.class ?? '')) lines++;
    else if (c.tag === 'div' || c.tag === 'p') divs++;
    else others++;
  }
  // Every piece of content must sit in a line element, or lines would be lost.
  if (lines > 0 && divs === 0 && others === 0) {
    return parent.children.filter((c): c is HElement => typeof c !== 'string' && !isCodeJunk(c));
  }
  if (divs > 1 && lines === 0 && others === 0) {
    return parent.children.filter((c): c is HElement => typeof c !== 'string' && !isCodeJunk(c));
  }
  return null;
}

function stripOneNewline(s: string): string {
  if (s.endsWith('\r\n')) return s.slice(0, -2);
  if (s.endsWith('\n')) return s.slice(0, -1);
  return s;
}

function finishCode(text: string): string {
  let s = text.includes('\u00a0') ? text.replace(/\u00a0/g, ' ') : text;
  if (s.includes('\r')) s = s.replace(/\r\n?/g, '\n');
  // A copy button that slipped through as plain text sits on its own first or
  // last line. Only the edge lines are looked at: no split of the whole block.
  // Kept: the lines from `start` up to `end` (exclusive); `empty` once none are left.
  let start = 0;
  let end = s.length;
  let empty = false;
  while (!empty) {
    const nl = end > start ? s.lastIndexOf('\n', end - 1) : -1;
    const lineStart = nl >= start ? nl + 1 : start;
    if (!COPY_LINE.test(s.slice(lineStart, end).trim())) break;
    if (lineStart === start) empty = true;
    else end = lineStart - 1;
  }
  while (!empty) {
    const nl = s.indexOf('\n', start);
    const lineEnd = nl >= 0 && nl < end ? nl : end;
    if (!COPY_LINE.test(s.slice(start, lineEnd).trim())) break;
    if (lineEnd === end) empty = true;
    else start = lineEnd + 1;
  }
  return empty ? '' : s.slice(start, end);
}

/** The code an element shows, exactly: whitespace, tabs and blank lines kept, entities decoded. */
export function codeText(el: HElement): string {
  const lines = lineElements(el);
  if (lines !== null) {
    return finishCode(lines.map((l) => stripOneNewline(textWithoutJunk(l))).join('\n'));
  }
  return finishCode(textWithoutJunk(el));
}

// ---------------------------------------------------------------------------
// Gutters and highlight tables.

const GUTTER_CLASS = /(?:^|\s)(?:linenos|linenodiv|lineno|line-numbers|line-number|lnt|gl|rouge-gutter|gutter|blob-num|hljs-ln-numbers|code-line-numbers)(?:\s|$)/;
const CODE_TABLE_CLASS = /(?:^|\s)(?:highlighttable|rouge-table|lntable|hljs-ln|js-file-line-container|highlight-table|code-table)(?:\s|$)/;
const CODE_CELL_CLASS = /(?:^|\s)(?:code|blob-code|blob-code-inner|hljs-ln-code|lntd|rouge-code|line-content)(?:\s|$)/;

function isGutterCell(el: HElement): boolean {
  return GUTTER_CLASS.test(el.attrs.class ?? '') || el.attrs['data-line-number'] !== undefined;
}

/** A <pre> that holds only line numbers (Pygments `linenos` tables, Rouge and Chroma gutters). */
export function isGutterPre(pre: HElement): boolean {
  let p: HElement | null = pre;
  for (let i = 0; i < 3 && p !== null; i++, p = p.parent) {
    if (isGutterCell(p)) return true;
  }
  const cell = pre.parent?.tag === 'td' ? pre.parent : pre.parent?.parent?.tag === 'td' ? pre.parent.parent : null;
  if (cell !== null && cell !== undefined && /^[\d\s]+$/.test(textOf(pre)) && cell.parent !== null) {
    // A digits-only cell next to a cell with more code is a gutter, whatever its class.
    return cell.parent.children.some((c) => typeof c !== 'string' && c !== cell && c.tag === 'td');
  }
  return false;
}

function rowsOf(table: HElement): HElement[] {
  const rows: HElement[] = [];
  const stack: HElement[] = [table];
  while (stack.length > 0) {
    const n = stack.pop() as HElement;
    for (let i = n.children.length - 1; i >= 0; i--) {
      const c = n.children[i] as HNode;
      if (typeof c === 'string') continue;
      if (c.tag === 'tr') rows.push(c);
      else if (c.tag === 'thead' || c.tag === 'tbody' || c.tag === 'tfoot') stack.push(c);
    }
  }
  return rows.reverse();
}

function cellsOf(row: HElement): HElement[] {
  return row.children.filter((c): c is HElement => typeof c !== 'string' && (c.tag === 'td' || c.tag === 'th'));
}

/** A table that is really a code block with a line-number column. */
export function isCodeTable(table: HElement): boolean {
  if (CODE_TABLE_CLASS.test(table.attrs.class ?? '')) return true;
  const first = rowsOf(table)[0];
  if (first === undefined) return false;
  const cells = cellsOf(first);
  return cells.length >= 2 && cells.some(isGutterCell) && cells.some((c) => CODE_CELL_CLASS.test(c.attrs.class ?? ''));
}

export interface TableCode {
  /** The <pre> holding the code, when the table wraps one (Pygments); null for one-row-per-line tables. */
  pre: HElement | null;
  /** Gutter <pre>s to account for as skipped. */
  gutters: HElement[];
  code: string;
}

export function codeFromTable(table: HElement, codeElements: readonly HElement[]): TableCode {
  const inside = codeElements.filter((p) => isAncestor(table, p));
  const gutters = inside.filter(isGutterPre);
  const pres = inside.filter((p) => !gutters.includes(p));
  if (pres.length > 0) {
    const pre = pres[pres.length - 1] as HElement;
    return { pre, gutters, code: codeText(pre) };
  }
  const lines: string[] = [];
  for (const row of rowsOf(table)) {
    const cells = cellsOf(row).filter((c) => !isGutterCell(c));
    const cell = cells.find((c) => CODE_CELL_CLASS.test(c.attrs.class ?? '')) ?? cells[cells.length - 1];
    if (cell === undefined) continue;
    lines.push(stripOneNewline(textWithoutJunk(cell)));
  }
  return { pre: null, gutters, code: finishCode(lines.join('\n')) };
}

// ---------------------------------------------------------------------------
// Language, filename, caption, tab.

const STOP_TAGS = new Set(['body', 'main', 'article', 'section', 'html', '#root']);
const LANG_ATTRS = ['data-lang', 'data-language', 'data-code-language', 'data-highlight-language'];

function attrLanguage(el: HElement): string | null {
  for (const a of LANG_ATTRS) {
    const v = el.attrs[a];
    if (v !== undefined && v.trim().length > 0) return v.trim();
  }
  return null;
}

/** The language a code block's markup declares (class names and data attributes), or null. */
export function declaredLanguage(el: HElement, stop: HElement): string | null {
  const own = languageFromClass(el.attrs.class ?? '', true) ?? attrLanguage(el);
  if (own !== null) return own;
  // <pre><code class="language-x">
  for (const c of el.children) {
    if (typeof c === 'string' || c.tag !== 'code') continue;
    const inner = languageFromClass(c.attrs.class ?? '', true) ?? attrLanguage(c);
    if (inner !== null) return inner;
  }
  let p = el.parent;
  for (let i = 0; i < 4 && p !== null && p !== stop && !STOP_TAGS.has(p.tag); i++, p = p.parent) {
    const fromAttr = attrLanguage(p);
    if (fromAttr !== null) return fromAttr;
    const cls = p.attrs.class;
    if (cls === undefined) continue;
    const fromClass = languageFromClass(cls, false);
    if (fromClass === null) continue;
    // `lang-en` on a wrapper is a human language; only trust wrapper prefixes that name code.
    if (/(?:^|\s)(?:language|highlight|brush)[-:]/.test(cls) || isKnownLanguage(normalizeLanguage(fromClass))) return fromClass;
  }
  return null;
}

const FILENAME_ATTRS = ['data-filename', 'data-file', 'data-file-name', 'data-path', 'data-title', 'title', 'data-caption'];
const TITLE_CLASS =
  /(?:^|\s)(?:filename|file-name|code-title|code-block-title|code-block-caption|caption-text|code-header|code-filename|codeblock-title|title|highlight-title)(?:\s|$)|(?:^|\s)[\w-]*(?:codeBlockTitle|CodeBlockTitle|codeTitle|fileName)[\w-]*(?:\s|$)/;

const LABEL_JUNK = /(?:^|\s)(?:headerlink|sr-only|visually-hidden|anchor|hash-link|copybutton)(?:\s|$)/;

function collectLabel(node: HElement, parts: string[]): void {
  for (const c of node.children) {
    if (typeof c === 'string') parts.push(c);
    else if (c.tag !== 'button' && c.tag !== 'svg' && c.tag !== 'script' && c.tag !== 'style' && !LABEL_JUNK.test(c.attrs.class ?? '')) {
      collectLabel(c, parts);
    }
  }
}

function titleText(el: HElement): string {
  const parts: string[] = [];
  collectLabel(el, parts);
  return collapseSpaces(parts.join('').replace(/[¶#§]\s*$/, '')).trim();
}

function isTitleElement(el: HElement): boolean {
  if (el.kind === Kind.Heading) return false;
  if (el.tag === 'figcaption' || el.tag === 'caption') return true;
  return TITLE_CLASS.test(el.attrs.class ?? '');
}

export interface CodeLabels {
  filename: string | null;
  caption: string | null;
}

/** A title's text is a filename when it looks like one, else a caption (when short enough to be one). */
function labelsFrom(text: string): CodeLabels {
  const filename = asFilename(text);
  return { filename, caption: filename === null && text.length > 0 && text.length <= 160 ? text : null };
}

function attributeFilename(el: HElement): string | null {
  for (const a of FILENAME_ATTRS) {
    const f = filenameFromAttribute(el.attrs[a]);
    if (f !== null) return f;
  }
  return null;
}

/** Filename hint (attribute, title element, caption) and a caption that is not a filename. */
export function codeLabels(el: HElement, stop: HElement): CodeLabels {
  // 1. Attributes on the block, its <code>, and its close wrappers.
  for (const c of el.children) {
    if (typeof c === 'string' || c.tag !== 'code') continue;
    const f = attributeFilename(c);
    if (f !== null) return { filename: f, caption: null };
  }
  let p: HElement | null = el;
  for (let i = 0; i < 4 && p !== null && p !== stop; i++, p = p.parent) {
    const f = attributeFilename(p);
    if (f !== null) return { filename: f, caption: null };
  }
  // 2. A title element just before (or a caption just after) the block or one of its wrappers.
  p = el;
  for (let i = 0; i < 4 && p !== null && p !== stop && p.parent !== null; i++, p = p.parent) {
    const siblings = p.parent.children;
    const idx = siblings.indexOf(p);
    let seen = 0;
    for (let j = idx - 1; j >= 0 && seen < 2; j--) {
      const s = siblings[j] as HNode;
      if (typeof s === 'string') {
        if (s.trim().length > 0) break;
        continue;
      }
      seen++;
      if (!isTitleElement(s)) continue;
      const text = titleText(s);
      if (text.length > 0) return labelsFrom(text);
    }
    for (let j = idx + 1; j < siblings.length; j++) {
      const s = siblings[j] as HNode;
      if (typeof s === 'string') {
        if (s.trim().length > 0) break;
        continue;
      }
      if (s.tag === 'figcaption' || s.tag === 'caption') return labelsFrom(titleText(s));
      break;
    }
    if (p.parent.tag === 'figure' || p.parent.tag === 'table') {
      // A caption elsewhere in the figure.
      for (const s of p.parent.children) {
        if (typeof s !== 'string' && (s.tag === 'figcaption' || s.tag === 'caption')) return labelsFrom(titleText(s));
      }
    }
  }
  return { filename: null, caption: null };
}

function labelText(el: HElement): string | null {
  const t = titleText(el);
  return t.length > 0 && t.length <= 80 ? t : null;
}

function elementSiblings(el: HElement): HElement[] {
  if (el.parent === null) return [el];
  return el.parent.children.filter((c): c is HElement => typeof c !== 'string');
}

function tabsInside(container: HElement, tree: HtmlTree): HElement[] {
  return tree.tabs.filter((t) => t.attrs.role === 'tab' && isAncestor(container, t));
}

function labelForPanel(panel: HElement, tree: HtmlTree): string | null {
  const by = panel.attrs['aria-labelledby'];
  if (by !== undefined) {
    const tab = tree.tabs.find((t) => t.attrs.id === by);
    if (tab !== undefined) return labelText(tab);
  }
  const id = panel.attrs.id;
  if (id !== undefined) {
    const tab = tree.tabs.find((t) => t.attrs['aria-controls'] === id || t.attrs.href === `#${id}` || t.attrs.for === id);
    if (tab !== undefined) return labelText(tab);
  }
  // Positional: the n-th panel goes with the n-th tab of the nearest tab list before it.
  const panels = elementSiblings(panel).filter((s) => s.attrs.role === 'tabpanel' || s.tag === panel.tag);
  const index = panels.indexOf(panel);
  let scope: HElement | null = panel.parent;
  for (let i = 0; i < 3 && scope !== null; i++, scope = scope.parent) {
    const tabs = tabsInside(scope, tree);
    if (tabs.length > 0) {
      const tab = tabs[index];
      return tab !== undefined ? labelText(tab) : null;
    }
  }
  return null;
}

function hasClass(el: HElement, re: RegExp): boolean {
  return re.test(el.attrs.class ?? '');
}

/** The label of the tab a block sits in (MkDocs Material, Docusaurus, Starlight, Sphinx tabs/design, GitBook). */
export function tabLabel(el: HElement, stop: HElement, tree: HtmlTree): string | null {
  let p = el.parent;
  for (let i = 0; i < 10 && p !== null && p !== stop; i++, p = p.parent) {
    if (p.attrs.role === 'tabpanel') return labelForPanel(p, tree);
    if (hasClass(p, /(?:^|\s)tabbed-block(?:\s|$)/) && p.parent !== null) {
      // Material (new): .tabbed-set > .tabbed-labels > label ; .tabbed-content > .tabbed-block
      const index = elementSiblings(p)
        .filter((s) => hasClass(s, /(?:^|\s)tabbed-block(?:\s|$)/))
        .indexOf(p);
      const set = p.parent.parent;
      if (set === null) return null;
      const labelsBox = elementSiblings(p.parent).find((s) => hasClass(s, /(?:^|\s)tabbed-labels(?:\s|$)/));
      const labels = labelsBox ? labelsBox.children.filter((c): c is HElement => typeof c !== 'string' && c.tag === 'label') : [];
      const label = labels[index];
      return label !== undefined ? labelText(label) : null;
    }
    if (hasClass(p, /(?:^|\s)(?:tabbed-content|sd-tab-content|tab-content-item)(?:\s|$)/)) {
      // Material (old) and sphinx-design: <input><label>Name</label><div class="tabbed-content">
      const sibs = p.parent ? p.parent.children : [];
      for (let j = sibs.indexOf(p) - 1; j >= 0; j--) {
        const s = sibs[j] as HNode;
        if (typeof s === 'string') continue;
        if (s.tag === 'label') return labelText(s);
        if (s.tag !== 'input') break;
      }
    }
    if (hasClass(p, /(?:^|\s)tab-pane(?:\s|$)/) && p.attrs.id !== undefined) {
      const id = p.attrs.id;
      const tab = tree.tabs.find((t) => t.attrs.href === `#${id}` || t.attrs['aria-controls'] === id);
      if (tab !== undefined) return labelText(tab);
    }
    const dataLabel = p.attrs['data-tab-label'] ?? p.attrs['data-tab'] ?? p.attrs['data-label'];
    if (dataLabel !== undefined && dataLabel.trim().length > 0 && dataLabel.length <= 80) return dataLabel.trim();
  }
  return null;
}
