import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { getCrawlJob } from '../../crawl/jobs.js';
import { addLibraries } from '../../library/add.js';
import { ADD_STATUSES } from '../../library/outcome.js';
import type { AddOutcome, AddedJob } from '../../library/outcome.js';
import { ADD_FIELDS } from '../../library-spec.js';
import type { AddFieldName } from '../../library-spec.js';
import { registerDocdexTool } from '../tool.js';
import type { DocdexTool, McpDeps, ToolOutput } from '../tool.js';
import { crawlFetchPlan, describeFetchPlan, fetchPlanOutput, readmeFetchPlan, repositoryFetchPlan } from './fetch-plan.js';
import type { FetchPlan } from './fetch-plan.js';

export const ADD_LIBRARY = 'add_library';

/** The tool's arguments: the add request's own fields and descriptions (core/library-spec.ts). */
export function addLibraryInputSchema(): z.ZodObject {
  const shape = Object.fromEntries((Object.keys(ADD_FIELDS) as AddFieldName[]).map((name) => [name, ADD_FIELDS[name].schema.describe(ADD_FIELDS[name].description)]));
  return z.object(shape);
}

const inputSchema = addLibraryInputSchema();

const outputSchema = z.object({
  libraries: z.array(
    z.object({
      spec: z.string(),
      status: z.enum(ADD_STATUSES).describe('indexed: that version was already indexed, nothing was fetched (refresh: true fetches it again)'),
      library_id: z.string().optional(),
      job_ids: z.array(z.string()).optional(),
      notes: z.array(z.string()).optional(),
      fetch_plan: z.array(fetchPlanOutput).optional().describe('What each job will fetch: hosts, depth and page cap of a crawl; the repository and ref of a checkout.'),
      error: z.string().optional(),
    }),
  ),
});

function libraryId(outcome: Extract<AddOutcome, { status: 'queued' | 'indexed' }>): string {
  return outcome.version ? `${outcome.name}@${outcome.version}` : outcome.name;
}

/** One outcome with what its jobs will fetch (queued outcomes only). */
type PlannedOutcome = { outcome: AddOutcome; plans: FetchPlan[] };

/** What a job will fetch: a crawl's plan from the job as stored; a checkout's or README's from its origin. */
async function jobFetchPlan(deps: McpDeps, job: AddedJob): Promise<FetchPlan> {
  if (job.type === 'crawl') return crawlFetchPlan(await getCrawlJob(deps.pool, job.id), job.what);
  if (job.origin?.kind === 'readme') return readmeFetchPlan(job.id, job.what, job.origin.url);
  return repositoryFetchPlan(job.id, job.what, job.origin?.url);
}

async function withPlans(deps: McpDeps, outcome: AddOutcome): Promise<PlannedOutcome> {
  if (outcome.status === 'failed') return { outcome, plans: [] };
  const plans: FetchPlan[] = [];
  for (const job of outcome.jobs) plans.push(await jobFetchPlan(deps, job));
  return { outcome, plans };
}

function indexedText(library: { document_count: number; snippet_count: number }): string {
  const documents = `${library.document_count} document${library.document_count === 1 ? '' : 's'}`;
  return library.snippet_count === 0 ? `${documents}, no code snippets` : `${documents}, ${library.snippet_count} snippet${library.snippet_count === 1 ? '' : 's'}`;
}

function describeOutcome({ outcome, plans }: PlannedOutcome): string {
  if (outcome.status === 'failed') return `${outcome.spec}: not added. ${outcome.error.message}${outcome.error.hint ? ` ${outcome.error.hint}` : ''}`;
  if (outcome.status === 'indexed')
    return `${outcome.spec}: ${libraryId(outcome)} is already indexed (${indexedText(outcome)}); nothing was fetched. Search it with get_content library_id="${libraryId(outcome)}", or call add_library with refresh: true to fetch it again.`;
  const jobs = outcome.jobs.map((j) => `${j.what} (job_id ${j.id})`).join('; ');
  const notes = outcome.notes.length > 0 ? ` Not indexed: ${outcome.notes.join('; ')}.` : '';
  return [`${outcome.spec}: indexing ${libraryId(outcome)} from ${jobs}.${notes}`, ...plans.map(describeFetchPlan)].join('\n');
}

function structured({ outcome, plans }: PlannedOutcome): z.output<typeof outputSchema>['libraries'][number] {
  if (outcome.status === 'failed') return { spec: outcome.spec, status: 'failed', error: outcome.error.message };
  if (outcome.status === 'indexed') return { spec: outcome.spec, status: 'indexed', library_id: libraryId(outcome), job_ids: [], notes: outcome.notes };
  return { spec: outcome.spec, status: 'queued', library_id: libraryId(outcome), job_ids: outcome.jobs.map((j) => j.id), notes: outcome.notes, fetch_plan: plans };
}

export async function addLibrary(deps: McpDeps, args: Record<string, unknown>): Promise<ToolOutput> {
  // Never this machine's repositories or SSH keys: an MCP client is not the local user.
  const outcomes = await addLibraries(deps, deps.config, args, 'third_party');
  const planned: PlannedOutcome[] = [];
  for (const outcome of outcomes) planned.push(await withPlans(deps, outcome));
  const queued = outcomes.filter((o) => o.status === 'queued');
  const next =
    queued.length === 0
      ? []
      : [
          '',
          'Indexing runs in the background (seconds for a repository, minutes for a large docs site). Follow each job: get_crawl_status with its job_id.',
          `Snippets become searchable as they are stored: get_content with library_id="${libraryId(queued[0]!)}".`,
        ];
  return { text: [...planned.map(describeOutcome), ...next].join('\n'), structured: { libraries: planned.map(structured) } };
}

export function registerAddLibraryTool(server: McpServer, deps: McpDeps): DocdexTool {
  return registerDocdexTool(server, deps, {
    name: ADD_LIBRARY,
    title: 'Index a library at a version',
    description:
      'Indexes the documentation of a library at the exact version a project uses, then get_content searches it. Give specs such as "npm:react@18.3.1", "pypi:requests@2.32.3", "crates:serde@1", a git repository "https://github.com/org/repo@v1.2.0", or a docs URL. ' +
      'A package is resolved through its registry: its repository at the release tag, its docs site, or its published README. Use it when search_libraries does not list the library or the version you need. Returns at once with job ids.',
    inputSchema,
    outputSchema,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    run: (args) => addLibrary(deps, args),
  });
}
