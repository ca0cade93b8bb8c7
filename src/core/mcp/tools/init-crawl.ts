import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { startCrawl } from '../../crawl/jobs.js';
import { crawlFieldEntries } from '../../crawl-request.js';
import type { CrawlField, CrawlFieldName, CrawlRequestInput } from '../../crawl-request.js';
import { registerDocdexTool } from '../tool.js';
import type { DocdexTool, McpDeps, ToolOutput } from '../tool.js';
import { crawlJobOutput, crawlJobStructured, describeCrawlJob, libraryRef } from './crawl-job.js';
import { crawlFetchPlan, describeFetchPlan, fetchPlanOutput } from './fetch-plan.js';

export const INIT_CRAWL = 'init_crawl';

/** The spec's MCP default (and ceiling) for pages crawled at once; the CLI and REST default to 3. */
const MCP_DEFAULT_CONCURRENCY = 20;

/** Defaults of this tool that differ from the request's own. */
const MCP_DEFAULTS: Partial<Record<CrawlFieldName, unknown>> = { max_concurrent_crawls: MCP_DEFAULT_CONCURRENCY };

function withDefault(rule: z.ZodType, value: unknown): z.ZodType {
  const base = rule instanceof z.ZodDefault ? (rule.unwrap() as z.ZodType) : rule;
  return base.default(value as never);
}

/** An argument's description for a model: the field's one line and its example. */
function describeForModel(field: CrawlField): string {
  return field.example === undefined ? field.description : `${field.description} E.g. ${JSON.stringify(field.example)}.`;
}

/**
 * The tool's arguments, derived from the crawl request's fields: the same rules (in their portable form where
 * a rule is not portable), with the MCP default concurrency.
 */
export function initCrawlInputSchema(): z.ZodObject {
  const shape = Object.fromEntries(
    crawlFieldEntries().map(([name, field]) => {
      const rule = field.portable ?? field.schema;
      const own = MCP_DEFAULTS[name];
      return [name, (own === undefined ? rule : withDefault(rule, own)).describe(describeForModel(field))];
    }),
  );
  return z.object(shape);
}

const inputSchema = initCrawlInputSchema();
// The job, and what it will fetch (hosts, depth, page cap) for a client that shows it to its user.
const outputSchema = crawlJobOutput.extend({ fetch_plan: fetchPlanOutput });

export async function initCrawl(deps: McpDeps, args: Record<string, unknown>): Promise<ToolOutput> {
  // Validated by the tool's schema above; the crawler validates it again with the full request rules.
  const job = await startCrawl(deps, deps.config, args as CrawlRequestInput, { defaultConcurrency: MCP_DEFAULT_CONCURRENCY });
  const plan = crawlFetchPlan(job);
  const text = [
    `Crawl started for ${job.version ? `${job.name} ${job.version}` : job.name}: job_id ${job.job_id}.`,
    `${job.start_urls.length} start URL${job.start_urls.length === 1 ? '' : 's'}, depth ${job.max_depth}, up to ${job.max_concurrent_crawls} pages at a time.`,
    describeFetchPlan(plan),
    '',
    'Crawling runs in the background and takes from seconds to many minutes depending on the site size.',
    `Follow it: call get_crawl_status with job_id="${job.job_id}". Snippets become searchable as pages are stored: get_content with library_id="${libraryRef(job)}".`,
    `Stop it: call cancel_crawl with job_id="${job.job_id}". From a terminal: docdex crawl status ${job.job_id}.`,
    '',
    describeCrawlJob(job),
  ].join('\n');
  return { text, structured: { ...crawlJobStructured(job), fetch_plan: plan } };
}

export function registerInitCrawlTool(server: McpServer, deps: McpDeps): DocdexTool {
  return registerDocdexTool(server, deps, {
    name: INIT_CRAWL,
    title: 'Crawl a documentation site',
    description:
      'Starts indexing a documentation website: docdex crawls from the start URLs, extracts the code examples with their context, and makes them searchable with get_content. ' +
      'Use it when search_libraries does not find the library you need. The name is detected from the site when omitted. ' +
      'Returns at once with a job_id; the crawl runs in the background: follow it with get_crawl_status, stop it with cancel_crawl. ' +
      'Crawling an already indexed library again updates it (unchanged pages are skipped).',
    inputSchema,
    outputSchema,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    run: (args) => initCrawl(deps, args),
  });
}
