import { z } from 'zod';
import { describeResultNumbers } from '../format.js';
import type { BudgetedSnippet, SnippetOmission } from '../format.js';
import { SOURCE_TRUST } from '../trust.js';
import { plural } from './common.js';

/**
 * The arguments and structured output every snippet-returning tool shares (get_content, search_project):
 * the token budget, compact or verbose snippets, and session de-duplication.
 */

export const DEFAULT_MAX_TOKENS = 5_000;
/** Below this, docdex's own header and footer leave no room for a snippet. */
export const MIN_MAX_TOKENS = 300;
export const MAX_TOKENS_LIMIT = 100_000;

export const maxTokensArg = z
  .number()
  .int()
  .min(MIN_MAX_TOKENS)
  .max(MAX_TOKENS_LIMIT)
  .default(DEFAULT_MAX_TOKENS)
  .describe(
    `Most tokens the answer may have, everything included (default ${DEFAULT_MAX_TOKENS}). Snippets fill it best first, each whole; the answer says which results were left out and the max_tokens that shows them all.`,
  );
export const verboseArg = z.boolean().default(false).describe('Every fact of each snippet (file name, description even when it repeats the title). Default false: compact.');
export const freshArg = z.boolean().default(false).describe('Show every snippet in full, even one already shown earlier in this session (by default such a snippet is named in one line).');

// A long query is quoted shortened: the answer's own lines must leave room for snippets at the smallest budget.
const MAX_QUOTED_QUERY_CHARS = 120;

/** The query as the answer quotes it: whole when short, else its start and an ellipsis. */
export function quoteQuery(query: string): string {
  const shown = query.length <= MAX_QUOTED_QUERY_CHARS ? query : `${query.slice(0, MAX_QUOTED_QUERY_CHARS - 1)}…`;
  return JSON.stringify(shown);
}

const snippetOutput = z.object({
  number: z.number().int(),
  id: z.string(),
  kind: z.enum(['snippet', 'section']).describe('section: a page section (its title is its breadcrumb; the text shows its prose and code blocks)'),
  title: z.string(),
  language: z.string(),
  source_url: z.string(),
  link: z.string().optional().describe('What opens it: a web URL, or a file:// URL of the file on the server’s disk; absent when nothing does'),
  library: z.string().optional(),
  version: z.string().optional(),
  state: z.enum(['full', 'truncated', 'already_shown']),
  flags: z.array(z.string()).optional(),
  flagged_passage: z.string().optional(),
  more: z
    .array(z.object({ id: z.string(), kind: z.enum(['snippet', 'section']), title: z.string(), source_url: z.string() }))
    .optional()
    .describe("More from this page: the page's other matches, folded under this result so that results come from distinct pages"),
});

export const budgetedSnippetsOutput = z.object({
  /** The snippets' text comes from indexed third-party documentation. */
  source_trust: z.literal(SOURCE_TRUST),
  page: z.number().int(),
  total: z.number().int(),
  total_pages: z.number().int(),
  max_tokens: z.number().int(),
  tokens: z.number().int(),
  /** The max_tokens that would show every result of this page in full. */
  tokens_for_all: z.number().int(),
  snippets: z.array(snippetOutput),
  left_out: z.array(z.number().int()).describe("The numbers of this page's results left out to stay within max_tokens."),
});

/** The structured form of the snippets an answer shows (no code: the text carries it). */
export function structuredSnippets(shown: BudgetedSnippet[]): Array<z.output<typeof snippetOutput>> {
  return shown.map(({ index, snippet, state }) => ({
    number: index,
    id: String(snippet.id),
    kind: snippet.kind ?? 'snippet',
    title: snippet.title,
    language: snippet.language,
    source_url: snippet.source_url,
    ...(snippet.link ? { link: snippet.link } : {}),
    ...(snippet.library ? { library: snippet.library } : {}),
    ...(snippet.version ? { version: snippet.version } : {}),
    state,
    ...(snippet.flags && snippet.flags.length > 0 ? { flags: snippet.flags } : {}),
    ...(snippet.flagged_passage ? { flagged_passage: snippet.flagged_passage } : {}),
    ...(snippet.more?.length ? { more: snippet.more.map((m) => ({ id: String(m.id), kind: m.kind, title: m.title, source_url: m.source_url })) } : {}),
  }));
}

/**
 * The footer of a budgeted answer: the results already shown in this session, the ones left out and how to
 * get them, and the next page. `again` is the call that gives the same results ("call get_content again with
 * the same arguments"); `nextPage` the call for the next page, or null on the last one.
 */
export function budgetFooter(again: string, page: number, nextPage: string | null): (omission: SnippetOmission) => string {
  return (omission) => {
    const lines: string[] = [];
    if (omission.alreadyShown > 0) {
      lines.push(
        `${plural(omission.alreadyShown, 'result')} already shown in full earlier in this session ${omission.alreadyShown === 1 ? 'is' : 'are'} named in one line; fresh=true shows them again.`,
      );
    }
    if (omission.leftOut.length > 0) {
      lines.push(
        `Left out ${omission.leftOut.length} of this page's results to stay within max_tokens=${omission.maxTokens} (${describeResultNumbers(omission.leftOut)}): ` +
          `${again} and max_tokens=${Math.min(MAX_TOKENS_LIMIT, omission.tokensForAll)} to see them${nextPage === null ? '.' : `, or page=${page + 1} for the next results.`}`,
      );
    }
    if (nextPage !== null) lines.push(`More results: ${nextPage}.`);
    return lines.join('\n');
  };
}
