import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { clearBestMatch, libraryLabel } from '../libraries.js';
import { findLibraries } from '../queries.js';
import type { LibraryGroup } from '../queries.js';
import { registerDocdexTool } from '../tool.js';
import type { DocdexTool, McpDeps, ToolOutput } from '../tool.js';
import { SOURCE_TRUST, TRUST_NOTE, wrapDocumentation } from '../trust.js';
import { limitArg, pageArg, pagination, paginationOutput, plural } from './common.js';

export const SEARCH_LIBRARIES = 'search_libraries';

const inputSchema = z.object({
  query: z.string().max(200).optional().describe('Library name to look for, e.g. "fastapi" or "react router". Typos and case are tolerated. Omit or leave empty to list every library.'),
  limit: limitArg,
  page: pageArg,
});

const libraryOutput = z.object({
  id: z.string(),
  name: z.string(),
  version: z.string(),
  description: z.string(),
  snippet_count: z.number().int(),
  page_count: z.number().int(),
  base_url: z.string().optional(),
  last_crawled_at: z.string().optional(),
  score: z.number(),
  selected: z.boolean(),
  versions: z
    .array(z.object({ id: z.string(), version: z.string(), snippet_count: z.number().int() }))
    .describe('Every indexed version, the latest first; the entry itself is the latest. Pass name@version as library_id for another.'),
});

const outputSchema = z.object({
  /** Names and descriptions come from the indexed sites and packages. */
  source_trust: z.literal(SOURCE_TRUST),
  query: z.string(),
  libraries: z.array(libraryOutput),
  /** Absent when no library clearly wins (optional rather than nullable: see crawl-job.ts). */
  selected_id: z.string().optional(),
  pagination: paginationOutput,
});

function render(lib: LibraryGroup, index: number, selected: boolean): string {
  const lines = [`${index}. ${libraryLabel(lib)}${selected ? '  [selected]' : ''}`, `   id: ${lib.id}`];
  if (lib.versions.length > 1) {
    lines.push(`   versions (latest first): ${lib.versions.map((v) => `${v.version || '(unversioned)'} (library_id "${lib.name}@${v.version}")`).join(', ')}`);
  }
  if (lib.description) lines.push(`   description: ${lib.description}`);
  const facts = [plural(lib.snippet_count, 'snippet'), plural(lib.document_count, 'page')];
  if (lib.base_url) facts.push(lib.base_url);
  lines.push(`   ${facts.join(' · ')}`);
  return lines.join('\n');
}

export async function searchLibraries(deps: McpDeps, args: z.output<typeof inputSchema>): Promise<ToolOutput> {
  const query = args.query?.trim() ?? '';
  const { items, total } = await findLibraries(deps.pool, { query, limit: args.limit, offset: (args.page - 1) * args.limit });
  const selectedIndex = args.page === 1 ? clearBestMatch(items, query) : undefined;
  const page = pagination(args.page, args.limit, total);
  const structured = {
    source_trust: SOURCE_TRUST,
    query,
    libraries: items.map((lib, i) => ({
      id: lib.id,
      name: lib.name,
      version: lib.version,
      description: lib.description,
      snippet_count: lib.snippet_count,
      page_count: lib.document_count,
      ...(lib.base_url ? { base_url: lib.base_url } : {}),
      ...(lib.last_crawled_at ? { last_crawled_at: lib.last_crawled_at.toISOString() } : {}),
      score: Math.round(lib.score * 1000) / 1000,
      selected: i === selectedIndex,
      versions: lib.versions.map((v) => ({ id: v.id, version: v.version, snippet_count: v.snippet_count })),
    })),
    ...(selectedIndex === undefined ? {} : { selected_id: items[selectedIndex]!.id }),
    pagination: page,
  };

  if (total === 0) {
    const text = query
      ? `No library matches "${query}". Call search_libraries without a query to list every indexed library, or index a new one with init_crawl.`
      : 'No libraries are indexed yet. Crawl a documentation site with init_crawl first.';
    return { text, structured };
  }
  if (items.length === 0) {
    return { text: `Page ${args.page} is past the end: there are ${plural(total, 'library', 'libraries')} (${page.total_pages} pages of ${args.limit}).`, structured };
  }

  const first = (args.page - 1) * args.limit + 1;
  const header = `${plural(total, 'library', 'libraries')}${query ? ` ${total === 1 ? 'matches' : 'match'} "${query}"` : ' indexed'} — page ${args.page} of ${page.total_pages}, showing ${first}–${first + items.length - 1}.`;
  const parts = [header];
  if (selectedIndex !== undefined) {
    const sel = items[selectedIndex]!;
    parts.push(`Selected: ${libraryLabel(sel)} (id ${sel.id}) is the clear best match. Pass this id as library_id to get_content.`);
  } else if (query) {
    parts.push('No single library is a clear match: pick one and pass its id as library_id to get_content.');
  }
  parts.push(wrapDocumentation(items.map((lib, i) => render(lib, first + i, i === selectedIndex)).join('\n\n')));
  if (page.has_more) parts.push(`More results: call search_libraries with page=${args.page + 1}.`);
  return { text: parts.join('\n\n'), structured };
}

export function registerSearchLibrariesTool(server: McpServer, deps: McpDeps): DocdexTool {
  return registerDocdexTool(server, deps, {
    name: SEARCH_LIBRARIES,
    title: 'Search indexed libraries',
    description:
      'Find documentation libraries indexed by docdex, by name. Matching is fuzzy: typos, case and punctuation are tolerated ("nextjs" finds "Next.js"). ' +
      "Each library is listed once, as its latest version, with every indexed version (latest first); it is also found by its aliases (e.g. a package's repository name). " +
      "Returns each library's id, name, version, description and snippet count, with pagination. " +
      'When one library is clearly the best match it is marked [selected]: pass its id as library_id to get_content. ' +
      'Call with no query to list every library. Use this first when you do not know the exact library name. ' +
      TRUST_NOTE,
    inputSchema,
    outputSchema,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: (args) => searchLibraries(deps, args),
  });
}
