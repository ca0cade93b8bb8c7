// HTML comments in a markdown page: a reader of the rendered page never sees them, so they are no part of the
// page's text that docdex stores and serves (`get_page_markdown`, the page search text). They are kept for
// screening only, like an HTML page's comments and hidden elements: an instruction aimed at an assistant hidden
// in a README's comment flags the page's snippets and is never handed to a model as the page's text.
//
// Code is left exactly as written: fenced blocks, lines indented as code, and inline code spans, where a comment
// is something the docs show, not hide. A comment that is never closed is left as text. Linear in the length.

/** The page's text without its HTML comments, and the comments' bodies in order. */
export interface MarkdownComments {
  text: string;
  comments: string[];
}

interface Fence {
  char: string;
  length: number;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const INDENTED = /^(?: {4}|\t)/;

function fenceOpening(line: string): Fence | null {
  const m = FENCE.exec(line);
  if (m === null) return null;
  const marker = m[1] as string;
  // A backtick fence's info string holds no backtick (CommonMark 4.5).
  if (marker[0] === '`' && line.slice(m[0].length).includes('`')) return null;
  return { char: marker[0] as string, length: marker.length };
}

function closesFence(line: string, fence: Fence): boolean {
  const m = FENCE.exec(line);
  return m !== null && (m[1] as string)[0] === fence.char && (m[1] as string).length >= fence.length && line.slice(m[0].length).trim() === '';
}

/** Where the inline code span opened by the backtick run at `at` ends (after its closing run), or -1. */
function codeSpanEnd(line: string, at: number): number {
  let run = 0;
  while (line[at + run] === '`') run++;
  let i = at + run;
  while (i < line.length) {
    const next = line.indexOf('`', i);
    if (next < 0) return -1;
    let close = 0;
    while (line[next + close] === '`') close++;
    if (close === run) return next + close;
    i = next + close;
  }
  return -1;
}

interface LineScan {
  /** The line's text outside comments. */
  kept: string;
  /** Bodies of the comments closed on this line; `open`: the body so far of one still open at its end. */
  comments: string[];
  open: string | null;
}

/** One prose line: comments outside code spans removed; a comment left open runs on to the next lines. */
function scanProseLine(line: string): LineScan {
  const comments: string[] = [];
  let kept = '';
  let i = 0;
  while (i < line.length) {
    const tick = line.indexOf('`', i);
    const comment = line.indexOf('<!--', i);
    if (comment < 0 || (tick >= 0 && tick < comment)) {
      if (tick < 0) break;
      const end = codeSpanEnd(line, tick);
      const to = end < 0 ? tick + 1 : end;
      kept += line.slice(i, to);
      i = to;
      continue;
    }
    kept += line.slice(i, comment);
    const close = line.indexOf('-->', comment + 4);
    if (close < 0) return { kept, comments, open: line.slice(comment + 4) };
    comments.push(line.slice(comment + 4, close));
    i = close + 3;
  }
  return { kept: kept + line.slice(i), comments, open: null };
}

/**
 * Splits a markdown page's text into what a reader sees and its HTML comments (see above). Lines emptied by a
 * removed comment are dropped; everything else is kept byte for byte.
 */
export function splitMarkdownComments(markdown: string): MarkdownComments {
  if (!markdown.includes('<!--')) return { text: markdown, comments: [] };
  const lines = markdown.split('\n');
  const out: string[] = [];
  const comments: string[] = [];
  let fence: Fence | null = null;
  // An open comment: its body so far and the lines it took, given back as text if it never closes.
  let open: { body: string; from: number; prefix: string } | null = null;
  for (let n = 0; n < lines.length; n++) {
    let line = lines[n] as string;
    if (open !== null) {
      const close = line.indexOf('-->');
      if (close < 0) {
        open.body += `\n${line}`;
        continue;
      }
      comments.push(`${open.body}\n${line.slice(0, close)}`);
      line = open.prefix + line.slice(close + 3);
      open = null;
      if (line.trim() === '') continue;
    }
    if (fence !== null) {
      if (closesFence(line, fence)) fence = null;
      out.push(line);
      continue;
    }
    fence = fenceOpening(line);
    if (fence !== null || INDENTED.test(line) || !line.includes('<!--')) {
      out.push(line);
      continue;
    }
    const scan = scanProseLine(line);
    comments.push(...scan.comments);
    if (scan.open !== null) {
      open = { body: scan.open, from: n, prefix: scan.kept };
      continue;
    }
    if (scan.kept.trim() !== '' || line.trim() === '') out.push(scan.kept);
  }
  // Never closed: not a comment to a renderer either way that can be relied on; kept as written.
  if (open !== null) out.push(...lines.slice(open.from));
  return { text: out.join('\n'), comments };
}
