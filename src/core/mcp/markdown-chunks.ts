import { countTokens, splitByTokens } from './tokens.js';

/**
 * Splitting a page's markdown into chunks an assistant can page through. Chunks break between blocks
 * (paragraphs, headings, fenced code), never inside a code fence, so every chunk is valid markdown on its own:
 * a chunk that ended inside a fence would turn the rest of the model's context into "code". A single block
 * larger than the budget is the one exception: a paragraph is split between lines (then sentences, then
 * tokens), and a fence is split between lines with the fence closed and reopened around each piece.
 */

export interface MarkdownBlock {
  text: string;
  tokens: number;
  heading: boolean;
}

export interface BlockRange {
  /** First block (inclusive) and last block (exclusive) of the range. */
  start: number;
  end: number;
  text: string;
  tokens: number;
}

const SEPARATOR = '\n\n';
const SEPARATOR_TOKENS = countTokens(SEPARATOR);
const FENCE_OPEN = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const HEADING = /^ {0,3}#{1,6}(?:\s|$)/;

interface RawBlock {
  lines: string[];
  kind: 'text' | 'heading' | 'fence';
  /** For fences: the opening line and the closing line ('' when the fence was never closed). */
  open?: string;
  close?: string;
}

function parseBlocks(markdown: string): RawBlock[] {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const blocks: RawBlock[] = [];
  let text: string[] = [];
  const flush = () => {
    if (text.length > 0) blocks.push({ lines: text, kind: 'text' });
    text = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const open = FENCE_OPEN.exec(line);
    // A backtick fence's info string may not contain a backtick (CommonMark), else it is inline code.
    if (open && !(open[2]!.startsWith('`') && open[3]!.includes('`'))) {
      flush();
      const marker = open[2]!;
      const closing = new RegExp(`^ {0,3}${marker[0] === '`' ? '`' : '~'}{${marker.length},}\\s*$`);
      const body: string[] = [];
      let close = '';
      for (i += 1; i < lines.length; i++) {
        if (closing.test(lines[i]!)) {
          close = lines[i]!;
          break;
        }
        body.push(lines[i]!);
      }
      // An unclosed fence runs to the end of the page (CommonMark); close it so chunks stay well formed.
      blocks.push({ lines: body, kind: 'fence', open: line, close: close || `${' '.repeat(open[1]!.length)}${marker}` });
      continue;
    }
    if (line.trim() === '') {
      flush();
      continue;
    }
    if (HEADING.test(line)) {
      flush();
      blocks.push({ lines: [line], kind: 'heading' });
      continue;
    }
    text.push(line);
  }
  flush();
  return blocks;
}

function blockText(block: RawBlock): string {
  if (block.kind === 'fence') return [block.open!, ...block.lines, block.close!].join('\n');
  return block.lines.join('\n');
}

/** Packs units (lines or pieces) into strings of at most `budget` tokens, joined by `joiner`. */
function packUnits(units: string[], budget: number, joiner: string): string[] {
  const out: string[] = [];
  let current: string[] = [];
  let used = 0;
  const joinerTokens = countTokens(joiner);
  for (const unit of units) {
    const cost = countTokens(unit);
    if (cost > budget) {
      if (current.length > 0) out.push(current.join(joiner));
      current = [];
      used = 0;
      out.push(...splitByTokens(unit, budget));
      continue;
    }
    const extra = current.length > 0 ? joinerTokens + cost : cost;
    if (used + extra > budget && current.length > 0) {
      out.push(current.join(joiner));
      current = [unit];
      used = cost;
    } else {
      current.push(unit);
      used += extra;
    }
  }
  if (current.length > 0) out.push(current.join(joiner));
  return out;
}

function splitOversized(block: RawBlock, budget: number): string[] {
  if (block.kind === 'fence') {
    const overhead = countTokens(`${block.open!}\n\n${block.close!}`);
    const inner = Math.max(16, budget - overhead);
    return packUnits(block.lines, inner, '\n').map((piece) => `${block.open!}\n${piece}\n${block.close!}`);
  }
  const units = block.lines.flatMap((line) => (countTokens(line) > budget ? line.split(/(?<=[.!?])\s+/) : [line]));
  return packUnits(units, budget, '\n');
}

/**
 * The page as blocks of at most `maxBlockTokens` tokens each (oversized blocks already split), with their
 * token counts.
 */
export function markdownBlocks(markdown: string, maxBlockTokens: number): MarkdownBlock[] {
  const out: MarkdownBlock[] = [];
  for (const block of parseBlocks(markdown)) {
    const text = blockText(block);
    const tokens = countTokens(text);
    if (tokens <= maxBlockTokens) {
      out.push({ text, tokens, heading: block.kind === 'heading' });
      continue;
    }
    for (const piece of splitOversized(block, maxBlockTokens)) out.push({ text: piece, tokens: countTokens(piece), heading: false });
  }
  return out;
}

function joinRange(blocks: MarkdownBlock[], start: number, end: number): string {
  return blocks
    .slice(start, end)
    .map((b) => b.text)
    .join(SEPARATOR);
}

/**
 * Greedy packing of consecutive blocks into ranges of at most `budget` tokens (counted exactly on the joined
 * text). A range does not end on a heading when it can help it: the heading moves to the next range, with
 * the section it introduces. `maxRanges` stops early when only the first ranges are needed.
 */
export function packBlocks(blocks: MarkdownBlock[], budget: number, maxRanges = Number.POSITIVE_INFINITY): BlockRange[] {
  const ranges: BlockRange[] = [];
  let start = 0;
  while (start < blocks.length && ranges.length < maxRanges) {
    let end = start;
    let estimate = 0;
    while (end < blocks.length) {
      const cost = blocks[end]!.tokens + (end > start ? SEPARATOR_TOKENS : 0);
      if (end > start && estimate + cost > budget) break;
      estimate += cost;
      end += 1;
    }
    // Token merges across a separator can make the exact count differ from the sum; trust the exact count.
    let text = joinRange(blocks, start, end);
    let tokens = countTokens(text);
    while (tokens > budget && end - start > 1) {
      end -= 1;
      text = joinRange(blocks, start, end);
      tokens = countTokens(text);
    }
    if (end < blocks.length && end - start > 1 && blocks[end - 1]!.heading) {
      end -= 1;
      text = joinRange(blocks, start, end);
      tokens = countTokens(text);
    }
    ranges.push({ start, end, text, tokens });
    start = end;
  }
  return ranges;
}
