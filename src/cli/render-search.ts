import type { SearchedLibrary, SearchResponse, SearchResult } from '../core/search/search.js';
import { ansi, highlight } from './highlight.js';

// A result shows the start of its code (a section: of its text); the whole of it is one `--json` or
// `GET /snippets/{id}` away.
const MAX_CODE_LINES = 20;

function clip(code: string): { text: string; more: number } {
  const lines = code.split('\n');
  if (lines.length <= MAX_CODE_LINES) return { text: code, more: 0 };
  return { text: lines.slice(0, MAX_CODE_LINES).join('\n'), more: lines.length - MAX_CODE_LINES };
}

/** A flagged result's warning: the flags, and the passage that raised them on one line (it is third-party text). */
function flagLine(flags: string[], passage: string | undefined): string {
  const names = flags.map((f) => f.replace(/_/g, ' ')).join(', ');
  if (passage === undefined) return `   ! ${names}`;
  const oneLine = passage.replace(/\s+/g, ' ').trim();
  return `   ! ${names}: ${JSON.stringify(oneLine.length > 200 ? `${oneLine.slice(0, 197)}...` : oneLine)}`;
}

/** Said whenever `--source` named no library exactly: which one was searched in its place. */
export function closestLibraryLine(library: SearchedLibrary): string {
  return `No library is named "${library.requested}"; searched the closest match, ${library.name}${library.version ? `@${library.version}` : ''}.`;
}

function withheldLine(n: number): string {
  return `${n} result${n === 1 ? '' : 's'} withheld as possible prompt injection (DOCDEX_SCREENING=strict).`;
}

type Paint = Record<'bold' | 'dim' | 'underline' | 'cyan' | 'green' | 'yellow' | 'magenta' | 'gray', (s: string) => string>;

/** The other matching units of a result's page, folded under it: one line each. */
function moreLines(item: SearchResult, c: Paint): string[] {
  if (!item.more?.length) return [];
  return [c.dim('   more from this page:'), ...item.more.map((m) => c.dim(`     · ${m.title} (${m.kind} ${m.id}) ${m.source_url}`))];
}

/** A result's body: a snippet's description and code; a section's text (its prose with its code blocks). */
function bodyLines(item: SearchResult, c: Paint, colour: boolean): string[] {
  const out: string[] = [];
  if (item.kind !== 'section' && item.description) out.push(`   ${item.description.length > 300 ? `${item.description.slice(0, 297)}...` : item.description}`);
  const { text, more } = clip(item.code);
  const code = colour && item.kind !== 'section' ? highlight(text, item.language) : text;
  out.push(
    code
      .split('\n')
      .map((line) => `     ${line}`)
      .join('\n'),
  );
  if (more > 0) out.push(c.dim(`     ... ${more} more lines (docdex search --json, or GET /snippets/${item.id})`));
  return out;
}

/**
 * Search results as terminal text: title, URL, source and language, then the code (coloured in a TTY); a
 * section shows its breadcrumb as its title and its text as its body; a page's further matches are listed
 * under its first result.
 * `atVersion`: each result's library as name@version (a project search, where the version is the point).
 */
export function renderSearch(result: SearchResponse, options: { colour: boolean; atVersion?: boolean }): string {
  const c: Paint = options.colour ? ansi : { bold: String, dim: String, underline: String, cyan: String, green: String, yellow: String, magenta: String, gray: String };
  const out: string[] = [];
  if (result.library && !result.library.exact) out.push(c.yellow(closestLibraryLine(result.library)));
  if (result.corrected?.length) out.push(c.dim(`Also searched for: ${result.corrected.map((x) => `${x.from} → ${x.to}`).join(', ')}`));
  if (result.items.length === 0) {
    if (result.withheld) out.push(withheldLine(result.withheld));
    out.push(result.offset > 0 ? `No more results (${result.total} in all).` : 'Nothing found.');
    return out.join('\n');
  }
  result.items.forEach((item, i) => {
    const n = result.offset + i + 1;
    out.push('');
    out.push(`${c.bold(`${n}. ${item.title || '(untitled)'}`)}`);
    out.push(`   ${c.underline(c.cyan(item.source_url))}`);
    // A local repository's identity URL opens nothing; the file on disk does (issue #49).
    if (item.link && item.link !== item.source_url) out.push(`   open: ${c.underline(c.cyan(item.link))}`);
    const source = item.version ? `${item.source_name}${options.atVersion ? '@' : ' '}${item.version}` : item.source_name;
    const kind = item.kind === 'section' ? 'section · ' : '';
    out.push(c.dim(`   ${source} · ${kind}${item.language} · score ${item.score}${item.match === 'page' ? ' · matched on the page text' : ''}`));
    if (item.flags?.length) out.push(c.yellow(flagLine(item.flags, item.flagged_passage)));
    out.push(...bodyLines(item, c, options.colour), ...moreLines(item, c));
  });
  const shown = result.offset + result.items.length;
  if (result.withheld) out.push('', c.yellow(withheldLine(result.withheld)));
  out.push('');
  out.push(c.dim(`${result.offset + 1}-${shown} of ${result.total}${shown < result.total ? ` · next page: --offset ${shown}` : ''}`));
  return out.join('\n');
}
