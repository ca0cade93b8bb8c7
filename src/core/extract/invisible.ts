// Characters a reader does not see but an assistant reading the text does: bidi overrides and isolates
// (the "Trojan Source" trick that shows code in a different order than it runs), zero-width characters
// (hidden words, invisible differences between identifiers) and control characters. Stripped from
// everything extraction hands on, so what an assistant is given is what a person sees on the page.
import { codeHash } from './snippet.js';
import type { ExtractResult, ExtractedSnippet } from './types.js';

// Bidi embeddings/overrides U+202A–U+202E, isolates U+2066–U+2069, and the marks U+200E, U+200F, U+061C.
const BIDI = '\\u202A-\\u202E\\u2066-\\u2069\\u200E\\u200F\\u061C';
// Zero-width space, non-joiner, joiner, word joiner, and the byte-order mark used as a zero-width no-break space.
const ZERO_WIDTH = '\\u200B-\\u200D\\u2060\\uFEFF';
// C0 controls but tab, line feed and carriage return; DEL; C1 controls.
const CONTROLS = '\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F';

const IN_TEXT = new RegExp(`[${BIDI}${ZERO_WIDTH}${CONTROLS}]`, 'g');
// Code keeps its control characters (a form feed or an escape in a sample is the sample's business) but
// not what makes it read differently from what it does.
const IN_CODE = new RegExp(`[${BIDI}${ZERO_WIDTH}]`, 'g');

/** Prose (titles, descriptions, headings, page markdown) without invisible and control characters. */
export function visibleText(s: string): string {
  IN_TEXT.lastIndex = 0;
  return IN_TEXT.test(s) ? s.replace(IN_TEXT, '') : s;
}

/** Code without bidi controls and zero-width characters. */
export function visibleCode(s: string): string {
  IN_CODE.lastIndex = 0;
  return IN_CODE.test(s) ? s.replace(IN_CODE, '') : s;
}

function visibleSnippet(s: ExtractedSnippet): ExtractedSnippet {
  const code = visibleCode(s.code);
  const out: ExtractedSnippet = {
    ...s,
    title: visibleText(s.title),
    description: visibleText(s.description),
    code,
    codeHash: code === s.code ? s.codeHash : codeHash(code),
    filename: s.filename === null ? null : visibleText(s.filename),
  };
  if (typeof s.section === 'string') out.section = visibleText(s.section);
  if (typeof s.tab === 'string') out.tab = visibleText(s.tab);
  return out;
}

/** The extraction with every text field stripped of invisible characters (see above). */
export function visibleResult(r: ExtractResult): ExtractResult {
  const p = r.page;
  return {
    ...r,
    page: {
      ...p,
      title: visibleText(p.title),
      description: visibleText(p.description),
      siteName: p.siteName === null ? null : visibleText(p.siteName),
      markdown: visibleText(p.markdown),
      ...(p.headings === undefined ? {} : { headings: p.headings.map((h) => ({ ...h, text: visibleText(h.text) })) }),
    },
    snippets: r.snippets.map(visibleSnippet),
  };
}
