import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { CrawlJob } from '../../core/crawl/jobs.js';
import { deleteSource, getSource, listSources, updateSource } from '../../core/sources/manage.js';
import { recrawlAnySource } from '../../core/crawl/recrawl.js';
import { resolveSource } from '../../core/sources/resolve.js';
import { listSourceSnippets } from '../../core/store/snippets.js';
import type { DaemonDeps } from '../deps.js';
import type { ZodApp } from '../zod-app.js';
import { ErrorBody } from '../errors.js';
import { CrawlJobSchema } from './crawl.js';
import { UploadJobSchema } from './uploads.js';
import { Snippet } from './snippets.js';

export const SourceSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    version: z.string(),
    description: z.string(),
    base_url: z.string().nullable(),
    kind: z.enum(['crawl', 'upload', 'git']),
    snippet_count: z.number(),
    page_count: z.number(),
    version_count: z.number(),
    last_crawled_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Source' });

const SourceDetailsSchema = SourceSchema.extend({
  crawl_config: z
    .object({
      start_urls: z.array(z.string()).optional(),
      max_depth: z.number().optional(),
      domain_filter: z.string().nullable().optional(),
      url_patterns: z.array(z.string()).optional(),
      exclude_patterns: z.array(z.string()).optional(),
      max_concurrent_crawls: z.number().optional(),
    })
    .describe('The stored crawl configuration recrawl reuses'),
  metadata: z.record(z.string(), z.unknown()),
  languages: z.array(z.object({ language: z.string(), snippets: z.number() })),
  jobs: z.array(z.object({ id: z.string(), kind: z.enum(['crawl', 'upload']), status: z.string(), created_at: z.string(), completed_at: z.string().nullable() })),
}).meta({ id: 'SourceDetails' });

const DeleteResultSchema = z
  .object({ id: z.string(), name: z.string(), version: z.string(), documents: z.number(), snippets: z.number(), crawl_jobs: z.number(), upload_jobs: z.number() })
  .describe('What was deleted')
  .meta({ id: 'DeleteResult' });

const SourceList = z.object({ items: z.array(SourceSchema), total: z.number(), limit: z.number(), offset: z.number() }).meta({ id: 'SourceList' });

const SourceUpdateBody = z
  .object({
    name: z.string().min(1).max(200).optional(),
    version: z.string().max(100).optional(),
    description: z.string().max(2000).optional(),
    base_url: z.string().max(2048).nullable().optional(),
    // As long as the crawl request's globs may be (crawl-request.ts).
    add_url_patterns: z.array(z.string().max(500)).max(100).optional().describe('Include globs added to the stored crawl configuration'),
    add_exclude_patterns: z.array(z.string().max(500)).max(100).optional().describe('Exclude globs added to the stored crawl configuration'),
    max_depth: z.number().int().min(0).max(3).optional(),
    max_concurrent_crawls: z.number().int().min(1).max(20).optional(),
  })
  .strict()
  .meta({ id: 'SourceUpdate' });

const Params = z.object({ source_id: z.string().describe('Source UUID or exact name') });
const Paging = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).default(0),
});

/** GET /api/sources, /api/sources/:source_id and its snippets. */
function registerSourceReadRoutes(r: ZodApp, deps: DaemonDeps): void {
  r.get(
    '/api/sources',
    {
      schema: {
        summary: 'List sources (libraries) with snippet, page and version counts',
        tags: ['sources'],
        querystring: Paging.extend({ q: z.string().max(200).optional().describe('Fuzzy name filter') }),
        response: { 200: SourceList, 422: ErrorBody },
      },
    },
    async (request) => listSources(deps.db.pool, { limit: request.query.limit, offset: request.query.offset, ...(request.query.q ? { query: request.query.q } : {}) }),
  );
  r.get(
    '/api/sources/:source_id',
    { schema: { summary: 'Source details, languages and recent jobs', tags: ['sources'], params: Params, response: { 200: SourceDetailsSchema, 404: ErrorBody } } },
    async (request) => getSource(deps.db.pool, request.params.source_id),
  );
  r.get(
    '/api/sources/:source_id/snippets',
    {
      schema: {
        summary: "A source's snippets in page order",
        tags: ['sources'],
        params: Params,
        querystring: Paging.extend({ language: z.string().max(50).optional() }),
        response: { 200: z.object({ items: z.array(Snippet.omit({ related: true })), total: z.number(), limit: z.number(), offset: z.number() }), 404: ErrorBody },
      },
    },
    async (request) => {
      const { id } = await resolveSource(deps.db.pool, request.params.source_id);
      return listSourceSnippets(deps.db.pool, id, {
        limit: request.query.limit,
        offset: request.query.offset,
        ...(request.query.language ? { language: request.query.language } : {}),
      });
    },
  );
}

/** PUT and DELETE /api/sources/:source_id, and POST its recrawl. */
function registerSourceChangeRoutes(r: ZodApp, deps: DaemonDeps): void {
  r.put(
    '/api/sources/:source_id',
    {
      schema: {
        summary: 'Edit name, version, base URL, URL patterns, depth or concurrency',
        tags: ['sources'],
        params: Params,
        body: SourceUpdateBody,
        response: { 200: SourceDetailsSchema, 404: ErrorBody, 409: ErrorBody, 422: ErrorBody },
      },
    },
    async (request) => {
      const b = request.body;
      return updateSource(deps.db.pool, request.params.source_id, {
        ...(b.name === undefined ? {} : { name: b.name }),
        ...(b.version === undefined ? {} : { version: b.version }),
        ...(b.description === undefined ? {} : { description: b.description }),
        ...(b.base_url === undefined ? {} : { baseUrl: b.base_url }),
        ...(b.add_url_patterns === undefined ? {} : { addIncludePatterns: b.add_url_patterns }),
        ...(b.add_exclude_patterns === undefined ? {} : { addExcludePatterns: b.add_exclude_patterns }),
        ...(b.max_depth === undefined ? {} : { maxDepth: b.max_depth }),
        ...(b.max_concurrent_crawls === undefined ? {} : { maxConcurrent: b.max_concurrent_crawls }),
      });
    },
  );
  r.delete(
    '/api/sources/:source_id',
    {
      schema: {
        summary: 'Delete a source with all its documents, snippets and jobs',
        tags: ['sources'],
        params: Params,
        response: { 200: DeleteResultSchema, 404: ErrorBody, 409: ErrorBody },
      },
    },
    async (request) => deleteSource(deps.db.pool, request.params.source_id),
  );
  r.post(
    '/api/sources/:source_id/recrawl',
    {
      schema: {
        summary: 'Re-crawl with the stored configuration (unchanged pages are skipped); a git source is checked out again (an upload job)',
        description: "A git source on this server's disk or reached over SSH is refused here (403, git_remote_refused): `docdex sources recrawl` on the CLI can.",
        tags: ['sources'],
        params: Params,
        response: { 202: z.union([CrawlJobSchema, UploadJobSchema]), 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 422: ErrorBody },
      },
    },
    async (request, reply) => {
      const started = await recrawlAnySource(deps.db, deps.config, request.params.source_id);
      return reply.status(202).send(started.job as unknown as CrawlJob);
    },
  );
}

export function registerSourceRoutes(app: FastifyInstance, deps: DaemonDeps): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  registerSourceReadRoutes(r, deps);
  registerSourceChangeRoutes(r, deps);
}
