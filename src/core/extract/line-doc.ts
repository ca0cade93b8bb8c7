// Shared output side of the line-based readers (reStructuredText, AsciiDoc): the
// context stream, the raw code blocks and a markdown rendition, built together.
import { resolveContexts, streamHeadings, type StreamItem } from './context.js';
import { fence, finaliseSnippets, type RawBlock } from './snippet.js';
import type { ExtractedPage, ExtractResult, PageFormat } from './types.js';
import { collapseSpaces } from './whitespace.js';

export class LineDocument {
  readonly items: StreamItem[] = [];
  readonly blocks: RawBlock[] = [];
  private readonly md: Array<string | { block: number }> = [];
  title: string | null = null;
  description = '';

  heading(level: number, text: string, anchor: string | null): void {
    const t = collapseSpaces(text).trim();
    if (t.length === 0) return;
    if (level === 1 && this.title === null) this.title = t;
    this.items.push({ kind: 'heading', level, text: t, anchor });
    this.md.push(`${'#'.repeat(Math.min(6, level))} ${t}`);
  }

  /** A pseudo-heading (an API entry) that scopes the blocks under it until `pop`. */
  entry(level: number, text: string, anchor: string | null): void {
    const t = collapseSpaces(text).trim();
    if (t.length === 0) return;
    this.items.push({ kind: 'heading', level, text: t, anchor });
    this.md.push(`**${t}**`);
  }

  pop(level: number): void {
    this.items.push({ kind: 'pop', level });
  }

  prose(text: string, markdown?: string): void {
    const t = collapseSpaces(text).trim();
    if (t.length === 0) return;
    this.items.push({ kind: 'prose', text: t });
    this.md.push(markdown ?? t);
  }

  /** Markdown-only output (list items, table rows) that is not context. */
  raw(markdown: string): void {
    if (markdown.trim().length > 0) this.md.push(markdown);
  }

  code(block: RawBlock): void {
    const index = this.blocks.length;
    this.blocks.push(block);
    this.items.push({ kind: 'code', block: index });
    this.md.push({ block: index });
  }

  finish(url: string, contentHash: string, format: PageFormat): ExtractResult {
    const title = this.title ?? '';
    const contexts = resolveContexts(this.items, this.blocks.length);
    const fin = finaliseSnippets(this.blocks, contexts, url, title);
    const parts: string[] = [];
    for (const m of this.md) {
      if (typeof m === 'string') {
        parts.push(m);
        continue;
      }
      const lang = fin.blockLanguages[m.block] ?? '';
      const b = this.blocks[m.block];
      if (lang !== '' && b !== undefined) parts.push(fence(b.code.replace(/^\s*\n/, '').trimEnd(), lang));
    }
    const page: ExtractedPage = {
      url,
      title,
      description: this.description,
      siteName: null,
      site: null,
      canonicalUrl: null,
      links: [],
      noFollow: false,
      markdown: parts.join('\n\n').trim(),
      contentHash,
      format,
      headings: streamHeadings(this.items),
    };
    return { page, snippets: fin.snippets, skipped: fin.skipped, origins: fin.origins };
  }
}

/** Expand tabs to the next multiple of 8, as docutils and asciidoctor do. */
export function expandTabs(line: string): string {
  if (!line.includes('\t')) return line;
  let out = '';
  for (const ch of line) {
    if (ch === '\t') out += ' '.repeat(8 - (out.length % 8));
    else out += ch;
  }
  return out;
}

export function indentOf(line: string): number {
  let i = 0;
  while (i < line.length && line.charCodeAt(i) === 32) i++;
  return i;
}

export function isBlank(line: string | undefined): boolean {
  return line === undefined || line.trim().length === 0;
}

/** Remove the common leading indentation of non-blank lines. */
export function dedent(lines: readonly string[]): string[] {
  let min = Infinity;
  for (const l of lines) if (!isBlank(l)) min = Math.min(min, indentOf(l));
  if (!Number.isFinite(min)) min = 0;
  return lines.map((l) => (isBlank(l) ? '' : l.slice(min)));
}
