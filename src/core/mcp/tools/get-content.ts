import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { UserError } from '../../errors.js';
import { MAX_LIBRARY_NAME_CHARS, MAX_LIBRARY_VERSION_CHARS } from '../../library-ref.js';
import { MAX_QUERY_CHARS } from '../../search/query.js';
import { searchSnippetsShared } from '../../search/shared.js';
import { SEPARATOR, formatSnippets } from '../format.js';
import type { SnippetForModel } from '../format.js';
import { libraryLabel, resolveLibraryForModel } from '../libraries.js';
import { MAX_PROJECT_ARG_CHARS } from '../project.js';
import { listLibrarySnippets } from '../queries.js';
import { registerDocdexTool } from '../tool.js';
import type { DocdexTool, McpDeps, ToolOutput } from '../tool.js';
import { limitArg, pageArg, plural } from './common.js';
import { searchProjectForModel } from './search-project.js';

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
});

/** Exactly one of library_id and project; a project search needs a query. */
const checkedInput = inputSchema.superRefine((args, ctx) => {
  if ((args.library_id === undefined) === (args.project === undefined)) {
    ctx.addIssue({ code: 'custom', path: ['library_id'], message: "give exactly one of library_id (one library) and project (all of a project's libraries at the versions it uses)." });
  } else if (args.project !== undefined && !args.query?.trim()) {
    ctx.addIssue({ code: 'custom', path: ['query'], message: 'query is required with project; to browse one library, call get_content with its library_id from get_project_libraries.' });
  }
});

/** `signal`: the client cancelled; a search still waiting for its turn is then not run (searchSnippetsShared). */
export async function getContent(deps: McpDeps, args: z.output<typeof inputSchema>, signal?: AbortSignal): Promise<ToolOutput> {
  if (args.library_id === undefined) return searchProjectForModel(deps, { project: args.project, query: args.query ?? '', limit: args.limit, page: args.page }, GET_CONTENT, signal);
  const { library, note } = await resolveLibraryForModel(deps.pool, args.library_id);
  const query = args.query?.trim() ?? '';
  const offset = (args.page - 1) * args.limit;
  const label = libraryLabel(library);

  let snippets: SnippetForModel[];
  let total: number;
  const remarks: string[] = [];
  if (query) {
    if (offset > MAX_SEARCH_DEPTH) {
      throw new UserError(`page ${args.page} is too deep: query results can be paged through their first ${MAX_SEARCH_DEPTH} matches only.`, {
        code: 'validation_error',
        hint: 'Use a more specific query, or a lower page number.',
      });
    }
    const result = await searchSnippetsShared(deps.pool, { query, source: library.id, limit: args.limit, offset }, signal);
    snippets = result.items;
    total = result.total;
    if (result.corrected && result.corrected.length > 0) {
      remarks.push(`Spelling corrected: ${result.corrected.map((c) => `"${c.from}" → "${c.to}"`).join(', ')}.`);
    }
    if (result.fallback) remarks.push('Few snippets matched the query itself; snippets marked "page match" come from pages whose text matches.');
  } else {
    const result = await listLibrarySnippets(deps.pool, library.id, { limit: args.limit, offset });
    snippets = result.items;
    total = result.total;
  }

  const totalPages = Math.max(1, Math.ceil(total / args.limit));
  const what = query ? `${plural(total, 'snippet')} ${total === 1 ? 'matches' : 'match'} "${query}"` : plural(total, 'snippet');
  const preamble = [note, ...remarks].filter((s): s is string => s !== undefined);

  if (snippets.length === 0) {
    const reason =
      total > 0
        ? `Page ${args.page} is past the end: ${label} has ${what} (${totalPages} page${totalPages === 1 ? '' : 's'} of ${args.limit}).`
        : query
          ? `No snippets in ${label} match "${query}". Try other or fewer words, or call get_content without query to browse ${label}.`
          : `${label} has no snippets yet${library.kind === 'crawl' ? ' (its crawl may still be running: check it with get_crawl_status)' : ''}.`;
    return { text: [...preamble, reason].join('\n') };
  }

  const first = offset + 1;
  // The version the snippets come from, said in words: a model told "react 18" may not read "18" as one.
  const named = library.version ? `${library.name} version ${library.version}` : library.name;
  const header = `${named} (library_id ${library.id}) — ${what} — page ${args.page} of ${totalPages}, showing ${first}–${first + snippets.length - 1}.`;
  const parts = [[header, ...preamble].join('\n'), formatSnippets(snippets, first)];
  if (args.page < totalPages) {
    parts.push(`More results: call get_content with library_id="${library.id}"${query ? `, query=${JSON.stringify(query)}` : ''}, page=${args.page + 1}.`);
  }
  return { text: parts.join(SEPARATOR) };
}

export function registerGetContentTool(server: McpServer, deps: McpDeps): DocdexTool {
  return registerDocdexTool(server, deps, {
    name: GET_CONTENT,
    title: 'Get code snippets from a library',
    description:
      "Returns code examples from an indexed library's documentation: each with its title, description, language, source URL and the code in a fenced block. " +
      'library_id is the id from search_libraries, or a library name (fuzzy; its latest version) or name@version (exact, a major like react@18, or a range like react@^18.2). ' +
      'The answer names the version the snippets come from; a version that is not indexed is an error listing the indexed ones, never another version. ' +
      'With query, returns the snippets that best match it (e.g. "streaming response", "useEffect cleanup"); without, browses the library. ' +
      "Results are paginated (limit up to 100, page from 1). Very long code is cut with a marker; get_page_markdown with the snippet's source URL returns the full page. " +
      'An unknown library gets a message listing the closest names. ' +
      "Instead of library_id, project (a project's name or root directory) with query searches all the project's libraries at the versions it uses.",
    inputSchema: checkedInput,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: (args, context) => getContent(deps, args, context.signal),
  });
}
