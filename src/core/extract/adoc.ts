// AsciiDoc: section titles (`=`/`#`), `[source,lang]` blocks with `----`
// delimiters or as a paragraph, listing (`----`) and literal (`....`) blocks,
// indented literal paragraphs, block titles (`.app.rb` names the file), anchors
// (`[[id]]`, `[#id]`), `:source-language:` and callout markers (`<1>`), which
// asciidoctor renders as icons and a reader never copies.
import { asFilename } from './filename.js';
import { dedent, expandTabs, isBlank, LineDocument } from './line-doc.js';
import type { ExtractResult } from './types.js';

const HEADING = /^(={1,6}|#{1,6})\s+(\S.*?)\s*(?:\1)?\s*$/;
const ATTRIBUTE_LIST = /^\[([^\]]*)\]\s*$/;
const BLOCK_TITLE = /^\.([^.\s].*)$/;
const ANCHOR = /^\[\[([\w:.-]+)(?:,[^\]]*)?\]\]\s*$/;
const DOC_ATTRIBUTE = /^:([\w-]+!?):\s*(.*)$/;
const CALLOUT = /[ \t]+(?:(?:\/\/|#|--|;;|%)[ \t]*)?(?:<(?:\d+|\.)>|<!--\d+-->)(?:[ \t]*(?:<\d+>|<!--\d+-->))*[ \t]*$/;

/** Inline markup to plain text. */
export function adocInline(text: string): string {
  return text
    .replace(/(?:link:|https?:\/\/)(\S+?)\[([^\]]*)\]/g, (m, _u: string, label: string) => label || m.replace(/\[\]$/, ''))
    .replace(/<<([^,>]+)(?:,\s*([^>]+))?>>/g, (_m, id: string, label?: string) => label ?? id)
    .replace(/xref:([^[\s]+)\[([^\]]*)\]/g, (_m, id: string, label: string) => label || id)
    .replace(/`\+?([^`]+?)\+?`/g, '`$1`')
    .replace(/(^|[\s(])[*_]{1,2}([^*_\n]+?)[*_]{1,2}(?=[\s).,;:!?]|$)/g, '$1$2')
    .replace(/\{(\w[\w-]*)\}/g, '$1');
}

/** asciidoctor's automatic id: `_` prefix, lower case, runs of other characters become `_`. */
function autoId(text: string): string {
  return `_${text
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, '_')
    .replace(/^_+|_+$/g, '')}`;
}

interface BlockAttrs {
  style: string | null;
  language: string | null;
  id: string | null;
}

function parseAttributes(list: string): BlockAttrs {
  const parts = list.split(',').map((p) => p.trim());
  let first = parts[0] ?? '';
  let id: string | null = null;
  const hash = /#([\w:.-]+)/.exec(first);
  if (hash) {
    id = hash[1] ?? null;
    first = first.slice(0, hash.index);
  }
  first = first.replace(/%.*$/, '').trim();
  const positional = parts.slice(1).filter((p) => !p.includes('='));
  const named = parts.find((p) => /^language\s*=/.test(p));
  const language = named ? named.replace(/^language\s*=\s*["']?|["']$/g, '') : (positional[0] ?? null);
  return { style: first || null, language: language || null, id };
}

export function stripCallouts(code: string): string {
  if (!code.includes('<')) return code;
  return code
    .split('\n')
    .map((l) => l.replace(CALLOUT, ''))
    .join('\n');
}

export function extractAdoc(text: string, url: string, contentHash: string): ExtractResult {
  const lines = text.split(/\r?\n/).map(expandTabs);
  return new AdocReader(lines).read().finish(url, contentHash, 'adoc');
}

const DELIMITER = /^(-{4,}|\.{4,}|\+{4,}|={4,}|\*{4,}|_{4,}|-{2}|\|===|```)\s*$/;

/** One pass over the lines; each reader method takes the construct at a line and returns the next unread line. */
class AdocReader {
  private readonly doc = new LineDocument();
  private sourceLanguage: string | null = null;
  private attrs: BlockAttrs | null = null;
  private blockTitle: string | null = null;
  private anchor: string | null = null;
  private para: string[] = [];

  constructor(private readonly lines: string[]) {}

  read(): LineDocument {
    let i = 0;
    while (i < this.lines.length) i = this.step(i);
    this.flushPara();
    return this.doc;
  }

  private step(i: number): number {
    const lines = this.lines;
    const line = lines[i] as string;
    if (isBlank(line)) {
      this.flushPara();
      return i + 1;
    }
    // Comments.
    if (line.startsWith('////')) {
      this.flushPara();
      let j = i + 1;
      while (j < lines.length && !(lines[j] as string).startsWith('////')) j++;
      return j + 1;
    }
    if (line.startsWith('//')) return i + 1;
    if (this.para.length === 0 && this.blockLine(line)) return i + 1;
    const delim = DELIMITER.exec(line);
    if (delim) return this.delimitedBlock(delim[1] as string, i);
    if (/^(?:include|image|toc)::/.test(line)) return i + 1;
    // [source] paragraph, or an indented literal paragraph.
    if (this.para.length === 0 && (this.attrs?.style === 'source' || /^\s+\S/.test(line))) {
      const body: string[] = [];
      let j = i;
      while (j < lines.length && !isBlank(lines[j])) body.push(lines[j++] as string);
      // An indented literal paragraph is usually a command or its output: let detection decide.
      this.emitCode(body, this.attrs?.style === 'source' ? 'source' : 'literal', false);
      return j;
    }
    if (this.para.length === 0) {
      // A block title or attribute list not used by a block applies to nothing.
      this.attrs = null;
      this.blockTitle = null;
    }
    // List items start new paragraphs.
    if (this.para.length > 0 && /^(?:[*.-]+|\d+\.|<\d+>)\s+/.test(line)) this.flushPara();
    this.para.push(line.trim());
    return i + 1;
  }

  /** A one-line construct outside a paragraph (document attribute, anchor, attribute list, block title, heading): whether it was one. */
  private blockLine(line: string): boolean {
    const da = DOC_ATTRIBUTE.exec(line);
    if (da) {
      if (da[1] === 'source-language') this.sourceLanguage = (da[2] ?? '').trim() || null;
      if (da[1] === 'description') this.doc.description = (da[2] ?? '').trim();
      return true;
    }
    const an = ANCHOR.exec(line);
    if (an) {
      this.anchor = an[1] ?? null;
      return true;
    }
    const al = ATTRIBUTE_LIST.exec(line);
    if (al && !line.startsWith('[[')) {
      this.attrs = parseAttributes(al[1] ?? '');
      if (this.attrs.id !== null) this.anchor = this.attrs.id;
      return true;
    }
    const bt = BLOCK_TITLE.exec(line);
    if (bt && !line.startsWith('..')) {
      this.blockTitle = (bt[1] ?? '').trim();
      return true;
    }
    const h = HEADING.exec(line);
    if (!h) return false;
    const level = (h[1] as string).length;
    const title = adocInline(h[2] as string);
    this.doc.heading(level, title, this.anchor ?? (level === 1 ? null : autoId(title)));
    this.anchor = null;
    this.attrs = null;
    this.blockTitle = null;
    return true;
  }

  private delimitedBlock(d: string, i: number): number {
    const lines = this.lines;
    this.flushPara();
    let j = i + 1;
    if ((d.startsWith('-') && d.length >= 4) || d.startsWith('.') || d === '```') {
      const body: string[] = [];
      while (j < lines.length && (lines[j] as string).trimEnd() !== d) body.push(lines[j++] as string);
      if (d === '```') this.attrs = this.attrs ?? { style: 'source', language: null, id: null };
      this.emitCode(body, d.startsWith('.') ? 'literal' : 'listing', d.startsWith('.'));
      return j + 1;
    }
    if (d.startsWith('+') || d === '|===') {
      // Passthrough (raw HTML) and tables: not prose.
      while (j < lines.length && (lines[j] as string).trimEnd() !== d) j++;
      this.attrs = null;
      this.blockTitle = null;
      return j + 1;
    }
    // Example, sidebar, quote and open blocks: their content is read in place.
    return j;
  }

  private flushPara(): void {
    if (this.para.length === 0) return;
    const t = this.para
      .join(' ')
      .replace(/^(?:NOTE|TIP|IMPORTANT|WARNING|CAUTION):\s*/, '')
      .replace(/^(?:[*.-]+|\d+\.|<\d+>)\s+/, '');
    this.para = [];
    this.doc.prose(adocInline(t));
  }

  private emitCode(body: string[], kind: string, isLiteral: boolean): void {
    const a = this.attrs;
    const isSource = a !== null && (a.style === 'source' || a.style === '' || (a.style === null && a.language !== null));
    let language: string | null = null;
    if (isSource) language = a?.language ?? this.sourceLanguage;
    else if (isLiteral || a?.style === 'literal') language = 'text';
    const title = this.blockTitle;
    const filename = title !== null ? asFilename(title) : null;
    const code = stripCallouts(dedent(body).join('\n'));
    if (code.trim().length > 0) {
      this.doc.code({
        code,
        origin: kind,
        declaredLanguage: language,
        filename,
        tab: null,
        caption: filename === null ? title : null,
      });
    }
    this.attrs = null;
    this.blockTitle = null;
  }
}
