import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { getCrawlJob, resolveCrawlJobId } from '../../crawl/jobs.js';
import { registerDocdexTool } from '../tool.js';
import type { DocdexTool, McpDeps, ToolOutput } from '../tool.js';
import { crawlJobOutput, crawlJobStructured, describeCrawlJob, jobIdArg } from './crawl-job.js';

export const GET_CRAWL_STATUS = 'get_crawl_status';

const inputSchema = z.object({ job_id: jobIdArg });

export async function getCrawlStatus(deps: McpDeps, args: z.output<typeof inputSchema>): Promise<ToolOutput> {
  const job = await getCrawlJob(deps.pool, await resolveCrawlJobId(deps.pool, args.job_id));
  return { text: describeCrawlJob(job), structured: crawlJobStructured(job) };
}

export function registerGetCrawlStatusTool(server: McpServer, deps: McpDeps): DocdexTool {
  return registerDocdexTool(server, deps, {
    name: GET_CRAWL_STATUS,
    title: "Get a crawl's progress",
    description:
      'Reports a crawl started with init_crawl: its status (queued, running, completed, failed, cancelled), pages found, crawled, skipped and failed, snippets stored, the page being crawled and any error, with what to do next.',
    inputSchema,
    outputSchema: crawlJobOutput,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: (args) => getCrawlStatus(deps, args),
  });
}
