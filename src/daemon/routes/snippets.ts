import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { getSnippet } from '../../core/store/snippets.js';
import type { DaemonDeps } from '../deps.js';
import { ErrorBody } from '../errors.js';

export const Snippet = z
  .object({
    id: z.number(),
    kind: z.enum(['snippet', 'section']).describe('section: a heading-bounded section of a page (a search result of that kind); its code is its markdown'),
    title: z.string(),
    description: z.string(),
    language: z.string(),
    code: z.string(),
    filename: z.string().nullable(),
    source_url: z.string(),
    source_id: z.string(),
    source_name: z.string(),
    version: z.string(),
    page_count: z.number(),
    position: z.number(),
    llm_enhanced: z.boolean(),
    related: z.array(z.object({ id: z.number(), relationship: z.string(), description: z.string() })),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Snippet' });

export function registerSnippetRoutes(app: FastifyInstance, deps: DaemonDeps): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/snippets/:id',
    {
      schema: {
        summary: 'One snippet (or section) with its code, context and related snippets',
        tags: ['search'],
        params: z.object({ id: z.string() }),
        response: { 200: Snippet, 404: ErrorBody, 422: ErrorBody },
      },
    },
    async (request) => getSnippet(deps.db.pool, request.params.id),
  );
}
