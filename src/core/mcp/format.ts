import type { McpSession } from './session.js';
import { snippetSessionKey } from './session.js';
import { countTokens, truncateCode } from './tokens.js';
import { neutraliseDocumentationTags, wrapDocumentation } from './trust.js';

/**
 * Snippets rendered for a model to read: one numbered section per snippet with its facts, the code in a
 * fence tagged with its language, and clear separators. Compact by default (title, language, library@version,
 * URL, code, and a description only when it says more than the title); verbose adds every fact. A page
 * section (kind 'section') is shown as its breadcrumb, its facts and its markdown (its prose with the code
 * blocks it holds), cut on a line outside code when it does not fit. A result's further matches on its page
 * are named after it in one line.
 */

export interface SnippetForModel {
  id: number | string;
  /** 'section': a page section; its title is its breadcrumb, its code its markdown. Default 'snippet'. */
  kind?: 'snippet' | 'section';
  title: string;
  description: string;
  language: string;
  code: string;
  source_url: string;
  /** What opens it, when something does (a local repository's file on disk); shown when it differs from source_url. */
  link?: string;
  filename?: string | null;
  /** 'page' when the search found the snippet through its page's text rather than the snippet itself. */
  match?: 'snippet' | 'page';
  /** The library the snippet comes from and its version, shown as library@version. */
  library?: string;
  version?: string;
  /** Screening flags (e.g. possible_prompt_injection) and the passage that raised them. */
  flags?: string[] | null;
  flagged_passage?: string | null;
  /** More from this page: its other matches, folded under this result (search.ts). */
  more?: Array<{ id: number; kind: 'snippet' | 'section'; title: string; source_url: string }>;
}

export interface SnippetFormatOptions {
  /** Every fact and the description even when it repeats the title. */
  verbose?: boolean;
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

function words(text: string): string[] {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .split(/[^\p{L}\p{N}_]+/u)
    .filter((w) => w !== '');
}

/** A description must carry at least this many words the title lacks to be worth its tokens. */
export const MIN_DESCRIPTION_EXTRA_WORDS = 3;

/**
 * Whether a description says something the title does not: not empty, not the title itself or a part of it
 * (compared as lower-case words, punctuation ignored), and at least MIN_DESCRIPTION_EXTRA_WORDS words that
 * are not in the title.
 */
export function descriptionAddsSomething(title: string, description: string): boolean {
  const described = words(description);
  if (described.length === 0) return false;
  const titled = words(title);
  if (` ${titled.join(' ')} `.includes(` ${described.join(' ')} `)) return false;
  const inTitle = new Set(titled);
  return described.filter((w) => !inTitle.has(w)).length >= MIN_DESCRIPTION_EXTRA_WORDS;
}

function libraryAtVersion(snippet: SnippetForModel): string | undefined {
  if (!snippet.library) return undefined;
  return snippet.version ? `${snippet.library}@${snippet.version}` : snippet.library;
}

function factsLine(snippet: SnippetForModel, verbose: boolean): string {
  const library = libraryAtVersion(snippet);
  if (!verbose) {
    const facts = [snippet.kind === 'section' ? 'page section' : snippet.language || 'text', ...(library ? [library] : []), snippet.source_url];
    if (snippet.link && snippet.link !== snippet.source_url) facts.push(`open: ${snippet.link}`);
    if (snippet.match === 'page') facts.push('page match');
    return facts.join(' · ');
  }
  const facts = [snippet.kind === 'section' ? `Page section, code in ${snippet.language || 'text'}` : `Language: ${snippet.language || 'text'}`];
  if (library) facts.push(`Library: ${library}`);
  if (snippet.filename) facts.push(`File: ${snippet.filename}`);
  facts.push(`Source: ${snippet.source_url}`);
  if (snippet.link && snippet.link !== snippet.source_url) facts.push(`Open: ${snippet.link}`);
  if (snippet.match === 'page') facts.push('page match');
  return facts.join(' | ');
}

/** One line naming a snippet's screening flags and the passage that raised them; '' when unflagged. */
export function flagLine(snippet: Pick<SnippetForModel, 'flags' | 'flagged_passage'>): string {
  if (!snippet.flags || snippet.flags.length === 0) return '';
  const passage = snippet.flagged_passage?.replace(/\s+/g, ' ').trim();
  return `⚠ flagged: ${snippet.flags.join(', ')}${passage ? ` — ${passage}` : ''}`;
}

/** The folded matches of the result's page, in one line: titles and ids (get_page_markdown opens each URL). */
function moreLine(snippet: SnippetForModel): string[] {
  if (!snippet.more?.length) return [];
  return ['', `More from this page: ${snippet.more.map((m) => `${JSON.stringify(m.title)} (${m.source_url})`).join('; ')}`];
}

/** A section's markdown cut to `budget` tokens on a line boundary, any code fence it cut open closed again. */
function sectionText(snippet: SnippetForModel, budget: number): string[] {
  const cut = truncateCode(snippet.code.replace(/\s+$/, ''), budget);
  if (!cut.truncated) return ['', cut.text];
  let open: string | null = null;
  for (const line of cut.text.split('\n')) {
    const fence = /^\s*(`{3,}|~{3,})(.*)$/.exec(line);
    if (!fence) continue;
    if (open === null) open = fence[1]!;
    else if (fence[1]![0] === open[0] && fence[1]!.length >= open.length && fence[2]!.trim() === '') open = null;
  }
  return [
    '',
    open === null ? cut.text : `${cut.text}\n${open}`,
    `[… section truncated: showing ${cut.keptTokens} of ${cut.totalTokens} tokens. The whole section: call get_page_markdown with url="${snippet.source_url}".]`,
  ];
}

export function formatSnippet(snippet: SnippetForModel, index: number, budget: number, options: SnippetFormatOptions = {}): string {
  const verbose = options.verbose ?? false;
  const lines: string[] = [`## ${index}. ${snippet.title.trim() || '(untitled snippet)'}`, factsLine(snippet, verbose)];
  const flagged = flagLine(snippet);
  if (flagged) lines.push(flagged);
  if (snippet.kind === 'section') return [...lines, ...sectionText(snippet, budget), ...moreLine(snippet)].join('\n');
  const description = snippet.description.trim();
  if (description && (verbose || descriptionAddsSomething(snippet.title, description))) lines.push('', description);
  const cut = truncateCode(snippet.code.replace(/\s+$/, ''), budget);
  const fence = fenceFor(cut.text);
  lines.push('', `${fence}${fenceLanguage(snippet.language)}`, cut.text, fence);
  if (cut.truncated) {
    lines.push(
      `[… code truncated: showing ${cut.keptTokens} of ${cut.totalTokens} tokens, ${cut.omittedLines} more line${cut.omittedLines === 1 ? '' : 's'} not shown. ` +
        `Full code: call get_page_markdown with url="${snippet.source_url}".]`,
    );
  }
  return [...lines, ...moreLine(snippet)].join('\n');
}

/** The one-line stand-in for a snippet this session has already been shown in full. */
export function formatAlreadyShown(snippet: SnippetForModel, index: number): string {
  return `## ${index}. already shown: ${snippet.title.trim() || '(untitled snippet)'} ${snippet.source_url}`;
}

/** How a snippet appears in a budgeted answer. */
export type SnippetState = 'full' | 'truncated' | 'already_shown';

export interface BudgetedSnippet {
  /** Its number in the answer (the result's rank across pages). */
  index: number;
  snippet: SnippetForModel;
  state: SnippetState;
}

/** What a budgeted answer left out, for the caller's footer. */
export interface SnippetOmission {
  /** The numbers of the results left out, as the answer numbers them; empty when nothing was. */
  leftOut: number[];
  /** The max_tokens that shows every result of this page in full. */
  tokensForAll: number;
  maxTokens: number;
  /** How many results this session had already been shown in full (each one line in the answer). */
  alreadyShown: number;
}

export interface SnippetBudgetRequest extends SnippetFormatOptions {
  /** Best first. */
  snippets: SnippetForModel[];
  /** The number of the first snippet (offset + 1). */
  firstIndex: number;
  /** The most tokens the whole text may have: header, block, footer and separators included. */
  maxTokens: number;
  /** docdex's own lines before the documentation block. */
  header: string;
  /** docdex's own lines after the block, given what was left out; '' for none. */
  footer: (omission: SnippetOmission) => string;
  /** Snippets this session was shown in full become one-line references, and the ones shown now are recorded. */
  session?: McpSession;
  /** Show every snippet in full even when the session has seen it. */
  fresh?: boolean;
}

export interface SnippetBudgetAnswer {
  text: string;
  /** Tokens of `text`, counted exactly. */
  tokens: number;
  shown: BudgetedSnippet[];
  leftOut: number[];
  tokensForAll: number;
}

interface Candidate extends BudgetedSnippet {
  text: string;
  /** Its text plus the separator before it. */
  cost: number;
}

const SEPARATOR_TOKENS = countTokens(SEPARATOR);
// The truncation marker line, with a long URL: reserved when sizing a cut first result's code.
const TRUNCATION_MARKER_RESERVE = 80;

function assemble(request: SnippetBudgetRequest, sections: string[], omission: SnippetOmission): string {
  const block = sections.length > 0 ? wrapDocumentation(sections.join(SEPARATOR)) : '';
  return [request.header, block, request.footer(omission)].filter((part) => part !== '').join('\n\n');
}

/** A section's tokens as the block will hold it (tags neutralised), with the separator before it. */
function costOf(text: string): number {
  return countTokens(neutraliseDocumentationTags(text)) + SEPARATOR_TOKENS;
}

function candidatesOf(request: SnippetBudgetRequest): Candidate[] {
  return request.snippets.map((snippet, i) => {
    const index = request.firstIndex + i;
    const seen = request.fresh !== true && (request.session?.hasShown(snippetSessionKey(snippet.id)) ?? false);
    const text = seen ? formatAlreadyShown(snippet, index) : formatSnippet(snippet, index, Number.POSITIVE_INFINITY, request);
    return { index, snippet, state: seen ? 'already_shown' : 'full', text, cost: costOf(text) };
  });
}

/** The first result cut to `tokens` in all (code with the truncation marker, never less than a few lines). */
function truncatedFirst(first: Candidate, request: SnippetBudgetRequest, tokens: number): Candidate {
  // Cut, it names none of the results folded under it (`more`): that list, uncapped, could outgrow the budget
  // by itself and leave the answer empty. They are still found on the next page or with a larger max_tokens.
  const { more: _more, ...snippet } = first.snippet;
  const shell = countTokens(formatSnippet({ ...snippet, code: '' }, first.index, 0, request)) + TRUNCATION_MARKER_RESERVE;
  const text = formatSnippet(snippet, first.index, Math.max(20, tokens - shell), request);
  return { ...first, state: 'truncated', text, cost: costOf(text) };
}

/** Greedy, best first: each candidate whole if it fits what is left, else left out; the first may be cut. */
function chooseWithin(candidates: Candidate[], request: SnippetBudgetRequest, available: number): Candidate[] {
  const chosen: Candidate[] = [];
  let left = available;
  const first = candidates[0];
  let start = 0;
  if (first && first.state === 'full' && first.cost > left) {
    // The best result alone is larger than the budget: cut, it takes at most half, so others can follow;
    // whatever they leave unused is given back to it below.
    const cut = truncatedFirst(first, request, Math.floor(left / 2));
    chosen.push(cut);
    left -= cut.cost;
    start = 1;
  }
  for (const candidate of candidates.slice(start)) {
    if (candidate.cost > left) continue;
    chosen.push(candidate);
    left -= candidate.cost;
  }
  // What the others left unused goes back to the cut first result.
  if (start === 1 && left > 0) chosen[0] = truncatedFirst(first!, request, chosen[0]!.cost + left);
  return chosen;
}

function omissionOf(candidates: Candidate[], chosen: Candidate[], tokensForAll: number, maxTokens: number, alreadyShown: number): SnippetOmission {
  const kept = new Set(chosen.map((c) => c.index));
  return { leftOut: candidates.filter((c) => !kept.has(c.index)).map((c) => c.index), tokensForAll, maxTokens, alreadyShown };
}

/**
 * Snippets fitted to a token budget. The answer (header, the third-party block of snippets, footer) is at
 * most `maxTokens` tokens by the tokenizer. Snippets go in best first, each whole or not at all, so a code
 * block is never cut in half; a snippet that does not fit is left out and the next ones are tried. One
 * exception keeps an answer from being empty: when the first result alone is larger than the budget, it is
 * shown cut on a line boundary with the truncation marker, in at most half the budget. The footer is told
 * which results were left out and what max_tokens would show them all.
 */
export function formatSnippetsWithinBudget(request: SnippetBudgetRequest): SnippetBudgetAnswer {
  const { maxTokens } = request;
  const candidates = candidatesOf(request);
  const alreadyShown = candidates.filter((c) => c.state === 'already_shown').length;
  const whole = assemble(
    request,
    candidates.map((c) => c.text),
    { leftOut: [], tokensForAll: 0, maxTokens, alreadyShown },
  );
  const tokensForAll = countTokens(whole);
  let chosen = candidates;
  let text = whole;
  let tokens = tokensForAll;
  if (tokensForAll > maxTokens) {
    const everythingLeftOut = { leftOut: candidates.map((c) => c.index), tokensForAll, maxTokens, alreadyShown };
    const reserve = countTokens(assemble(request, [], everythingLeftOut)) + countTokens(wrapDocumentation(''));
    chosen = chooseWithin(candidates, request, maxTokens - reserve);
    // Sums of parts can differ from the count of the joined text by a token or two: trust the exact count.
    for (let recuts = 0; ;) {
      text = assemble(
        request,
        chosen.map((c) => c.text),
        omissionOf(candidates, chosen, tokensForAll, maxTokens, alreadyShown),
      );
      tokens = countTokens(text);
      if (tokens <= maxTokens || chosen.length === 0) break;
      const last = chosen[chosen.length - 1]!;
      // The cut first result alone still over: cut it shorter rather than answer with nothing.
      const recut = last.state === 'truncated' && recuts < 4 && last.cost > tokens - maxTokens + 40;
      recuts += recut ? 1 : 0;
      chosen = recut ? [...chosen.slice(0, -1), truncatedFirst(last, request, last.cost - (tokens - maxTokens) - 10)] : chosen.slice(0, -1);
    }
  }
  request.session?.markShown(chosen.filter((c) => c.state === 'full').map((c) => snippetSessionKey(c.snippet.id)));
  const shown = chosen.map(({ index, snippet, state }) => ({ index, snippet, state }));
  return { text, tokens, shown, leftOut: omissionOf(candidates, chosen, tokensForAll, maxTokens, alreadyShown).leftOut, tokensForAll };
}

// Past this many ranges the list costs more than it tells.
const MAX_LISTED_RANGES = 6;

/** Result numbers as short ranges: [4, 9, 10, 11] → "#4, #9–#11"; a long list ends with "and N more". */
export function describeResultNumbers(numbers: number[]): string {
  const ranges: string[] = [];
  for (let i = 0; i < numbers.length; i++) {
    let j = i;
    while (j + 1 < numbers.length && numbers[j + 1] === numbers[j]! + 1) j += 1;
    if (ranges.length === MAX_LISTED_RANGES) return `${ranges.join(', ')} and ${numbers.length - i} more`;
    ranges.push(j > i ? `#${numbers[i]}–#${numbers[j]}` : `#${numbers[i]}`);
    i = j;
  }
  return ranges.join(', ');
}
