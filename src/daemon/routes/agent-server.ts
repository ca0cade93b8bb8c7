import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AgentServerError } from '../../core/agent/agent-server-client.js';
import { ensureManagerToken } from '../../core/agent/token.js';
import { workspaceLayout } from '../../core/agent/workspace.js';
import { readAgentServerLog } from '../../core/agent-server/control.js';
import {
  CliEnvResponse,
  GitCredentialInput,
  GitCredentialRecord,
  addGitCredential,
  hostingCliEnv,
  listGitCredentials,
  removeGitCredential,
  setDefaultGitCredential,
} from '../../core/agent-server/git-credentials.js';
import { agentServerLayout, agentServerUrl, isLoopbackHost } from '../../core/agent-server/layout.js';
import { listAgentSessions } from '../../core/agent-server/sessions.js';
import { AgentServerRecord, readAgentServerState, setDesiredState } from '../../core/agent-server/state.js';
import type { DaemonDeps, RouteModule } from '../deps.js';
import type { ZodApp } from '../zod-app.js';
import { bearerToken, createTokenChecker, rejectUnauthorized } from '../auth.js';
import { ErrorBody, sendError } from '../errors.js';
import { answerBadInputWith400 } from './agent-errors.js';

/**
 * The agent server's HTTP surface:
 *
 * - GET /api/internal/git-credentials/cli-env: the hosting CLI's environment with its token variables,
 *   for the generated mgr-cli-env.js plugin in the agent server process. Manager token only (constant-time
 *   compare), and only from this host. Not on the mgr allow-list, so no agent can read it.
 * - /api/agent-server (REST auth): status, start/stop/restart (they set the desired state the supervising
 *   daemon acts on), sessions and the log tail.
 * - /api/settings/git-credentials (REST auth): manage git credentials; tokens go in, never out.
 */

const AgentServerReport = AgentServerRecord.extend({ endpoint: z.string(), logFile: z.string() }).meta({ id: 'AgentServerReport' });

const AgentSession = z
  .object({
    id: z.string(),
    title: z.string(),
    directory: z.string().nullable(),
    parentId: z.string().nullable(),
    createdAt: z.number().nullable(),
    updatedAt: z.number().nullable(),
  })
  .meta({ id: 'AgentSession' });

/** Same host: a loopback peer, or a peer using this server's own address. */
function fromThisHost(request: FastifyRequest): boolean {
  const peer = request.socket.remoteAddress ?? '';
  return isLoopbackHost(peer) || (peer !== '' && peer === request.socket.localAddress);
}

type AgentServerReportValue = z.infer<typeof AgentServerReport>;

/** GET /api/internal/git-credentials/cli-env: manager token and this host only. */
function registerCliEnvRoute(r: ZodApp, deps: DaemonDeps): void {
  r.get(
    '/api/internal/git-credentials/cli-env',
    {
      schema: {
        summary: "The hosting CLI's environment (GH_TOKEN, GITHUB_TOKEN) from the git credentials, for the agent server process",
        description:
          'Manager token required. Answers only requests from this host. Deliberately not reachable through the mgr tool: agents never see these tokens. ' +
          'With repoId, a credential bound to that repo wins over the default.',
        tags: ['agent-internal'],
        security: [{ bearer: [] }],
        querystring: z.object({ repoId: z.coerce.number().int().positive().optional() }),
        response: { 200: CliEnvResponse, 401: ErrorBody, 403: ErrorBody },
      },
    },
    async (request, reply) => {
      const { token } = await ensureManagerToken(deps.db.pool);
      if (!createTokenChecker([token])(bearerToken(request))) return rejectUnauthorized(reply, 'docdex-internal');
      if (!fromThisHost(request)) return sendError(reply, 'forbidden', 'The hosting CLI environment is only served to the agent server on this host.');
      return hostingCliEnv(deps.db.pool, request.query.repoId === undefined ? {} : { repoId: request.query.repoId });
    },
  );
}

const tags = ['agent-server'];

/** GET /api/agent-server and POST start, stop, restart (they record the desired state). */
function registerAgentServerStateRoutes(r: ZodApp, deps: DaemonDeps, report: () => Promise<AgentServerReportValue>): void {
  r.get('/api/agent-server', { schema: { summary: 'The agent server: desired state and what its supervising daemon reports', tags, response: { 200: AgentServerReport } } }, report);

  for (const action of ['start', 'stop', 'restart'] as const) {
    r.post(
      `/api/agent-server/${action}`,
      {
        schema: {
          summary: `${action[0]!.toUpperCase()}${action.slice(1)} the agent server`,
          description: 'Records the desired state and returns at once (202); the supervising daemon acts within seconds. Poll GET /api/agent-server.',
          tags,
          response: { 202: AgentServerReport },
        },
      },
      async (_request, reply) => {
        await setDesiredState(deps.db.pool, action === 'stop' ? 'stopped' : 'running', { restart: action === 'restart' });
        return reply.status(202).send(await report());
      },
    );
  }
}

/** GET /api/agent-server/sessions and /logs. */
function registerAgentServerReadRoutes(r: ZodApp, deps: DaemonDeps): void {
  r.get(
    '/api/agent-server/sessions',
    {
      schema: {
        summary: "The agent server's sessions, most recently updated first",
        tags,
        querystring: z.object({ limit: z.coerce.number().int().min(1).max(1000).optional(), search: z.string().max(200).optional() }),
        response: { 200: z.object({ sessions: z.array(AgentSession) }), 502: ErrorBody },
      },
    },
    async (request, reply) => {
      try {
        return {
          sessions: await listAgentSessions(deps.config, {
            ...(request.query.limit === undefined ? {} : { limit: request.query.limit }),
            ...(request.query.search === undefined ? {} : { search: request.query.search }),
          }),
        };
      } catch (error) {
        if (error instanceof AgentServerError || (error as { code?: string }).code === 'agent_server_down') return sendError(reply, 'bad_gateway', (error as Error).message);
        throw error;
      }
    },
  );

  r.get(
    '/api/agent-server/logs',
    {
      schema: {
        summary: "The last lines of the agent server's output",
        tags,
        querystring: z.object({ lines: z.coerce.number().int().min(1).max(5000).optional() }),
        response: { 200: z.object({ file: z.string(), lines: z.array(z.string()) }) },
      },
    },
    async (request) => readAgentServerLog(deps.config, request.query.lines ?? 200),
  );
}

const credentialTags = ['agent-settings'];

/** /api/settings/git-credentials: list, store, make default, remove. Tokens go in, never out. */
function registerGitCredentialRoutes(r: ZodApp, deps: DaemonDeps): void {
  r.get(
    '/api/settings/git-credentials',
    { schema: { summary: 'Git credentials (tokens are never returned)', tags: credentialTags, response: { 200: z.object({ credentials: z.array(GitCredentialRecord) }) } } },
    async () => ({ credentials: await listGitCredentials(deps.db.pool) }),
  );
  r.post(
    '/api/settings/git-credentials',
    {
      schema: {
        summary: 'Store a git credential for a host',
        description: 'The token is stored in the database only and never returned.',
        tags: credentialTags,
        body: GitCredentialInput,
        response: { 201: GitCredentialRecord, 400: ErrorBody, 404: ErrorBody },
      },
    },
    async (request, reply) => reply.status(201).send(await addGitCredential(deps.db.pool, request.body)),
  );
  r.post(
    '/api/settings/git-credentials/:id/default',
    {
      schema: {
        summary: 'Make a credential the default (defaultGitCredentialId)',
        tags: credentialTags,
        params: z.object({ id: z.string().max(100) }),
        response: { 200: GitCredentialRecord, 404: ErrorBody },
      },
    },
    async (request) => (await setDefaultGitCredential(deps.db.pool, request.params.id))!,
  );
  r.delete(
    '/api/settings/git-credentials/:id',
    {
      schema: {
        summary: 'Remove a git credential',
        tags: credentialTags,
        params: z.object({ id: z.string().max(100) }),
        response: { 200: z.object({ deleted: z.literal(true), credential: GitCredentialRecord }), 404: ErrorBody },
      },
    },
    async (request) => ({ deleted: true as const, credential: await removeGitCredential(deps.db.pool, request.params.id) }),
  );
}

export const registerAgentServerRoutes: RouteModule = async (app: FastifyInstance, deps: DaemonDeps) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const report = async () => ({
    ...(await readAgentServerState(deps.db.pool)),
    endpoint: agentServerUrl(deps.config),
    logFile: agentServerLayout(workspaceLayout(deps.config)).logFile,
  });
  registerCliEnvRoute(r, deps);
  registerAgentServerStateRoutes(r, deps, report);
  registerAgentServerReadRoutes(r, deps);
  // Under /api/settings with the other agent settings: bad input is 400 there (spec: Errors).
  await app.register(async (scope) => {
    answerBadInputWith400(scope);
    registerGitCredentialRoutes(scope.withTypeProvider<ZodTypeProvider>(), deps);
  });
};

export const agentServerRoutes: RouteModule[] = [registerAgentServerRoutes];
