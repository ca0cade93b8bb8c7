import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import { describeProject, libraryAtVersion } from '../../project/libraries.js';
import { searchProject } from '../../project/search.js';
import type { NotIndexedLibrary, ProjectSearchResponse } from '../../project/search.js';
import { MAX_QUERY_CHARS } from '../../search/query.js';
import { SEPARATOR, formatSnippets } from '../format.js';
import { MAX_PROJECT_ARG_CHARS, PROJECT_ARG_DESCRIPTION, projectRefFor, withProjectForModel } from '../project.js';
import { registerDocdexTool } from '../tool.js';
import type { DocdexTool, McpDeps, ToolOutput } from '../tool.js';
import { limitArg, pageArg, plural } from './common.js';

export const SEARCH_PROJECT = 'search_project';

// The search accepts offsets up to 1000 (src/core/search/search.ts): deeper pages of one query are noise.
const MAX_SEARCH_DEPTH = 1000;

const inputSchema = z.object({
  query: z.string().trim().min(1).max(MAX_QUERY_CHARS).describe('What to look for across the project\'s libraries, e.g. "parse a version range" or "walk a syntax tree".'),
  project: z.string().trim().min(1).max(MAX_PROJECT_ARG_CHARS).optional().describe(PROJECT_ARG_DESCRIPTION),
  limit: limitArg,
  page: pageArg,
});

/** What a project search is asked, from search_project or get_content's `project`. */
export interface ProjectQuery {
  project?: string | undefined;
  query: string;
  limit: number;
  page: number;
}

function notIndexedLine(libraries: NotIndexedLibrary[]): string | undefined {
  if (libraries.length === 0) return undefined;
  const list = libraries.map((l) => `${libraryAtVersion(l)} (${l.state === 'unresolved' ? `unresolved: ${l.reason ?? 'nothing to index'}` : l.state})`).join(', ');
  return `Not indexed at the version the project uses, so not searched: ${list}. Call sync_project to index them; other versions are never used in their place.`;
}

function remarks(result: ProjectSearchResponse): string[] {
  const out: string[] = [];
  const missing = notIndexedLine(result.not_indexed);
  if (missing) out.push(missing);
  if (result.corrected && result.corrected.length > 0) out.push(`Spelling corrected: ${result.corrected.map((c) => `"${c.from}" → "${c.to}"`).join(', ')}.`);
  if (result.fallback) out.push('Few snippets matched the query itself; snippets marked "page match" come from pages whose text matches.');
  return out;
}

/**
 * The project's libraries at their recorded versions searched together, rendered for a model: each snippet
 * titled with its library@version, and the libraries that could not be searched named. `tool` is the tool
 * the model called (search_project, or get_content with project), for the next-page hint.
 */
export async function searchProjectForModel(deps: McpDeps, args: ProjectQuery, tool: string, signal?: AbortSignal): Promise<ToolOutput> {
  const offset = (args.page - 1) * args.limit;
  if (offset > MAX_SEARCH_DEPTH) {
    throw new ValidationError(`page ${args.page} is too deep: query results can be paged through their first ${MAX_SEARCH_DEPTH} matches only.`, {
      hint: 'Use a more specific query, or a lower page number.',
    });
  }
  const ref = await projectRefFor(deps, args.project, tool);
  const result = await withProjectForModel(() => searchProject(deps.pool, { project: ref, query: args.query, limit: args.limit, offset }, signal));
  const name = describeProject(result.project);
  const preamble = remarks(result);
  const totalPages = Math.max(1, Math.ceil(result.total / args.limit));
  if (result.items.length === 0) {
    const reason =
      result.searched === 0
        ? `None of project ${name}'s libraries is indexed at the version it uses: nothing was searched.`
        : result.total > 0
          ? `Page ${args.page} is past the end: ${plural(result.total, 'snippet')} match "${args.query}" (${totalPages} pages of ${args.limit}).`
          : `No snippets in project ${name}'s ${plural(result.searched, 'indexed library', 'indexed libraries')} match "${args.query}". Try other or fewer words.`;
    return { text: [reason, ...preamble].join('\n') };
  }
  const first = offset + 1;
  const header = `Project ${name} — ${plural(result.total, 'snippet')} ${result.total === 1 ? 'matches' : 'match'} "${args.query}" across ${plural(result.searched, 'library', 'libraries')} at the versions the project uses — page ${args.page} of ${totalPages}, showing ${first}–${first + result.items.length - 1}. Each title starts with its library@version.`;
  const snippets = result.items.map((item) => ({ ...item, title: `[${libraryAtVersion({ name: item.source_name, version: item.version })}] ${item.title}` }));
  const parts = [[header, ...preamble].join('\n'), formatSnippets(snippets, first)];
  if (args.page < totalPages) {
    parts.push(`More results: call ${tool} with project=${JSON.stringify(result.project.root ?? result.project.name)}, query=${JSON.stringify(args.query)}, page=${args.page + 1}.`);
  }
  return { text: parts.join(SEPARATOR) };
}

export function registerSearchProjectTool(server: McpServer, deps: McpDeps): DocdexTool {
  return registerDocdexTool(server, deps, {
    name: SEARCH_PROJECT,
    title: "Search a project's libraries",
    description:
      'Searches the documentation of the libraries a project depends on, at exactly the versions its lockfiles name, ranked together; each result names its library@version and source URL. ' +
      'A library whose version is not indexed is not searched and the answer says so (call sync_project to index it); another indexed version is never used in its place. ' +
      'project defaults to the directory the stdio server was started in; get_project_libraries lists the libraries and their states. Results are paginated (limit up to 100, page from 1).',
    inputSchema,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: (args, context) => searchProjectForModel(deps, args, SEARCH_PROJECT, context.signal),
  });
}
