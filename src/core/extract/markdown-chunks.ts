// micromark copies the document's whole event list each time a container closes inside another one
// (documentContinue in micromark's document tokenizer hands the exits to an EditMap, whose consume()
// rebuilds the list): a long list whose items hold nested lists or block quotes costs its length times
// the document's size, quadratic in the size. A long document is therefore parsed in chunks, cut where
// every container is closed: at a line starting in column 0 after a blank line, outside fenced code,
// HTML blocks that run across blank lines, and front matter. The markdown walk reads only the blocks
// and their order, which a cut does not change (a list cut in two becomes two lists). Reference
// definitions (`[label]: url`, usually gathered at the end) are copied into every chunk so that reference
// links read as their text in every chunk, up to MAX_CARRIED_DEFINITIONS characters of them.

/** Documents up to twice this size are parsed whole; longer ones in chunks of about this size. */
export const MARKDOWN_CHUNK_CHARS = 8 * 1024;

/** Reference definitions copied into each chunk; chunks grow to twice their size so the copies stay a fraction. */
const MAX_CARRIED_DEFINITIONS = 32 * 1024;
// One-line link reference definitions: `[label]: destination "optional title"` (not `[^1]:` footnotes).
const DEFINITION = /^ {0,3}\[(?!\^)(?:[^\][\\\n]|\\.){1,999}\]:[ \t]*(?:<[^>\n]*>|[^\s<]\S*)(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'|\([^)\n]*\)))?[ \t]*$/gm;

const FRONTMATTER = /^(?:---|\+\+\+)\r?\n[\s\S]*?\r?\n(?:---|\+\+\+|\.\.\.)[ \t]*(?:\r?\n|$)/;
const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})/;
const FENCE_CLOSE = /^ {0,3}(`{3,}|~{3,})[ \t]*\r?$/;
const HTML_SPANNING: Array<[RegExp, RegExp]> = [
  [/^ {0,3}<(?:pre|script|style|textarea)(?:[\s>]|$)/i, /<\/(?:pre|script|style|textarea)>/i],
  [/^ {0,3}<!--/, /-->/],
  [/^ {0,3}<\?/, /\?>/],
  [/^ {0,3}<!\[CDATA\[/, /\]\]>/],
  [/^ {0,3}<![A-Za-z]/, />/],
];

interface ScanState {
  fence: { char: string; length: number } | null;
  htmlEnd: RegExp | null;
  previousBlank: boolean;
}

/** Updates the state for one line; true when the line is inside (or opens/closes) a multi-line block. */
function insideBlock(line: string, st: ScanState): boolean {
  if (st.fence !== null) {
    const close = FENCE_CLOSE.exec(line);
    const mark = close?.[1];
    if (mark !== undefined && mark[0] === st.fence.char && mark.length >= st.fence.length) st.fence = null;
    return true;
  }
  if (st.htmlEnd !== null) {
    if (st.htmlEnd.test(line)) st.htmlEnd = null;
    return true;
  }
  return false;
}

/** Opens a fence or a spanning HTML block when the line starts one. */
function openBlock(line: string, st: ScanState): void {
  const fence = FENCE_OPEN.exec(line)?.[1];
  if (fence !== undefined) {
    st.fence = { char: fence[0] as string, length: fence.length };
    return;
  }
  for (const [open, end] of HTML_SPANNING) {
    const m = open.exec(line);
    if (m !== null) {
      if (!end.test(line.slice(m[0].length))) st.htmlEnd = end;
      return;
    }
  }
}

/** The reference definitions to copy into each chunk, at most MAX_CARRIED_DEFINITIONS characters. */
function carriedDefinitions(text: string): string {
  let carried = '';
  for (const m of text.matchAll(DEFINITION)) {
    if (carried.length + m[0].length + 2 > MAX_CARRIED_DEFINITIONS) break;
    // A blank line after each: a line that is no definition after all stays a paragraph of its own.
    carried += `${m[0]}\n\n`;
  }
  return carried;
}

/** Cut points: the offsets of lines where every block is closed, at least `size` characters apart. */
function cutPoints(text: string, size: number): number[] {
  const cuts: number[] = [];
  const st: ScanState = { fence: null, htmlEnd: null, previousBlank: false };
  let chunkStart = 0;
  let pos = FRONTMATTER.exec(text)?.[0].length ?? 0;
  while (pos < text.length) {
    const newline = text.indexOf('\n', pos);
    const end = newline < 0 ? text.length : newline;
    const line = text.slice(pos, end);
    if (!insideBlock(line, st)) {
      const blank = /^[ \t]*\r?$/.test(line);
      const first = line[0];
      if (!blank && st.previousBlank && first !== ' ' && first !== '\t' && pos - chunkStart >= size) {
        cuts.push(pos);
        chunkStart = pos;
      }
      openBlock(line, st);
      st.previousBlank = blank;
    } else {
      st.previousBlank = false;
    }
    pos = end + 1;
  }
  return cuts;
}

/**
 * The document cut at safe points into chunks of at least MARKDOWN_CHUNK_CHARS (the last may be
 * shorter), each with the document's reference definitions: appended to every chunk but the last
 * (each ends where every block is closed), put before the last (which may end inside a fence).
 */
export function markdownChunks(text: string): string[] {
  if (text.length <= 2 * MARKDOWN_CHUNK_CHARS) return [text];
  const carried = carriedDefinitions(text);
  const cuts = cutPoints(text, Math.max(MARKDOWN_CHUNK_CHARS, 2 * carried.length));
  if (cuts.length === 0) return [text];
  const chunks: string[] = [];
  let start = 0;
  for (const cut of cuts) {
    chunks.push(carried === '' ? text.slice(start, cut) : `${text.slice(start, cut)}\n\n${carried}`);
    start = cut;
  }
  chunks.push(carried === '' ? text.slice(start) : `${carried}${text.slice(start)}`);
  return chunks;
}
