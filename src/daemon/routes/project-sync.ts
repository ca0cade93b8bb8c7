import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { LIBRARY_STATES } from '../../core/project/sync-plan.js';
import { syncRecordedProject } from '../../core/project/sync.js';
import type { DaemonDeps } from '../deps.js';
import { ErrorBody } from '../errors.js';

/**
 * `POST /api/projects/sync`: syncs a project `docdex sync` recorded, from its recorded directory. A client
 * names the project, never a directory: the server reads no path a remote caller gives.
 */

const SyncBody = z
  .object({
    project: z.string().trim().min(1).max(4096).describe('The recorded project: its name, id or root path'),
    all: z.boolean().optional().describe('Transitive dependencies too'),
    include: z.array(z.string().min(1).max(500)).max(200).optional().describe('Only names matching these globs'),
    exclude: z.array(z.string().min(1).max(500)).max(200).optional().describe('Leave out names matching these globs'),
    dry_run: z.boolean().optional().describe('Answer with the plan; queue and record nothing'),
  })
  .strict()
  .meta({ id: 'ProjectSyncRequest' });

const SyncedLibrary = z.object({
  ecosystem: z.string(),
  name: z.string(),
  version: z.string().nullable(),
  direct: z.boolean(),
  state: z.enum(LIBRARY_STATES),
  other_versions: z.array(z.string()),
  reason: z.string().nullable(),
  hint: z.string().nullable().describe('unresolved: what to do about it, when known (e.g. the registry setting to point at a mirror)'),
  spec: z.string(),
  document_count: z.number().describe('What the source of exactly this version holds; an indexed library with no snippets has nothing to search'),
  snippet_count: z.number(),
});

const SyncResponse = z
  .object({
    project_id: z.string().nullable(),
    name: z.string(),
    dry_run: z.boolean(),
    files: z.array(z.string()),
    libraries: z.array(SyncedLibrary),
    skipped: z.array(z.object({ name: z.string(), manifest: z.string(), reason: z.string() })),
    notes: z.array(z.string()),
    to_add: z.array(z.string()),
    jobs: z.array(z.object({ type: z.enum(['crawl', 'upload']), id: z.string(), what: z.string(), library: z.string() })),
  })
  .meta({ id: 'ProjectSync' });

export function registerProjectSyncRoutes(app: FastifyInstance, deps: DaemonDeps): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.post(
    '/api/projects/sync',
    {
      schema: {
        summary: 'Sync a recorded project: queue the docs of its dependencies at the versions its lockfiles pin',
        description: 'Only a project `docdex sync` recorded, read from its recorded directory. Libraries that cannot be indexed are listed unresolved with the reason.',
        tags: ['projects'],
        body: SyncBody,
        response: { 202: SyncResponse, 404: ErrorBody, 422: ErrorBody, 503: ErrorBody },
      },
    },
    async (request, reply) => {
      const { project, dry_run: dryRun, ...options } = request.body;
      const result = await syncRecordedProject(deps.db, deps.config, project, { options, dryRun: dryRun === true });
      return reply.status(202).send(result);
    },
  );
}
