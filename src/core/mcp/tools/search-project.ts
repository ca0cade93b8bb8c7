import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import { describeProject } from '../../project/libraries.js';
import { describeNotIndexed, searchProject } from '../../project/search.js';
import type { NotIndexedLibrary, ProjectSearchResponse } from '../../project/search.js';
import { MAX_QUERY_CHARS } from '../../search/query.js';
import { formatSnippetsWithinBudget } from '../format.js';
import type { SnippetOmission } from '../format.js';
import { MAX_PROJECT_ARG_CHARS, PROJECT_ARG_DESCRIPTION, projectRefFor, syncAction, withProjectForModel } from '../project.js';
import type { McpSession } from '../session.js';
import { registerDocdexTool } from '../tool.js';
import type { DocdexTool, McpDeps, ToolOutput } from '../tool.js';
import { countTokens } from '../tokens.js';
import { SOURCE_TRUST, TRUST_NOTE } from '../trust.js';
import { limitArg, pageArg, plural } from './common.js';
import { budgetFooter, budgetedSnippetsOutput, freshArg, maxTokensArg, quoteQuery, structuredSnippets, verboseArg } from './snippet-args.js';

export const SEARCH_PROJECT = 'search_project';

// The search accepts offsets up to 1000 (src/core/search/search.ts): deeper pages of one query are noise.
const MAX_SEARCH_DEPTH = 1000;

const inputSchema = z.object({
  query: z.string().trim().min(1).max(MAX_QUERY_CHARS).describe('What to look for across the project\'s libraries, e.g. "parse a version range" or "walk a syntax tree".'),
  project: z.string().trim().min(1).max(MAX_PROJECT_ARG_CHARS).optional().describe(PROJECT_ARG_DESCRIPTION),
  limit: limitArg,
  page: pageArg,
  max_tokens: maxTokensArg,
  verbose: verboseArg,
  fresh: freshArg,
});

const outputSchema = budgetedSnippetsOutput.extend({ project: z.string(), query: z.string() });

/** What a project search is asked, from search_project or get_content's `project`. */
export interface ProjectQuery {
  project?: string | undefined;
  query: string;
  limit: number;
  page: number;
  max_tokens: number;
  verbose: boolean;
  fresh: boolean;
}

function notIndexedLine(libraries: NotIndexedLibrary[], sync: string): string | undefined {
  if (libraries.length === 0) return undefined;
  const list = libraries.map(describeNotIndexed).join(', ');
  return `Not indexed at the version the project uses, so not searched: ${list}. ${sync[0]!.toUpperCase()}${sync.slice(1)} to index them; other versions are never used in their place.`;
}

function remarks(result: ProjectSearchResponse, sync: string): string[] {
  const out: string[] = [];
  const missing = notIndexedLine(result.not_indexed, sync);
  if (missing) out.push(missing);
  if (result.corrected && result.corrected.length > 0) out.push(`Spelling corrected: ${result.corrected.map((c) => `"${c.from}" → "${c.to}"`).join(', ')}.`);
  if (result.fallback) out.push('Few snippets matched the query itself; snippets marked "page match" come from pages whose text matches.');
  return out;
}

function footerFor(args: ProjectQuery, tool: string, project: string, hasNextPage: boolean): (omission: SnippetOmission) => string {
  const again = `call ${tool} with project=${JSON.stringify(project)}, query=${args.query.length <= 120 ? JSON.stringify(args.query) : 'the same query'}`;
  return budgetFooter(again, args.page, hasNextPage ? `${again}, page=${args.page + 1}` : null);
}

/**
 * The project's libraries at their recorded versions searched together, rendered for a model within its token
 * budget: each snippet with its library@version, and the libraries that could not be searched named. `tool` is
 * the tool the model called (search_project, or get_content with project), for the next-page hint.
 */
export async function searchProjectForModel(deps: McpDeps, args: ProjectQuery, tool: string, session?: McpSession, signal?: AbortSignal): Promise<ToolOutput> {
  const offset = (args.page - 1) * args.limit;
  if (offset > MAX_SEARCH_DEPTH) {
    throw new ValidationError(`page ${args.page} is too deep: query results can be paged through their first ${MAX_SEARCH_DEPTH} matches only.`, {
      hint: 'Use a more specific query, or a lower page number.',
    });
  }
  const ref = await projectRefFor(deps, args.project, tool);
  const result = await withProjectForModel(deps, () => searchProject(deps.pool, { project: ref, query: args.query, limit: args.limit, offset, screening: deps.config.screening }, signal));
  const name = describeProject(result.project);
  const preamble = remarks(result, syncAction(deps, result.project.name));
  const totalPages = Math.max(1, Math.ceil(result.total / args.limit));
  const projectRef = result.project.root ?? result.project.name;
  const base = { source_trust: SOURCE_TRUST, project: projectRef, query: args.query, page: args.page, total: result.total, total_pages: totalPages, max_tokens: args.max_tokens };
  if (result.items.length === 0) {
    const reason =
      result.searched === 0
        ? `None of project ${name}'s libraries is indexed at the version it uses: nothing was searched.`
        : result.total > 0
          ? `Page ${args.page} is past the end: ${plural(result.total, 'snippet')} match ${quoteQuery(args.query)} (${totalPages} pages of ${args.limit}).`
          : `No snippets in project ${name}'s ${plural(result.searched, 'indexed library', 'indexed libraries')} match ${quoteQuery(args.query)}. Try other or fewer words.`;
    const text = [reason, ...preamble].join('\n');
    return { text, structured: { ...base, tokens: countTokens(text), tokens_for_all: 0, snippets: [], left_out: [] } };
  }
  const first = offset + 1;
  const header = `Project ${name} — ${plural(result.total, 'snippet')} ${result.total === 1 ? 'matches' : 'match'} ${quoteQuery(args.query)} across ${plural(result.searched, 'library', 'libraries')} at the versions the project uses — page ${args.page} of ${totalPages}, showing ${first}–${first + result.items.length - 1}. Each snippet names its library@version.`;
  const answer = formatSnippetsWithinBudget({
    snippets: result.items.map((item) => ({ ...item, library: item.source_name, version: item.version })),
    firstIndex: first,
    maxTokens: args.max_tokens,
    header: [header, ...preamble].join('\n'),
    footer: footerFor(args, tool, projectRef, args.page < totalPages),
    verbose: args.verbose,
    fresh: args.fresh,
    ...(session ? { session } : {}),
  });
  return { text: answer.text, structured: { ...base, tokens: answer.tokens, tokens_for_all: answer.tokensForAll, snippets: structuredSnippets(answer.shown), left_out: answer.leftOut } };
}

export function registerSearchProjectTool(server: McpServer, deps: McpDeps, session?: McpSession): DocdexTool {
  return registerDocdexTool(server, deps, {
    name: SEARCH_PROJECT,
    title: "Search a project's libraries",
    description:
      'Searches the documentation of the libraries a project depends on, at exactly the versions its lockfiles name, ranked together; each result names its library@version and source URL. ' +
      `A library whose version is not indexed is not searched and the answer says so (${syncAction(deps)} to index it); another indexed version is never used in its place. ` +
      'project defaults to the directory the stdio server was started in; get_project_libraries lists the libraries and their states. Results are paginated (limit up to 100, page from 1). ' +
      'The answer stays within max_tokens (default 5000), snippets whole and best first, and says which results were left out; a snippet already shown in this session is named in one line (fresh=true repeats it). ' +
      TRUST_NOTE,
    inputSchema,
    outputSchema,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: (args, context) => searchProjectForModel(deps, args, SEARCH_PROJECT, session, context.signal),
  });
}
