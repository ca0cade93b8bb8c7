import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { currentMigrationVersion, latestMigrationId } from '../../core/db/migrate.js';
import { databaseUnavailableReason } from '../../core/db/errors.js';
import { countAllJobs } from '../../core/queue/jobs-table.js';
import type { DaemonDeps } from '../deps.js';

const Health = z
  .object({
    status: z.enum(['ok', 'unavailable']),
    version: z.string(),
    database: z.object({ reachable: z.boolean(), latency_ms: z.number().nullable(), error: z.string().optional() }),
    migrations: z.object({ current: z.number().nullable(), latest: z.number() }),
    workers: z.object({ running: z.boolean(), kinds: z.array(z.string()), active_elsewhere: z.number().nullable() }),
    queue: z.object({ depth: z.number().nullable(), active: z.number().nullable() }),
  })
  .meta({ id: 'Health' });

export function registerHealthRoutes(app: FastifyInstance, deps: DaemonDeps): void {
  app
    .withTypeProvider<ZodTypeProvider>()
    .get('/health', { schema: { summary: 'Health of the daemon, its database and queue', tags: ['health'], response: { 200: Health, 503: Health } } }, async (_request, reply) => {
      const started = performance.now();
      const body: z.infer<typeof Health> = {
        status: 'ok',
        version: deps.version,
        database: { reachable: false, latency_ms: null },
        migrations: { current: null, latest: latestMigrationId() },
        workers: { ...deps.workers(), active_elsewhere: null },
        queue: { depth: null, active: null },
      };
      try {
        body.migrations.current = await currentMigrationVersion(deps.db.pool);
        body.database = { reachable: true, latency_ms: Math.round((performance.now() - started) * 10) / 10 };
        body.queue = await countAllJobs(deps.db.pool);
      } catch (error) {
        body.status = 'unavailable';
        // A fixed reason, never the driver's message: that names the socket path in the data directory.
        if (!body.database.reachable) body.database.error = databaseUnavailableReason(error) ?? 'query failed';
      }
      return reply.status(body.status === 'ok' ? 200 : 503).send(body);
    });
}
