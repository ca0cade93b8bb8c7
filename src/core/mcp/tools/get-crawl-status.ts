import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { getCrawlJob, resolveCrawlJobId } from '../../crawl/jobs.js';
import { registerDocdexTool } from '../tool.js';
import type { DocdexTool, McpDeps, ToolOutput } from '../tool.js';
import { crawlJobOutput, crawlJobStructured, describeCrawlJob, jobIdArg } from './crawl-job.js';
import type { CrawlJobView } from './crawl-job.js';
import { getUploadJob, isUploadJob } from '../../upload/job-rows.js';
import type { UploadJob } from '../../upload/job-rows.js';
import { isUuid } from '../../sources/resolve.js';

export const GET_CRAWL_STATUS = 'get_crawl_status';

const inputSchema = z.object({ job_id: jobIdArg });

/** An upload job (a git checkout or a package README queued by add_library), told in a crawl job's terms. */
function uploadAsJobView(job: UploadJob): CrawlJobView {
  return {
    ...job,
    name: job.source_name ?? job.name,
    version: job.version ?? '',
    pages_found: job.file_count,
    pages_crawled: job.processed_files - job.failed_files,
    pages_failed: job.failed_files,
    snippets_stored: job.snippets_extracted,
    status: job.status === 'processing' ? 'running' : job.status,
  };
}

/** The job's include directives, when its pages have any: resolved, and the first kept as written with why. */
function includesText(job: UploadJob): string {
  if (job.includes_resolved + job.includes_unresolved === 0) return '';
  const kept = job.unresolved_includes.slice(0, 5).map((u) => `\n  ${u.path}: ${u.include} (${u.reason})`);
  return `\nIncludes: ${job.includes_resolved} resolved from the same commit, ${job.includes_unresolved} kept as written${kept.join('')}`;
}

export async function getCrawlStatus(deps: McpDeps, args: z.output<typeof inputSchema>): Promise<ToolOutput> {
  const id = args.job_id.trim().toLowerCase();
  if (isUuid(id) && (await isUploadJob(deps.pool, id))) {
    const job = await getUploadJob(deps.pool, id);
    const view = uploadAsJobView(job);
    const text = describeCrawlJob(view)
      .replace(/^Crawl job/, 'Indexing job')
      .replace('Pages:', 'Files:');
    return { text: `${text}${includesText(job)}`, structured: crawlJobStructured(view) };
  }
  const job = await getCrawlJob(deps.pool, await resolveCrawlJobId(deps.pool, args.job_id));
  return { text: describeCrawlJob(job), structured: crawlJobStructured(job) };
}

export function registerGetCrawlStatusTool(server: McpServer, deps: McpDeps): DocdexTool {
  return registerDocdexTool(server, deps, {
    name: GET_CRAWL_STATUS,
    title: "Get a crawl's progress",
    description:
      'Reports a crawl started with init_crawl, or an indexing job started by add_library: its status (queued, running, completed, failed, cancelled), pages found, crawled, skipped and failed, snippets stored, the page being crawled and any error, with what to do next.',
    inputSchema,
    outputSchema: crawlJobOutput,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: (args) => getCrawlStatus(deps, args),
  });
}
