import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { cancelCrawl, CRAWL_JOB_STATUSES, getCrawlJob, listCrawlJobs, resumeCrawl, startCrawl } from '../../core/crawl/jobs.js';
import { crawlRequestSchema, parseCrawlRequest } from '../../core/crawl-request.js';
import type { CrawlRequestInput } from '../../core/crawl-request.js';
import type { DaemonDeps } from '../deps.js';
import { ErrorBody } from '../errors.js';

/**
 * The crawl request's own schema: the OpenAPI document shows its fields, bounds, defaults and descriptions. Closed:
 * a field the request does not have is refused (at the first one, json-body.ts).
 */
export const CrawlRequestBody = crawlRequestSchema.strict().meta({ id: 'CrawlRequest' });

/**
 * Validates the body with the crawl request's rules and reports a bad one as the crawler does (the same
 * message as the CLI and MCP, 422 with its issues). The body goes on unchanged; startCrawl parses it.
 */
const crawlRequestValidator = () => (body: unknown) => {
  try {
    parseCrawlRequest(body);
    return { value: body };
  } catch (error) {
    return { error: error as Error };
  }
};

export const CrawlJobSchema = z
  .object({
    job_id: z.string(),
    id: z.string(),
    status: z.enum(CRAWL_JOB_STATUSES).describe('enhancing: the pages are stored and the LLM is enhancing their snippets (LLM enhancement on)'),
    name: z.string(),
    version: z.string(),
    source_id: z.string().nullable(),
    start_urls: z.array(z.string()),
    max_depth: z.number(),
    pages_found: z.number(),
    pages_crawled: z.number(),
    pages_skipped: z.number(),
    pages_failed: z.number(),
    snippets_stored: z.number(),
    current_url: z.string().nullable(),
    pages_per_second: z.number(),
    eta_seconds: z.number().nullable(),
    error: z.string().nullable(),
    domain_filter: z.string().nullable(),
    url_patterns: z.array(z.string()),
    exclude_patterns: z.array(z.string()),
    max_concurrent_crawls: z.number(),
    use_sitemap: z.boolean(),
    metadata: z.record(z.string(), z.unknown()),
    max_pages: z.number(),
    llm_enhance: z.boolean().describe('Started with LLM enhancement on'),
    llm_pages_total: z.number().describe('Pages of this job with snippets for the LLM stage'),
    llm_pages_done: z.number().describe('Of those, pages the LLM stage is through with'),
    llm_pages_failed: z.number().describe('Of those, pages the LLM stage gave up on (kept their extracted titles and descriptions)'),
    llm_snippets_enhanced: z.number().describe("Snippets the model's answers changed"),
    page_cap_reached: z.boolean().describe('The job found max_pages pages; links found after that were not followed'),
    links_ignored: z.number().describe('Links beyond the per-page cap, summed over the job'),
    prefer_markdown: z.enum(['auto', 'never']).describe("auto: the site's llms-full.txt, llms.txt and markdown twins are used; never: HTML only"),
    routes: z
      .object({ html: z.number(), markdown_twin: z.number(), llms_full: z.number() })
      .describe("Pages stored (or unchanged) by the route their document took: the HTML, its markdown twin, the site's llms-full.txt"),
    render: z.enum(['auto', 'always', 'never']).describe('When pages are rendered in headless Chromium'),
    pages_rendered: z.number().describe('Pages stored from their rendered DOM'),
    pages_render_missed: z.number().describe('Pages that looked client-rendered but were stored as fetched: no Chromium on the worker'),
    render_hint: z.string().nullable().describe('How many pages could not be rendered and how to install Chromium; null when none'),
    crawl_delay_clamped: z.number().nullable().describe('The largest robots.txt Crawl-delay lowered to the ceiling, if any'),
    created_at: z.string(),
    started_at: z.string().nullable(),
    completed_at: z.string().nullable(),
    heartbeat_at: z.string().nullable().describe('Last sign of life from the worker running the job'),
    updated_at: z.string(),
  })
  .meta({ id: 'CrawlJob' });

const JobList = z.object({ items: z.array(CrawlJobSchema), total: z.number(), limit: z.number(), offset: z.number() }).meta({ id: 'CrawlJobList' });

const ListQuery = z.object({
  status: z.enum(CRAWL_JOB_STATUSES).optional(),
  source_id: z.uuid().optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).default(0),
});
const JobParams = z.object({ job_id: z.string() });

export function registerCrawlRoutes(app: FastifyInstance, deps: DaemonDeps): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const create = async (body: CrawlRequestInput) => {
    return startCrawl(deps.db, deps.config, body);
  };
  const createSchema = (summary: string) => ({
    summary,
    tags: ['crawl'],
    body: CrawlRequestBody,
    response: { 202: CrawlJobSchema, 409: ErrorBody, 422: ErrorBody },
  });
  const createOptions = (summary: string) => ({ schema: createSchema(summary), validatorCompiler: crawlRequestValidator });
  r.post('/api/crawl-jobs', createOptions('Start a crawl (the job runs in the background)'), async (request, reply) => reply.status(202).send(await create(request.body)));
  r.post('/crawl/init', createOptions('Start a crawl (alias of POST /api/crawl-jobs)'), async (request, reply) => reply.status(202).send(await create(request.body)));

  const listSchema = (summary: string) => ({ summary, tags: ['crawl'], querystring: ListQuery, response: { 200: JobList, 422: ErrorBody } });
  const list = async (query: z.infer<typeof ListQuery>) =>
    listCrawlJobs(deps.db.pool, {
      limit: query.limit,
      offset: query.offset,
      ...(query.status ? { status: query.status } : {}),
      ...(query.source_id ? { sourceId: query.source_id } : {}),
    });
  r.get('/api/crawl-jobs', { schema: listSchema('List crawl jobs, newest first') }, async (request) => list(request.query));
  r.get('/crawl/jobs', { schema: listSchema('List crawl jobs (alias of GET /api/crawl-jobs)') }, async (request) => list(request.query));

  const getSchema = (summary: string) => ({ summary, tags: ['crawl'], params: JobParams, response: { 200: CrawlJobSchema, 404: ErrorBody, 422: ErrorBody } });
  r.get('/api/crawl-jobs/:job_id', { schema: getSchema('Crawl job status, progress and statistics') }, async (request) => getCrawlJob(deps.db.pool, request.params.job_id));
  r.get('/crawl/status/:job_id', { schema: getSchema('Crawl progress and statistics (alias)') }, async (request) => getCrawlJob(deps.db.pool, request.params.job_id));

  const cancelSchema = (summary: string) => ({
    summary,
    tags: ['crawl'],
    params: JobParams,
    response: { 200: CrawlJobSchema, 404: ErrorBody, 409: ErrorBody, 422: ErrorBody },
  });
  r.post('/api/crawl-jobs/:job_id/cancel', { schema: cancelSchema('Cancel a queued or running crawl') }, async (request) => cancelCrawl(deps.db.pool, request.params.job_id));
  r.post('/crawl/cancel/:job_id', { schema: cancelSchema('Cancel a crawl (alias)') }, async (request) => cancelCrawl(deps.db.pool, request.params.job_id));
  r.post(
    '/api/crawl-jobs/:job_id/resume',
    {
      schema: {
        summary: 'Resume a failed or cancelled crawl from its frontier',
        tags: ['crawl'],
        params: JobParams,
        response: { 202: CrawlJobSchema, 404: ErrorBody, 409: ErrorBody, 422: ErrorBody },
      },
    },
    async (request, reply) => reply.status(202).send(await resumeCrawl(deps.db, deps.config, request.params.job_id)),
  );
}
