import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { dashboardStats } from '../../core/stats/dashboard.js';
import type { DaemonDeps } from '../deps.js';
import { ErrorBody } from '../errors.js';

const Stats = z
  .object({
    totals: z.object({ sources: z.number(), documents: z.number(), snippets: z.number(), languages: z.number() }),
    languages: z.array(z.object({ language: z.string(), snippets: z.number() })),
    jobs: z.object({ crawl: z.record(z.string(), z.number()), upload: z.record(z.string(), z.number()) }),
    recent_jobs: z.array(z.object({ id: z.string(), kind: z.enum(['crawl', 'upload']), name: z.string(), status: z.string(), failed: z.number().int() }).loose()),
    top_sources: z.array(z.object({ id: z.string(), name: z.string(), version: z.string(), snippets: z.number(), documents: z.number() })),
  })
  .meta({ id: 'DashboardStatistics' });

export function registerStatsRoutes(app: FastifyInstance, deps: DaemonDeps): void {
  app
    .withTypeProvider<ZodTypeProvider>()
    .get('/api/statistics/dashboard', { schema: { summary: 'Totals, jobs by state, recent jobs and top sources', tags: ['statistics'], response: { 200: Stats, 500: ErrorBody } } }, async () =>
      dashboardStats(deps.db.pool),
    );
}
