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
  return `_${text.toLowerCase().replace(/<[^>]+>/g, '').replace(/[^\p{L}\p{N}]+/gu, '_').replace(/^_+|_+$/g, '')}`;
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
  const doc = new LineDocument();
  let sourceLanguage: string | null = null;
  let attrs: BlockAttrs | null = null;
  let blockTitle: string | null = null;
  let anchor: string | null = null;
  let para: string[] = [];

  const flushPara = (): void => {
    if (para.length === 0) return;
    const t = para.join(' ').replace(/^(?:NOTE|TIP|IMPORTANT|WARNING|CAUTION):\s*/, '').replace(/^(?:[*.-]+|\d+\.|<\d+>)\s+/, '');
    para = [];
    doc.prose(adocInline(t));
  };

  const emitCode = (body: string[], kind: string, isLiteral: boolean): void => {
    const a = attrs;
    const isSource = a !== null && (a.style === 'source' || a.style === '' || (a.style === null && a.language !== null));
    let language: string | null = null;
    if (isSource) language = a?.language ?? sourceLanguage;
    else if (isLiteral || a?.style === 'literal') language = 'text';
    const title = blockTitle;
    const filename = title !== null ? asFilename(title) : null;
    const code = stripCallouts(dedent(body).join('\n'));
    if (code.trim().length > 0) {
      doc.code({
        code,
        origin: kind,
        declaredLanguage: language,
        filename,
        tab: null,
        caption: filename === null ? title : null,
      });
    }
    attrs = null;
    blockTitle = null;
  };

  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as string;
    if (isBlank(line)) {
      flushPara();
      i++;
      continue;
    }
    // Comments.
    if (line.startsWith('////')) {
      flushPara();
      i++;
      while (i < lines.length && !(lines[i] as string).startsWith('////')) i++;
      i++;
      continue;
    }
    if (line.startsWith('//')) {
      i++;
      continue;
    }
    if (para.length === 0) {
      const da = DOC_ATTRIBUTE.exec(line);
      if (da) {
        if (da[1] === 'source-language') sourceLanguage = (da[2] ?? '').trim() || null;
        if (da[1] === 'description') doc.description = (da[2] ?? '').trim();
        i++;
        continue;
      }
      const an = ANCHOR.exec(line);
      if (an) {
        anchor = an[1] ?? null;
        i++;
        continue;
      }
      const al = ATTRIBUTE_LIST.exec(line);
      if (al && !line.startsWith('[[')) {
        attrs = parseAttributes(al[1] ?? '');
        if (attrs.id !== null) anchor = attrs.id;
        i++;
        continue;
      }
      const bt = BLOCK_TITLE.exec(line);
      if (bt && !line.startsWith('..')) {
        blockTitle = (bt[1] ?? '').trim();
        i++;
        continue;
      }
      const h = HEADING.exec(line);
      if (h) {
        const level = (h[1] as string).length;
        const title = adocInline(h[2] as string);
        doc.heading(level, title, anchor ?? (level === 1 ? null : autoId(title)));
        anchor = null;
        attrs = null;
        blockTitle = null;
        i++;
        continue;
      }
    }
    // Delimited blocks.
    const delim = /^(-{4,}|\.{4,}|\+{4,}|={4,}|\*{4,}|_{4,}|-{2}|\|===|```)\s*$/.exec(line);
    if (delim) {
      flushPara();
      const d = delim[1] as string;
      if ((d.startsWith('-') && d.length >= 4) || d.startsWith('.') || d === '```') {
        const body: string[] = [];
        i++;
        while (i < lines.length && (lines[i] as string).trimEnd() !== d) body.push(lines[i++] as string);
        i++;
        if (d === '```') attrs = attrs ?? { style: 'source', language: null, id: null };
        emitCode(body, d.startsWith('.') ? 'literal' : 'listing', d.startsWith('.'));
        continue;
      }
      if (d.startsWith('+') || d === '|===') {
        // Passthrough (raw HTML) and tables: not prose.
        i++;
        while (i < lines.length && (lines[i] as string).trimEnd() !== d) i++;
        i++;
        attrs = null;
        blockTitle = null;
        continue;
      }
      // Example, sidebar, quote and open blocks: their content is read in place.
      i++;
      continue;
    }
    if (/^(?:include|image|toc)::/.test(line)) {
      i++;
      continue;
    }
    // [source] paragraph, or an indented literal paragraph.
    if (para.length === 0 && (attrs?.style === 'source' || /^\s+\S/.test(line))) {
      const body: string[] = [];
      while (i < lines.length && !isBlank(lines[i])) body.push(lines[i++] as string);
      // An indented literal paragraph is usually a command or its output: let detection decide.
      emitCode(body, attrs?.style === 'source' ? 'source' : 'literal', false);
      continue;
    }
    if (para.length === 0) {
      // A block title or attribute list not used by a block applies to nothing.
      attrs = null;
      blockTitle = null;
    }
    // List items start new paragraphs.
    if (para.length > 0 && /^(?:[*.-]+|\d+\.|<\d+>)\s+/.test(line)) flushPara();
    para.push(line.trim());
    i++;
  }
  flushPara();
  return doc.finish(url, contentHash, 'adoc');
}
