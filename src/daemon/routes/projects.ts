import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MAX_PROJECT_REF_CHARS, PROJECT_LIBRARY_STATES, projectLibraries } from '../../core/project/libraries.js';
import { searchProject } from '../../core/project/search.js';
import { listProjects } from '../../core/project/store.js';
import type { ProjectRecord } from '../../core/project/store.js';
import { MAX_QUERY_CHARS } from '../../core/search/query.js';
import type { DaemonDeps } from '../deps.js';
import { clientGone } from '../client-gone.js';
import { ErrorBody } from '../errors.js';
import { SearchResultSchema } from './search.js';

/**
 * Asking by project over REST: the projects `docdex sync` recorded, a project's libraries with their indexed
 * state, and a search of its libraries at exactly the versions it uses. The project is named by its id, name
 * or root directory (URL-encoded: `%2Fsrv%2Fapp`); an unknown one is a 404 (project_not_found).
 */

const ProjectSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    root: z.string().nullable().describe("The project's directory on the server's disk; null for a project recorded by name only"),
    created_at: z.string(),
    synced_at: z.string().nullable().describe('When `docdex sync` last recorded its libraries'),
  })
  .meta({ id: 'Project' });

const ProjectLibrarySchema = z
  .object({
    ecosystem: z.enum(['npm', 'pypi', 'crates', 'go', 'url', 'git']),
    name: z.string(),
    version: z.string().describe("The exact version the project's lockfile names ('' for an unversioned source)"),
    spec: z.string().describe('What `docdex add` indexes it from'),
    direct: z.boolean(),
    state: z
      .enum(PROJECT_LIBRARY_STATES)
      .describe(
        'indexed: a source of exactly this version has pages; indexing: it exists without pages yet; failed: it has no pages and its last indexing job failed or was cancelled (see reason; sync queues it again); missing: not indexed; unresolved: sync found nothing to index (see reason)',
      ),
    reason: z.string().optional(),
    source_id: z.string().nullable(),
    snippet_count: z.number().int(),
    other_versions: z.array(z.string()).describe('Other indexed versions of the library: never answered in its place'),
  })
  .meta({ id: 'ProjectLibrary' });

const NotIndexedSchema = z.object({
  name: z.string(),
  version: z.string(),
  spec: z.string(),
  state: z.enum(PROJECT_LIBRARY_STATES.filter((s) => s !== 'indexed')),
  reason: z.string().optional(),
  other_versions: z.array(z.string()),
});

const ProjectParams = z.object({
  project: z.string().min(1).max(MAX_PROJECT_REF_CHARS).describe("The project's id, name, or root directory (URL-encoded)"),
});

const ProjectSearchQuery = z.object({
  q: z.string().min(1).max(MAX_QUERY_CHARS).describe('Search text'),
  language: z.string().max(50).optional().describe('Language, any common spelling (py, python, js, sh...)'),
  limit: z.coerce.number().int().min(1).max(100).default(10),
  offset: z.coerce.number().int().min(0).max(1000).default(0),
});

const ProjectSearchResponse = z
  .object({
    project: ProjectSchema,
    items: z.array(SearchResultSchema).describe("Only from the project's libraries at the versions it uses; source_name and version name each one's library"),
    total: z.number(),
    limit: z.number(),
    offset: z.number(),
    corrected: z.array(z.object({ from: z.string(), to: z.string() })).optional(),
    fallback: z.boolean(),
    searched: z.number().int().describe("How many of the project's libraries were searched (indexed at their version)"),
    not_indexed: z.array(NotIndexedSchema).describe('Libraries not searched because their version is not indexed: `docdex sync` (or POST /api/projects/sync) indexes them'),
  })
  .meta({ id: 'ProjectSearchResponse' });

function projectJson(project: ProjectRecord): z.infer<typeof ProjectSchema> {
  return { id: project.id, name: project.name, root: project.root, created_at: project.created_at.toISOString(), synced_at: project.synced_at?.toISOString() ?? null };
}

export function registerProjectRoutes(app: FastifyInstance, deps: DaemonDeps): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get('/api/projects', { schema: { summary: 'List the projects `docdex sync` recorded', tags: ['projects'], response: { 200: z.object({ items: z.array(ProjectSchema) }) } } }, async () => ({
    items: (await listProjects(deps.db.pool)).map(projectJson),
  }));
  r.get(
    '/api/projects/:project/libraries',
    {
      schema: {
        summary: "A project's libraries at the versions it uses, each with its state in the index",
        tags: ['projects'],
        params: ProjectParams,
        response: { 200: z.object({ project: ProjectSchema, libraries: z.array(ProjectLibrarySchema) }), 404: ErrorBody, 422: ErrorBody },
      },
    },
    async (request) => {
      const { project, libraries } = await projectLibraries(deps.db.pool, request.params.project);
      return { project: projectJson(project), libraries };
    },
  );
  r.get(
    '/api/projects/:project/search',
    {
      schema: {
        summary: "Search a project's libraries at exactly the versions it uses, ranked together",
        description: 'Another indexed version of a library is never searched in place of the one the project uses: a version that is not indexed is listed in not_indexed.',
        tags: ['projects'],
        params: ProjectParams,
        querystring: ProjectSearchQuery,
        response: { 200: ProjectSearchResponse, 404: ErrorBody, 422: ErrorBody },
      },
    },
    async (request, reply) => {
      const { q, ...rest } = request.query;
      const result = await searchProject(deps.db.pool, { project: request.params.project, query: q, ...rest, screening: deps.config.screening }, clientGone(reply));
      return { ...result, project: projectJson(result.project) };
    },
  );
}
