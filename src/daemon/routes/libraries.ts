import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ERROR_CODE_NAMES } from '../../core/errors.js';
import { addLibraries } from '../../core/library/add.js';
import { ADD_STATUSES, JOB_ORIGIN_KINDS } from '../../core/library/outcome.js';
import { addRequestSchema, parseAddRequest } from '../../core/library-spec.js';
import type { AddRequestInput } from '../../core/library-spec.js';
import type { DaemonDeps } from '../deps.js';
import { ErrorBody } from '../errors.js';

/** The add request's own schema: the OpenAPI document shows its fields and their descriptions. */
const AddRequestBody = addRequestSchema.meta({ id: 'AddLibrariesRequest' });

/** Reports a bad body as the CLI and MCP do (one message, 422 or the spec's own code), before anything runs. */
const addRequestValidator = () => (body: unknown) => {
  try {
    parseAddRequest(body);
    return { value: body };
  } catch (error) {
    return { error: error as Error };
  }
};

const AddedJob = z.object({
  type: z.enum(['crawl', 'upload']).describe('crawl: GET /api/crawl-jobs/{id}; upload (a git checkout or a README): GET /upload/status/{id}'),
  id: z.string(),
  what: z.string(),
  origin: z
    .object({ kind: z.enum(JOB_ORIGIN_KINDS), url: z.string() })
    .optional()
    .describe("Where the job's documents come from: the docs site's start URL, the repository's remote, or the package archive its README was read from"),
});

const AddOutcome = z
  .object({
    spec: z.string(),
    kind: z.enum(['url', 'git', 'package', 'invalid']),
    status: z
      .enum(ADD_STATUSES)
      .describe('queued: its jobs run in the background; indexed: that version was already indexed and nothing was fetched (refresh: true fetches it again); failed: see error'),
    name: z.string().optional(),
    version: z.string().optional(),
    source_id: z.string().optional().describe('indexed: the source that holds it'),
    document_count: z.number().optional(),
    snippet_count: z.number().optional(),
    jobs: z.array(AddedJob).optional(),
    notes: z.array(z.string()).optional().describe('What could not be indexed and why (a package whose repository has no tag for its version, …)'),
    error: z.object({ code: z.enum(ERROR_CODE_NAMES), message: z.string(), hint: z.string().optional() }).optional(),
  })
  .meta({ id: 'AddedLibrary' });

const AddResponse = z.object({ items: z.array(AddOutcome) }).meta({ id: 'AddedLibraries' });

export function registerLibraryRoutes(app: FastifyInstance, deps: DaemonDeps): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.post(
    '/api/libraries',
    {
      schema: {
        summary: 'Index libraries: docs URLs, git repositories (https) or packages (npm:, pypi:, crates:, go:); one job each, in the background',
        description:
          "One spec that cannot be indexed answers with its error and status; with several, each item says queued, indexed (already; nothing fetched) or failed. Repositories on the server's disk or over SSH are refused here (CLI only).",
        tags: ['libraries'],
        body: AddRequestBody,
        response: { 202: AddResponse, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody, 503: ErrorBody },
      },
      validatorCompiler: addRequestValidator,
    },
    async (request, reply) => reply.status(202).send({ items: await addLibraries(deps.db, deps.config, request.body as AddRequestInput, 'third_party') }),
  );
}
