// The part of an included file a directive asks for, as each generator reads it: line ranges (Sphinx
// `:lines: 1-3,7`, AsciiDoc `lines=1..3;7`, fastapi `ln[1:3,7]`, pymdown `file:1:3`, VitePress `{3,}`),
// named regions (VitePress `#region name`, pymdown `--8<-- [start:name]`, AsciiDoc `tag::name[]`), Sphinx's
// `:start-after:`/`:end-before:` text and `:pyobject:` (a Python class or function by its dotted name), and
// `:dedent:`. Pure; every function returns null when the file does not hold what was asked for.

/** 1-based inclusive ranges; `to` null: to the end. Negative numbers count from the end (AsciiDoc `-1`). */
export interface LineRange {
  from: number;
  to: number | null;
}

const MAX_RANGES = 200;

export type RangeStyle = 'sphinx' | 'asciidoc' | 'colon';

// Sphinx `1-3,7,10-` (`-5`: up to 5); AsciiDoc `1..3;7;10..-1` (negative: from the end); `1:3,7` (fastapi, VitePress).
const RANGE: Record<RangeStyle, { separator: RegExp; part: RegExp }> = {
  sphinx: { separator: /\s*,\s*/, part: /^(\d{0,9})(?:(-)(\d{0,9}))?$/ },
  asciidoc: { separator: /\s*[;,]\s*/, part: /^(-?\d{1,9})(?:(\.\.)(-?\d{1,9}))?$/ },
  colon: { separator: /\s*,\s*/, part: /^(\d{0,9})(?:(:)(\d{0,9}))?$/ },
};

/** The ranges of a line spec in a generator's style; null when unreadable. */
export function parseLineRanges(spec: string, style: RangeStyle): LineRange[] | null {
  const { separator, part: syntax } = RANGE[style];
  const ranges: LineRange[] = [];
  for (const part of spec
    .trim()
    .replace(/^["']|["']$/g, '')
    .split(separator)) {
    if (part === '') continue;
    const m = syntax.exec(part);
    if (!m || (m[1] === '' && (m[3] ?? '') === '')) return null;
    const from = m[1] === '' ? 1 : Number(m[1]);
    const to = m[2] === undefined ? from : m[3] === '' || m[3] === undefined ? null : Number(m[3]);
    ranges.push({ from, to });
    if (ranges.length > MAX_RANGES) return null;
  }
  return ranges.length > 0 ? ranges : null;
}

/** The lines of `text` in the ranges, in order; null when no line is selected. */
export function selectLines(text: string, ranges: readonly LineRange[]): string | null {
  const lines = splitLines(text);
  const at = (n: number): number => (n < 0 ? lines.length + n + 1 : n);
  const out: string[] = [];
  // Ranges may overlap: the part stays within twice the file, however many there are.
  let budget = 2 * text.length + 1000;
  for (const r of ranges) {
    const from = Math.max(1, at(r.from));
    const to = Math.min(lines.length, r.to === null ? lines.length : at(r.to));
    for (let n = from; n <= to && budget > 0; n++) {
      out.push(lines[n - 1] as string);
      budget -= (lines[n - 1] as string).length + 1;
    }
  }
  return out.length > 0 ? out.join('\n') : null;
}

function splitLines(text: string): string[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Lines between a start and an end marker of `name`, marker lines of any name left out; null when absent. */
function between(text: string, isStart: (line: string) => boolean, isEnd: (line: string) => boolean, isMarker: (line: string) => boolean): string | null {
  const out: string[] = [];
  let inside = false;
  let found = false;
  for (const line of splitLines(text)) {
    if (!inside && isStart(line)) {
      inside = true;
      found = true;
      continue;
    }
    if (inside && isEnd(line)) {
      inside = false;
      continue;
    }
    if (inside && !isMarker(line)) out.push(line);
  }
  return found ? out.join('\n') : null;
}

// VitePress: `// #region name`, `# #region name`, `<!-- #region name -->`, `/* #region name */`, `#pragma region`.
const REGION_MARKER = /^\s*(?:\/\/|#|<!--|\/\*|--|;|%|')?\s*#?(?:pragma\s+)?(end)?region\b\s*(.*?)\s*(?:-->|\*\/)?\s*$/;

/** A VitePress region; null when the file has no region of that name. */
export function selectRegion(text: string, name: string): string | null {
  const marker = (line: string): RegExpExecArray | null => (line.includes('region') ? REGION_MARKER.exec(line) : null);
  return between(
    text,
    (line) => {
      const m = marker(line);
      return m !== null && m[1] === undefined && m[2] === name;
    },
    (line) => {
      const m = marker(line);
      return m !== null && m[1] !== undefined && (m[2] === name || m[2] === '');
    },
    (line) => marker(line) !== null,
  );
}

// pymdown-extensions snippets: `--8<-- [start:name]` … `--8<-- [end:name]`, usually in a comment.
const SECTION_MARKER = /--8<--\s*\[(start|end):([\w-]+)\]/;

/** A pymdown snippet section; null when absent. */
export function selectSection(text: string, name: string): string | null {
  return between(
    text,
    (line) => SECTION_MARKER.exec(line)?.[1] === 'start' && SECTION_MARKER.exec(line)?.[2] === name,
    (line) => SECTION_MARKER.exec(line)?.[1] === 'end' && SECTION_MARKER.exec(line)?.[2] === name,
    (line) => SECTION_MARKER.test(line),
  );
}

const TAG_MARKER = /\b(tag|end)::([\w-]+)\[\]/;

/** AsciiDoc tagged regions (`tag::name[]` … `end::name[]`); `!name` leaves one out. Null when none is found. */
export function selectTags(text: string, tags: readonly string[]): string | null {
  const wanted = new Set(tags.filter((t) => !t.startsWith('!')));
  const unwanted = new Set(tags.filter((t) => t.startsWith('!')).map((t) => t.slice(1)));
  const everything = wanted.size === 0 || wanted.has('**') || wanted.has('*');
  const open: string[] = [];
  const out: string[] = [];
  let found = false;
  for (const line of splitLines(text)) {
    const m = TAG_MARKER.exec(line);
    if (m) {
      const name = m[2] as string;
      // Nesting past this is not a file a person tagged; bounded so each line's check stays short.
      if (m[1] === 'tag' && open.length < 64) open.push(name);
      else if (open.includes(name)) open.splice(open.lastIndexOf(name), 1);
      continue;
    }
    const inWanted = everything ? !open.some((t) => unwanted.has(t)) : open.some((t) => wanted.has(t)) && !open.some((t) => unwanted.has(t));
    if (inWanted) {
      if (!everything) found = true;
      out.push(line);
    }
  }
  if (everything) return out.join('\n');
  return found ? out.join('\n') : null;
}

/** Sphinx's `:start-after:`, `:start-at:`, `:end-before:`, `:end-at:`; null when a marker is not in the file. */
export function selectBetweenText(text: string, options: { startAfter?: string; startAt?: string; endBefore?: string; endAt?: string }): string | null {
  let lines = splitLines(text);
  const start = options.startAfter ?? options.startAt;
  if (start !== undefined && start !== '') {
    const i = lines.findIndex((l) => l.includes(start));
    if (i < 0) return null;
    lines = lines.slice(options.startAfter !== undefined ? i + 1 : i);
  }
  const end = options.endBefore ?? options.endAt;
  if (end !== undefined && end !== '') {
    const i = lines.findIndex((l) => l.includes(end));
    if (i < 0) return null;
    lines = lines.slice(0, options.endBefore !== undefined ? i : i + 1);
  }
  return lines.join('\n');
}

function indentOf(line: string): number {
  return /^[ \t]*/.exec(line)?.[0].length ?? 0;
}

/** Sphinx's `:pyobject:`: a class or function (`Name`, `Class.method`) with its decorators; null when absent. */
export function selectPyObject(text: string, dotted: string): string | null {
  const lines = splitLines(text);
  let from = 0;
  let to = lines.length;
  let minIndent = 0;
  let found: [number, number] | null = null;
  for (const name of dotted.split('.')) {
    const def = new RegExp(`^([ \\t]*)(?:async[ \\t]+)?(?:def|class)[ \\t]+${escapeRegExp(name)}\\b`);
    found = null;
    for (let i = from; i < to; i++) {
      const m = def.exec(lines[i] as string);
      if (!m || (m[1] as string).length < minIndent) continue;
      const indent = (m[1] as string).length;
      let end = i + 1;
      while (end < to && ((lines[end] as string).trim() === '' || indentOf(lines[end] as string) > indent)) end++;
      let start = i;
      while (start > from && /^\s*@/.test(lines[start - 1] as string) && indentOf(lines[start - 1] as string) === indent) start--;
      found = [start, end];
      minIndent = indent + 1;
      break;
    }
    if (found === null) return null;
    [from, to] = [found[0], found[1]];
  }
  if (found === null) return null;
  const body = lines.slice(found[0], found[1]);
  while (body.length > 0 && (body[body.length - 1] as string).trim() === '') body.pop();
  return body.join('\n');
}

/** Every line losing up to `n` leading spaces (Sphinx `:dedent:`); without `n`, the common indentation. */
export function dedentLines(text: string, n?: number): string {
  const lines = splitLines(text);
  const common = n ?? Math.min(...lines.filter((l) => l.trim() !== '').map(indentOf), Infinity);
  const cut = Number.isFinite(common) ? common : 0;
  return lines.map((l) => l.slice(Math.min(cut, indentOf(l)))).join('\n');
}

/** AsciiDoc's `indent=N`: the common indentation replaced by N spaces. */
export function reindentLines(text: string, n: number): string {
  const pad = ' '.repeat(Math.max(0, Math.min(n, 40)));
  return dedentLines(text)
    .split('\n')
    .map((l) => (l.trim() === '' ? l : pad + l))
    .join('\n');
}
