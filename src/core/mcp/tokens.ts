import { countTokens as countO200k, decode, encode } from 'gpt-tokenizer';

/**
 * Token counts for the MCP tools' budgets. o200k_base is the encoding of current OpenAI models; other
 * assistants' tokenizers differ by a few percent, which a budget tolerates, while characters / 4 assumes
 * English prose and is far off on code and non-English text.
 */
export function countTokens(text: string): number {
  return text.length === 0 ? 0 : countO200k(text);
}

/** The longest prefix of `text` with at most `maxTokens` tokens, cut on a token boundary. */
export function takeTokens(text: string, maxTokens: number): string {
  if (maxTokens <= 0) return '';
  const tokens = encode(text);
  if (tokens.length <= maxTokens) return text;
  return decode(tokens.slice(0, maxTokens));
}

/** Splits `text` into pieces of at most `maxTokens` tokens each (a last resort for one enormous line). */
export function splitByTokens(text: string, maxTokens: number): string[] {
  const tokens = encode(text);
  const pieces: string[] = [];
  for (let i = 0; i < tokens.length; i += maxTokens) pieces.push(decode(tokens.slice(i, i + maxTokens)));
  return pieces;
}

/**
 * Cuts code to a token budget on a line boundary, so the model never sees half an identifier. Returns the kept
 * text and what was dropped, for the visible truncation marker.
 */
export function truncateCode(code: string, maxTokens: number): { text: string; truncated: boolean; totalTokens: number; keptTokens: number; omittedLines: number } {
  const totalTokens = countTokens(code);
  if (totalTokens <= maxTokens) return { text: code, truncated: false, totalTokens, keptTokens: totalTokens, omittedLines: 0 };
  const lines = code.split('\n');
  const kept: string[] = [];
  let used = 0;
  for (const line of lines) {
    const cost = countTokens(line) + 1;
    if (used + cost > maxTokens) break;
    kept.push(line);
    used += cost;
  }
  // A first line longer than the whole budget (minified code): keep a token-exact slice of it.
  if (kept.length === 0) {
    const slice = takeTokens(lines[0] ?? '', maxTokens);
    return { text: slice, truncated: true, totalTokens, keptTokens: countTokens(slice), omittedLines: lines.length - 1 };
  }
  return { text: kept.join('\n'), truncated: true, totalTokens, keptTokens: used, omittedLines: lines.length - kept.length };
}
