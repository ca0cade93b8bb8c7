import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { UserError } from '../../errors.js';
import { MAX_LIBRARY_NAME_CHARS, MAX_LIBRARY_VERSION_CHARS } from '../../library-ref.js';
import { MAX_QUERY_CHARS } from '../../search/query.js';
import { applyScreening } from '../../search/screening.js';
import { searchSnippetsShared } from '../../search/shared.js';
import { SEPARATOR, formatSnippets } from '../format.js';
import type { SnippetForModel } from '../format.js';
import { libraryLabel, resolveLibraryForModel } from '../libraries.js';
import { listLibrarySnippets } from '../queries.js';
import { registerDocdexTool } from '../tool.js';
import type { DocdexTool, McpDeps, ToolOutput } from '../tool.js';
import { limitArg, pageArg, plural } from './common.js';

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
      'The library: its id from search_libraries, its name ("fastapi"; fuzzy, typos tolerated; its latest version), or name@version: exact ("react@18.3.1"), the newest of a major ("react@18") or a semver range ("react@^18.2", "react@~18.2.1").',
    ),
  query: z.string().max(MAX_QUERY_CHARS).optional().describe('What to look for inside the library, e.g. "dependency injection" or "useEffect cleanup". Omit to browse the library\'s snippets.'),
  limit: limitArg,
  page: pageArg,
});

function withheldRemark(n: number): string {
  return `${plural(n, 'snippet')} on this page withheld: screening flagged ${n === 1 ? 'it' : 'them'} as possible prompt injection (DOCDEX_SCREENING=strict).`;
}

/** `signal`: the client cancelled; a search still waiting for its turn is then not run (searchSnippetsShared). */
export async function getContent(deps: McpDeps, args: z.output<typeof inputSchema>, signal?: AbortSignal): Promise<ToolOutput> {
  const { library, note } = await resolveLibraryForModel(deps.pool, args.library_id);
  const query = args.query?.trim() ?? '';
  const offset = (args.page - 1) * args.limit;
  const label = libraryLabel(library);

  let snippets: SnippetForModel[];
  let total: number;
  const remarks: string[] = [];
  let withheld: number;
  if (query) {
    if (offset > MAX_SEARCH_DEPTH) {
      throw new UserError(`page ${args.page} is too deep: query results can be paged through their first ${MAX_SEARCH_DEPTH} matches only.`, {
        code: 'validation_error',
        hint: 'Use a more specific query, or a lower page number.',
      });
    }
    const result = await searchSnippetsShared(deps.pool, { query, source: library.id, limit: args.limit, offset, screening: deps.config.screening }, signal);
    snippets = result.items;
    total = result.total;
    if (result.corrected && result.corrected.length > 0) {
      remarks.push(`Spelling corrected: ${result.corrected.map((c) => `"${c.from}" → "${c.to}"`).join(', ')}.`);
    }
    if (result.fallback) remarks.push('Few snippets matched the query itself; snippets marked "page match" come from pages whose text matches.');
    withheld = result.withheld ?? 0;
  } else {
    const result = await listLibrarySnippets(deps.pool, library.id, { limit: args.limit, offset });
    const screened = applyScreening(result.items, deps.config.screening);
    snippets = screened.items;
    total = result.total;
    withheld = screened.withheld;
  }
  if (withheld > 0) remarks.push(withheldRemark(withheld));

  const totalPages = Math.max(1, Math.ceil(total / args.limit));
  const what = query ? `${plural(total, 'snippet')} ${total === 1 ? 'matches' : 'match'} "${query}"` : plural(total, 'snippet');
  const preamble = [note, ...remarks].filter((s): s is string => s !== undefined);

  if (snippets.length === 0) {
    const reason =
      withheld > 0
        ? `Every snippet on page ${args.page} was withheld; more may be on page ${args.page + 1}.`
        : total > 0
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
      'An unknown library gets a message listing the closest names.',
    inputSchema,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: (args, context) => getContent(deps, args, context.signal),
  });
}
