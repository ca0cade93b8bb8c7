import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { startCrawl } from '../../crawl/jobs.js';
import { crawlRequestSchema, DEFAULT_MAX_PAGES, MAX_PAGES_CEILING } from '../../crawl/request.js';
import { registerDocdexTool } from '../tool.js';
import type { DocdexTool, McpDeps, ToolOutput } from '../tool.js';
import { crawlJobOutput, crawlJobStructured, describeCrawlJob, libraryRef } from './crawl-job.js';

export const INIT_CRAWL = 'init_crawl';

/** The spec's MCP default (and ceiling) for pages crawled at once; the CLI and REST default to 3. */
const MCP_DEFAULT_CONCURRENCY = 20;

const fields = crawlRequestSchema.shape;

// The crawler's own field rules, with the MCP defaults and descriptions written for a model.
const inputSchema = z.object({
  start_urls: fields.start_urls.describe('Documentation pages to start from, e.g. ["https://docs.example.com/"]. http(s) only; at least one.'),
  name: fields.name.describe('Library or framework name, e.g. "fastapi". Optional: detected from the start page when omitted.'),
  max_depth: z
    .number()
    .int()
    .min(0)
    .max(3)
    .default(1)
    .describe('How far to follow links: 0 = only the start URLs, 1 = plus the pages they link to (default), 2 and 3 = further.'),
  version: z.string().trim().max(100).optional().describe('Version of the documented library, e.g. "0.110". Crawls of different versions are kept apart.'),
  domain_filter: z.string().trim().max(253).optional().describe('Only crawl pages on this domain and its subdomains, e.g. "example.com" (a registrable domain, not "com" or an IP). Default: the start URLs\' hosts.'),
  url_patterns: fields.url_patterns.describe('Only crawl URLs matching one of these globs, e.g. ["https://docs.example.com/guide/**"].'),
  exclude_patterns: fields.exclude_patterns.describe('Never crawl URLs matching these globs, e.g. ["**/changelog/**"].'),
  max_concurrent_crawls: z
    .number()
    .int()
    .min(1)
    .max(20)
    .default(MCP_DEFAULT_CONCURRENCY)
    .describe('Pages fetched at once, 1 to 20 (default 20). The delay between requests to one site still applies.'),
  max_pages: fields.max_pages.describe(
    `Most pages to crawl, 1 to ${MAX_PAGES_CEILING} (default ${DEFAULT_MAX_PAGES}). Links found after that are not followed; get_crawl_status says when the cap was reached.`,
  ),
  // String values only: a schema that accepts any value, or a list of types, is not portable across model
  // providers' schema dialects (the MCP inspector's --strict check flags both).
  metadata: z
    .record(z.string(), z.string().max(2000))
    .optional()
    .describe('Free-form extra data stored with the library, e.g. {"repository": "https://github.com/...", "description": "..."}.'),
});

export async function initCrawl(deps: McpDeps, args: z.output<typeof inputSchema>): Promise<ToolOutput> {
  const job = await startCrawl(deps, deps.config, args, { defaultConcurrency: MCP_DEFAULT_CONCURRENCY });
  const text = [
    `Crawl started for ${job.version ? `${job.name} ${job.version}` : job.name}: job_id ${job.job_id}.`,
    `${job.start_urls.length} start URL${job.start_urls.length === 1 ? '' : 's'}, depth ${job.max_depth}, up to ${job.max_concurrent_crawls} pages at a time.`,
    '',
    'Crawling runs in the background and takes from seconds to many minutes depending on the site size.',
    `Follow it: call get_crawl_status with job_id="${job.job_id}". Snippets become searchable as pages are stored: get_content with library_id="${libraryRef(job)}".`,
    `Stop it: call cancel_crawl with job_id="${job.job_id}". From a terminal: docdex crawl status ${job.job_id}.`,
    '',
    describeCrawlJob(job),
  ].join('\n');
  return { text, structured: crawlJobStructured(job) };
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
    outputSchema: crawlJobOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    run: (args) => initCrawl(deps, args),
  });
}
