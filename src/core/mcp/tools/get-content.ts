import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { listCrawlJobs } from '../../crawl/jobs.js';
import { UserError } from '../../errors.js';
import { MAX_LIBRARY_NAME_CHARS, MAX_LIBRARY_VERSION_CHARS } from '../../library-ref.js';
import { MAX_QUERY_CHARS } from '../../search/query.js';
import { applyScreening } from '../../search/screening.js';
import { searchSnippetsShared } from '../../search/shared.js';
import { formatSnippetsWithinBudget } from '../format.js';
import type { SnippetForModel, SnippetOmission } from '../format.js';
import { libraryLabel, resolveLibraryForModel } from '../libraries.js';
import { MAX_PROJECT_ARG_CHARS } from '../project.js';
import { listLibrarySnippets } from '../queries.js';
import type { McpSession } from '../session.js';
import { registerDocdexTool } from '../tool.js';
import type { DocdexTool, McpDeps, ToolOutput } from '../tool.js';
import { SOURCE_TRUST, TRUST_NOTE } from '../trust.js';
import { countTokens } from '../tokens.js';
import { limitArg, pageArg, plural } from './common.js';
import { searchProjectForModel } from './search-project.js';
import { budgetFooter, budgetedSnippetsOutput, freshArg, maxTokensArg, quoteQuery, structuredSnippets, verboseArg } from './snippet-args.js';

export const GET_CONTENT = 'get_content';

// The search accepts offsets up to 1000 (src/core/search/search.ts): deeper pages of one query are noise.
const MAX_SEARCH_DEPTH = 1000;

const inputSchema = z.object({
  library_id: z
    .string()
    .trim()
    .min(1)
    .max(MAX_LIBRARY_NAME_CHARS + 1 + MAX_LIBRARY_VERSION_CHARS)
    .describe(
      'The library: its id from search_libraries, its name ("fastapi"; fuzzy, typos tolerated; its latest version), or name@version: exact ("react@18.3.1"), the newest of a major ("react@18") or a semver range ("react@^18.2", "react@~18.2.1"). Give library_id or project, not both.',
    )
    .optional(),
  project: z
    .string()
    .trim()
    .min(1)
    .max(MAX_PROJECT_ARG_CHARS)
    .optional()
    .describe("Instead of library_id: a project's name or root directory, to search all its libraries at the versions it uses (as search_project does; query required)."),
  query: z.string().max(MAX_QUERY_CHARS).optional().describe('What to look for inside the library, e.g. "dependency injection" or "useEffect cleanup". Omit to browse the library\'s snippets.'),
  limit: limitArg,
  page: pageArg,
  max_tokens: maxTokensArg,
  verbose: verboseArg,
  fresh: freshArg,
});

/** Exactly one of library_id and project; a project search needs a query. */
const checkedInput = inputSchema.superRefine((args, ctx) => {
  if ((args.library_id === undefined) === (args.project === undefined)) {
    ctx.addIssue({ code: 'custom', path: ['library_id'], message: "give exactly one of library_id (one library) and project (all of a project's libraries at the versions it uses)." });
  } else if (args.project !== undefined && !args.query?.trim()) {
    ctx.addIssue({ code: 'custom', path: ['query'], message: 'query is required with project; to browse one library, call get_content with its library_id from get_project_libraries.' });
  }
});

// With project, the answer is a project search: the project's fields instead of one library's.
const outputSchema = budgetedSnippetsOutput.extend({
  library_id: z.string().optional(),
  library: z.string().optional(),
  version: z.string().optional(),
  project: z.string().optional(),
  query: z.string(),
});

type GetContentArgs = z.output<typeof inputSchema>;

function footerFor(args: GetContentArgs, libraryId: string, query: string, hasNextPage: boolean): (omission: SnippetOmission) => string {
  const sameQuery = !query ? '' : query.length <= 120 ? `, query=${JSON.stringify(query)}` : ', the same query';
  const next = hasNextPage ? `call get_content with library_id="${libraryId}"${sameQuery}, page=${args.page + 1}` : null;
  return budgetFooter('call get_content again with the same arguments', args.page, next);
}

interface FoundSnippets {
  snippets: SnippetForModel[];
  total: number;
  remarks: string[];
  /** Snippets of this page withheld by DOCDEX_SCREENING=strict. */
  withheld: number;
}

function withheldRemark(n: number): string {
  return `${plural(n, 'snippet')} on this page withheld: screening flagged ${n === 1 ? 'it' : 'them'} as possible prompt injection (DOCDEX_SCREENING=strict).`;
}

async function findSnippets(deps: McpDeps, libraryId: string, query: string, args: GetContentArgs, signal?: AbortSignal): Promise<FoundSnippets> {
  const offset = (args.page - 1) * args.limit;
  if (!query) {
    const result = await listLibrarySnippets(deps.pool, libraryId, { limit: args.limit, offset });
    const screened = applyScreening(result.items, deps.config.screening);
    return { snippets: screened.items, total: result.total, remarks: screened.withheld > 0 ? [withheldRemark(screened.withheld)] : [], withheld: screened.withheld };
  }
  if (offset > MAX_SEARCH_DEPTH) {
    throw new UserError(`page ${args.page} is too deep: query results can be paged through their first ${MAX_SEARCH_DEPTH} matches only.`, {
      code: 'validation_error',
      hint: 'Use a more specific query, or a lower page number.',
    });
  }
  const result = await searchSnippetsShared(deps.pool, { query, source: libraryId, limit: args.limit, offset, screening: deps.config.screening }, signal);
  const remarks: string[] = [];
  if (result.corrected && result.corrected.length > 0) {
    remarks.push(`Spelling corrected: ${result.corrected.map((c) => `"${c.from}" → "${c.to}"`).join(', ')}.`);
  }
  if (result.fallback) remarks.push('Few snippets matched the query itself; snippets marked "page match" come from pages whose text matches.');
  const withheld = result.withheld ?? 0;
  if (withheld > 0) remarks.push(withheldRemark(withheld));
  return { snippets: result.items, total: result.total, remarks, withheld };
}

/** Where a crawled library without snippets stands: its latest crawl job, to follow with get_crawl_status. */
async function crawlNote(deps: McpDeps, library: { id: string; kind: string }): Promise<string> {
  if (library.kind !== 'crawl') return '';
  const job = (await listCrawlJobs(deps.pool, { sourceId: library.id, limit: 1 })).items[0];
  return job ? ` (its crawl may still be running: call get_crawl_status with job_id="${job.job_id}")` : '';
}

/**
 * `signal`: the client cancelled; a search still waiting for its turn is then not run (searchSnippetsShared).
 * `session`: snippets it has seen in full are named in one line (unless `fresh`), and it records the new ones.
 */
export async function getContent(deps: McpDeps, args: GetContentArgs, session?: McpSession, signal?: AbortSignal): Promise<ToolOutput> {
  if (args.library_id === undefined) {
    const project = { project: args.project, query: args.query ?? '', limit: args.limit, page: args.page, max_tokens: args.max_tokens, verbose: args.verbose, fresh: args.fresh };
    return searchProjectForModel(deps, project, GET_CONTENT, session, signal);
  }
  const { library, note } = await resolveLibraryForModel(deps.pool, args.library_id);
  const query = args.query?.trim() ?? '';
  const label = libraryLabel(library);
  const found = await findSnippets(deps, library.id, query, args, signal);
  const { total } = found;
  const totalPages = Math.max(1, Math.ceil(total / args.limit));
  const what = query ? `${plural(total, 'snippet')} ${total === 1 ? 'matches' : 'match'} ${quoteQuery(query)}` : plural(total, 'snippet');
  const preamble = [note, ...found.remarks].filter((s): s is string => s !== undefined);
  const structuredBase = {
    source_trust: SOURCE_TRUST,
    library_id: library.id,
    library: library.name,
    version: library.version,
    query,
    page: args.page,
    total,
    total_pages: totalPages,
    max_tokens: args.max_tokens,
  };

  if (found.snippets.length === 0) {
    const reason =
      found.withheld > 0
        ? `Every snippet on page ${args.page} was withheld; more may be on page ${args.page + 1}.`
        : total > 0
          ? `Page ${args.page} is past the end: ${label} has ${what} (${totalPages} page${totalPages === 1 ? '' : 's'} of ${args.limit}).`
          : query
            ? `No snippets in ${label} match ${quoteQuery(query)}. Try other or fewer words, or call get_content without query to browse ${label}.`
            : `${label} has no snippets yet${await crawlNote(deps, library)}.`;
    const text = [...preamble, reason].join('\n');
    return { text, structured: { ...structuredBase, tokens: countTokens(text), tokens_for_all: 0, snippets: [], left_out: [] } };
  }

  const first = (args.page - 1) * args.limit + 1;
  // The version the snippets come from, said in words: a model told "react 18" may not read "18" as one.
  const named = library.version ? `${library.name} version ${library.version}` : library.name;
  const header = `${named} (library_id ${library.id}) — ${what} — page ${args.page} of ${totalPages}, showing ${first}–${first + found.snippets.length - 1}.`;
  const answer = formatSnippetsWithinBudget({
    snippets: found.snippets.map((s) => ({ ...s, library: library.name, version: library.version })),
    firstIndex: first,
    maxTokens: args.max_tokens,
    header: [header, ...preamble].join('\n'),
    footer: footerFor(args, library.id, query, args.page < totalPages),
    verbose: args.verbose,
    fresh: args.fresh,
    ...(session ? { session } : {}),
  });
  return {
    text: answer.text,
    structured: { ...structuredBase, tokens: answer.tokens, tokens_for_all: answer.tokensForAll, snippets: structuredSnippets(answer.shown), left_out: answer.leftOut },
  };
}

export function registerGetContentTool(server: McpServer, deps: McpDeps, session?: McpSession): DocdexTool {
  return registerDocdexTool(server, deps, {
    name: GET_CONTENT,
    title: 'Get code snippets from a library',
    description:
      "Returns code examples and page sections from an indexed library's documentation: a code example with its title, language, library@version, source URL and the code in a fenced block (a description when it adds to the title; verbose=true gives every fact); " +
      'a page section (where prose answers: a page without code, an explanation, a troubleshooting entry) with its heading breadcrumb, source URL and its text with the code blocks it holds. ' +
      "Results come from distinct pages first; a page's further matches are named after its first result (More from this page). " +
      'library_id is the id from search_libraries, or a library name (fuzzy; its latest version) or name@version (exact, a major like react@18, or a range like react@^18.2). ' +
      'The answer names the version the snippets come from; a version that is not indexed is an error listing the indexed ones, never another version. ' +
      'With query, returns the snippets that best match it (e.g. "streaming response", "useEffect cleanup"); without, browses the library. ' +
      'The answer stays within max_tokens (default 5000): snippets fill it best first, each whole, and the answer says which results were left out and how to get them (a higher max_tokens, or the next page). ' +
      'A snippet already shown in full earlier in this session is named in one line instead (fresh=true repeats it). ' +
      "Results are paginated (limit up to 100, page from 1). get_page_markdown with a result's source URL returns the section it points at (without the #anchor, the whole page). " +
      'An unknown library gets a message listing the closest names. ' +
      "Instead of library_id, project (a project's name or root directory) with query searches all the project's libraries at the versions it uses. " +
      TRUST_NOTE,
    inputSchema: checkedInput,
    outputSchema,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: (args, context) => getContent(deps, args, session, context.signal),
  });
}
