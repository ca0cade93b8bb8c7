// From raw code blocks plus their context to snippet records: code clean-up,
// hashing, language resolution, titles, in-page de-duplication and positions.
import { composeDescription, composeTitle, type BlockContext } from './context.js';
import { md5Hex } from './encoding.js';
import { languageFromFilename } from './filename.js';
import { detectLanguage } from './language.js';
import { normalizeLanguage } from './language-names.js';
import type { ExtractedSnippet, LanguageConfidence, SkippedBlock } from './types.js';
import { collapseSpaces } from './whitespace.js';

/** A code block as a format extractor found it, before context is attached. */
export interface RawBlock {
  code: string;
  /** Element name (`pre`, `code`, `programlisting`, `table`) or block kind (`fenced`, `indented`, `literal`, ...). */
  origin: string;
  declaredLanguage: string | null;
  filename: string | null;
  tab: string | null;
  /** A caption that is not a filename ("Example configuration"). */
  caption: string | null;
}

// Bigger blocks are generated dumps (minified bundles, data tables), not examples,
// and they would dominate the index and the search ranking.
export const MAX_CODE_CHARS = 200_000;

/** Drop blank lines at both ends and line-end carriage returns; everything else stays as written. */
export function cleanCode(code: string): string {
  let s = code.includes('\r') ? code.replace(/\r\n?/g, '\n') : code;
  // Leading blank lines (only whitespace up to a newline).
  let start = 0;
  for (;;) {
    const nl = s.indexOf('\n', start);
    if (nl < 0) break;
    if (s.slice(start, nl).trim().length > 0) break;
    start = nl + 1;
  }
  if (start > 0) s = s.slice(start);
  // Trailing blank lines, and the trailing whitespace of the last line.
  let end = s.length;
  while (end > 0) {
    const c = s.charCodeAt(end - 1);
    if (c === 10 || c === 32 || c === 9 || c === 13 || c === 12 || c === 11) end--;
    else break;
  }
  // Keep the indentation of the last line's own content intact: only whitespace after it was cut.
  return s.slice(0, end);
}

// Something normalizeCode would change: a carriage return, whitespace ending a
// line, or an empty first or last line. Most code has none of these, and the
// split into lines is then skipped.
const NOT_NORMAL = /\r|[^\S\n](?:\n|$)|^\n|\n$/;

/** The form the hash is computed over: trailing whitespace per line trimmed, blank edge lines stripped. */
export function normalizeCode(code: string): string {
  if (!NOT_NORMAL.test(code)) return code;
  const lines = code.replace(/\r\n?/g, '\n').split('\n');
  for (let i = 0; i < lines.length; i++) lines[i] = (lines[i] as string).trimEnd();
  let a = 0;
  let b = lines.length;
  while (a < b && (lines[a] as string).length === 0) a++;
  while (b > a && (lines[b - 1] as string).length === 0) b--;
  return lines.slice(a, b).join('\n');
}

export function codeHash(code: string): string {
  return md5Hex(normalizeCode(code));
}

export function resolveLanguage(code: string, declared: string | null, filename: string | null): { language: string; confidence: LanguageConfidence } {
  if (declared !== null) {
    const n = normalizeLanguage(declared);
    if (n.length > 0) return { language: n, confidence: 'declared' };
  }
  if (filename !== null) {
    const f = languageFromFilename(filename);
    if (f !== null) return { language: f, confidence: 'filename' };
  }
  const d = detectLanguage(code);
  if (d.confident) return { language: d.language, confidence: 'detected' };
  return { language: 'text', confidence: 'unknown' };
}

export function pageUrlWithoutFragment(url: string): string {
  const i = url.indexOf('#');
  return i >= 0 ? url.slice(0, i) : url;
}

export interface FinalisedSnippets {
  snippets: ExtractedSnippet[];
  origins: string[];
  skipped: SkippedBlock[];
  /** Resolved language per raw block (for markdown fences), '' when the block was dropped as empty. */
  blockLanguages: string[];
}

export function preview(code: string): string {
  return collapseSpaces(code.slice(0, 80)).trim();
}

export function finaliseSnippets(blocks: readonly RawBlock[], contexts: readonly BlockContext[], pageUrl: string, pageHeading: string): FinalisedSnippets {
  const base = pageUrlWithoutFragment(pageUrl);
  const seen = new Set<string>();
  const snippets: ExtractedSnippet[] = [];
  const origins: string[] = [];
  const skipped: SkippedBlock[] = [];
  const blockLanguages: string[] = [];
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i] as RawBlock;
    const ctx = contexts[i] as BlockContext;
    const code = cleanCode(block.code);
    if (code.trim().length === 0) {
      skipped.push({ reason: 'empty', tag: block.origin, preview: '' });
      blockLanguages.push('');
      continue;
    }
    const filename = block.filename ?? ctx.filenameHint;
    const { language, confidence } = resolveLanguage(code, block.declaredLanguage, filename);
    blockLanguages.push(language);
    if (code.length > MAX_CODE_CHARS) {
      skipped.push({ reason: 'too-large', tag: block.origin, preview: preview(code) });
      continue;
    }
    const hash = codeHash(code);
    if (seen.has(hash)) {
      skipped.push({ reason: 'duplicate', tag: block.origin, preview: preview(code) });
      continue;
    }
    seen.add(hash);
    const title = composeTitle(pageHeading, ctx.section, block.tab) || filename || base;
    snippets.push({
      title: collapseSpaces(title).trim(),
      description: composeDescription([block.caption, ctx.before, ctx.after]),
      language,
      code,
      filename,
      codeHash: hash,
      position: snippets.length,
      sourceUrl: ctx.anchor ? `${base}#${ctx.anchor}` : base,
      languageConfidence: confidence,
      tab: block.tab,
      section: ctx.section,
    });
    origins.push(block.origin);
  }
  return { snippets, origins, skipped, blockLanguages };
}

/** A markdown code fence long enough not to be closed by backticks inside the code. */
export function fence(code: string, language: string): string {
  let longest = 0;
  let run = 0;
  // Only code with a backtick needs the character scan.
  for (let i = code.indexOf('`'); i >= 0 && i < code.length; i++) {
    if (code.charCodeAt(i) === 96) {
      run++;
      if (run > longest) longest = run;
    } else {
      run = 0;
    }
  }
  const ticks = '`'.repeat(Math.max(3, longest + 1));
  const info = language && language !== 'text' ? language : '';
  return `${ticks}${info}\n${code}\n${ticks}`;
}
