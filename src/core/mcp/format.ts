import { truncateCode } from './tokens.js';

/**
 * Snippets rendered for a model to read: one numbered section per snippet with its facts, the code in a
 * fence tagged with its language, and clear separators. Long code is cut on a line boundary at a token
 * budget, with a marker that says how much is missing and where the full code is.
 */

export interface SnippetForModel {
  id: number | string;
  title: string;
  description: string;
  language: string;
  code: string;
  source_url: string;
  filename?: string | null;
  /** 'page' when the search found the snippet through its page's text rather than the snippet itself. */
  match?: 'snippet' | 'page';
  /** Screening at index time: `possible_prompt_injection` when the snippet or its page addresses AI assistants. */
  flags?: string[];
  /** The sentence that raised `flags`. */
  flagged_passage?: string;
}

/** Per-snippet code budget: generous for a few results, tighter for a full page of 100. */
export function codeTokenBudget(snippetCount: number): number {
  return Math.max(300, Math.min(1500, Math.floor(30_000 / Math.max(1, snippetCount))));
}

export const SEPARATOR = '\n\n----------------------------------------\n\n';

/** A fence longer than any backtick run inside the code, so code that contains ``` cannot close it early. */
export function fenceFor(code: string): string {
  let longest = 0;
  for (const run of code.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return '`'.repeat(Math.max(3, longest + 1));
}

function fenceLanguage(language: string): string {
  // An info string may not contain backticks or line breaks; "text" adds nothing for the reader.
  const clean = language
    .trim()
    .toLowerCase()
    .replace(/[`\s]+/g, '-');
  return clean === 'text' || clean === 'plaintext' ? '' : clean;
}

export function formatSnippet(snippet: SnippetForModel, index: number, budget: number): string {
  const lines: string[] = [`## ${index}. ${snippet.title.trim() || '(untitled snippet)'}`];
  const facts = [`Language: ${snippet.language || 'text'}`];
  if (snippet.filename) facts.push(`File: ${snippet.filename}`);
  facts.push(`Source: ${snippet.source_url}`);
  if (snippet.match === 'page') facts.push('page match');
  lines.push(facts.join(' | '));
  if (snippet.description.trim()) lines.push('', snippet.description.trim());
  const cut = truncateCode(snippet.code.replace(/\s+$/, ''), budget);
  const fence = fenceFor(cut.text);
  lines.push('', `${fence}${fenceLanguage(snippet.language)}`, cut.text, fence);
  if (cut.truncated) {
    lines.push(
      `[… code truncated: showing ${cut.keptTokens} of ${cut.totalTokens} tokens, ${cut.omittedLines} more line${cut.omittedLines === 1 ? '' : 's'} not shown. ` +
        `Full code: call get_page_markdown with url="${snippet.source_url}".]`,
    );
  }
  return lines.join('\n');
}

export function formatSnippets(snippets: SnippetForModel[], firstIndex: number): string {
  const budget = codeTokenBudget(snippets.length);
  return snippets.map((s, i) => formatSnippet(s, firstIndex + i, budget)).join(SEPARATOR);
}
