import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { cancelCrawl, resolveCrawlJobId } from '../../crawl/jobs.js';
import { registerDocdexTool } from '../tool.js';
import type { DocdexTool, McpDeps, ToolOutput } from '../tool.js';
import { crawlJobOutput, crawlJobStructured, describeCrawlJob } from './crawl-job.js';
import { jobIdArg } from './crawl-job.js';

export const CANCEL_CRAWL = 'cancel_crawl';

const inputSchema = z.object({ job_id: jobIdArg });

export async function cancelCrawlJob(deps: McpDeps, args: z.output<typeof inputSchema>): Promise<ToolOutput> {
  const job = await cancelCrawl(deps.pool, await resolveCrawlJobId(deps.pool, args.job_id));
  return { text: `Cancelled.\n${describeCrawlJob(job)}`, structured: crawlJobStructured(job) };
}

export function registerCancelCrawlTool(server: McpServer, deps: McpDeps): DocdexTool {
  return registerDocdexTool(server, deps, {
    name: CANCEL_CRAWL,
    title: 'Cancel a crawl',
    description:
      'Stops a queued or running crawl started with init_crawl. Pages already stored stay searchable; the crawl can be resumed later from a terminal (docdex crawl resume). ' +
      'A crawl that already finished cannot be cancelled (the result says so).',
    inputSchema,
    outputSchema: crawlJobOutput,
    // Stops work that cannot be restarted from MCP; stored data is kept. Cancelling twice changes nothing more.
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    run: (args) => cancelCrawlJob(deps, args),
  });
}
