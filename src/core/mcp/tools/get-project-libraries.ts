import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { describeProject, libraryAtVersion, PROJECT_LIBRARY_STATES, projectLibraries } from '../../project/libraries.js';
import type { ProjectLibrary } from '../../project/libraries.js';
import { MAX_PROJECT_ARG_CHARS, PROJECT_ARG_DESCRIPTION, projectRefFor, syncAction, withProjectForModel } from '../project.js';
import { registerDocdexTool } from '../tool.js';
import type { DocdexTool, McpDeps, ToolOutput } from '../tool.js';
import { plural } from './common.js';

export const GET_PROJECT_LIBRARIES = 'get_project_libraries';

const inputSchema = z.object({
  project: z.string().trim().min(1).max(MAX_PROJECT_ARG_CHARS).optional().describe(PROJECT_ARG_DESCRIPTION),
});

const libraryOutput = z.object({
  ecosystem: z.string(),
  name: z.string(),
  version: z.string(),
  spec: z.string(),
  direct: z.boolean(),
  state: z.enum(PROJECT_LIBRARY_STATES),
  reason: z.string().optional(),
  library_id: z.string().optional().describe('Pass to get_content to read this library at exactly this version (indexed; an indexing or failed one has no pages yet).'),
  snippet_count: z.number().int(),
  other_versions: z.array(z.string()).describe('Other indexed versions of the library: never used to answer for this project.'),
});

const outputSchema = z.object({
  project: z.object({ id: z.string(), name: z.string(), root: z.string().optional(), synced_at: z.string().optional() }),
  libraries: z.array(libraryOutput),
});

function stateText(library: ProjectLibrary, sync: string): string {
  switch (library.state) {
    case 'indexed':
      // Pages but no code blocks (a README without examples): no code snippet, but its page sections are found
      // as any result is (issue 50).
      if (library.snippet_count === 0) return `indexed, no code snippets: search its page sections, call get_content with library_id="${library.source_id}"`;
      return `indexed, ${plural(library.snippet_count, 'snippet')} — library_id "${library.source_id}"`;
    case 'indexing':
      return 'indexing: its source exists but has no pages yet (check again shortly)';
    case 'failed':
      return `NOT INDEXED: its indexing job did not finish (${library.reason ?? 'failed'}); ${sync} to try again`;
    case 'missing':
      return `NOT INDEXED at this version: ${sync} to queue it`;
    case 'unresolved':
      return `unresolved: ${library.reason ?? 'sync found nothing to index'}`;
  }
}

function render(library: ProjectLibrary, sync: string): string {
  const others = library.other_versions.length > 0 ? ` (other indexed versions, not used for this project: ${library.other_versions.join(', ')})` : '';
  return `- ${libraryAtVersion(library)} [${library.ecosystem}${library.direct ? '' : ', transitive'}] — ${stateText(library, sync)}${others}`;
}

export async function getProjectLibraries(deps: McpDeps, args: z.output<typeof inputSchema>): Promise<ToolOutput> {
  const ref = await projectRefFor(deps, args.project, GET_PROJECT_LIBRARIES);
  const { project, libraries } = await withProjectForModel(deps, () => projectLibraries(deps.pool, ref));
  const sync = syncAction(deps, project.name);
  const structured = {
    project: { id: project.id, name: project.name, ...(project.root === null ? {} : { root: project.root }), ...(project.synced_at ? { synced_at: project.synced_at.toISOString() } : {}) },
    libraries: libraries.map((l) => ({
      ecosystem: l.ecosystem,
      name: l.name,
      version: l.version,
      spec: l.spec,
      direct: l.direct,
      state: l.state,
      ...(l.reason === undefined ? {} : { reason: l.reason }),
      ...(l.source_id === null ? {} : { library_id: l.source_id }),
      snippet_count: l.snippet_count,
      other_versions: l.other_versions,
    })),
  };
  const indexed = libraries.filter((l) => l.state === 'indexed').length;
  const header = `Project ${describeProject(project)}: ${plural(libraries.length, 'library', 'libraries')}, ${indexed} indexed at the exact version the project uses.`;
  if (libraries.length === 0) return { text: `${header}\nNo libraries are recorded: ${sync} to read the project's manifests.`, structured };
  const lines = [header, ...libraries.map((l) => render(l, sync))];
  if (indexed < libraries.length) lines.push(`Libraries not indexed at their version are left out of search_project; ${sync} to index them.`);
  lines.push('Search all indexed ones together with search_project.');
  return { text: lines.join('\n'), structured };
}

export function registerGetProjectLibrariesTool(server: McpServer, deps: McpDeps): DocdexTool {
  return registerDocdexTool(server, deps, {
    name: GET_PROJECT_LIBRARIES,
    title: "List a project's libraries",
    description:
      `Lists the libraries a project depends on (as \`docdex sync\`${deps.readOnly === true ? '' : ' or sync_project'} recorded them from its manifests and lockfiles), each at the exact version the project uses, with its state in the index: ` +
      `indexed (with its library_id for get_content), indexing, failed (its job did not finish; ${syncAction(deps)} to retry), missing (${syncAction(deps)}), or unresolved (with the reason). Other indexed versions are named but never used for the project. ` +
      'project defaults to the directory the stdio server was started in.',
    inputSchema,
    outputSchema,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: (args) => getProjectLibraries(deps, args),
  });
}
