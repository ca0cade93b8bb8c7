import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { PgBoss } from 'pg-boss';
import { z } from 'zod';
import type { Database } from '../../core/db/connect.js';
import { AgentConfigRecord, AgentConfigRejectedError, readAgentConfig, writeAgentConfig } from '../../core/agent/agent-config.js';
import { agentConfigGuarded, assertAgentMayWrite, assertReloadApproved } from '../../core/agent/agent-config-guard.js';
import { AgentServerError, defaultAgentServerClient } from '../../core/agent/agent-server-client.js';
import type { AgentServerClient } from '../../core/agent/agent-server-client.js';
import { NotificationInput, NotificationResult, sendNotification } from '../../core/agent/notifications.js';
import { ensureAgentQueues } from '../../core/agent/queue.js';
import { takeRateLimitSlot, rateLimitBucket } from '../../core/agent/rate-limit.js';
import type { RateLimit } from '../../core/agent/rate-limit.js';
import { GitInfo, RepoRecord, gitInfo, listReposOrdered, toRepoRecord } from '../../core/agent/repos.js';
import {
  RUN_LIST_DEFAULT,
  RUN_LIST_MAX,
  RunList,
  RunRecord,
  RunStatus,
  ScheduleCreate,
  SchedulePatch,
  ScheduleRecord,
  cancelRun,
  createSchedule,
  deleteRun,
  deleteRuns,
  deleteSchedule,
  getRun,
  getSchedule,
  listAllSchedules,
  listRuns,
  listSchedules,
  startRun,
  updateSchedule,
} from '../../core/agent/schedules.js';
import type { ScheduleContext } from '../../core/agent/schedules.js';
import { DEFAULT_USER_ID, PreferencesPatch, SettingsEnvelope, UserId, assertPatchKeys, parsePreferencesPatch, patchSettings, readSettings } from '../../core/agent/settings.js';
import { ensureManagerToken } from '../../core/agent/token.js';
import { OPEN_SHAPE } from '../body-shape.js';
import { AgentWorkspaces, listAgentWorkspaces } from '../../core/agent/workspaces.js';
import { workspaceLayout } from '../../core/agent/workspace.js';
import { createBoss } from '../../core/queue/boss.js';
import type { DaemonDeps, RouteModule } from '../deps.js';
import type { ZodApp } from '../zod-app.js';
import { bearerToken, createTokenChecker, rejectUnauthorized } from '../auth.js';
import { ErrorBody, sendError } from '../errors.js';
import { answerBadInputWith400 } from './agent-errors.js';

/**
 * The internal API under /api/internal, for the generated plugins and other manager-side clients.
 *
 * - Every route requires `Authorization: Bearer <manager token>` (the token in the database, see
 *   `docdex manager token`), checked in constant time by this module's own hook, whatever the
 *   daemon's REST auth setting is. A missing or wrong token is 401, also for unknown paths here.
 * - Invalid bodies, queries and parameters are 400 (not the daemon's usual 422), as the spec wants.
 * - POST /notifications/send (10/min) and POST /assistant/reload (5/min) are rate limited per token in
 *   PostgreSQL, so the count holds across daemon restarts; over the limit is 429 with Retry-After. A
 *   notification counts once its body and query passed validation: a malformed one (400) does not.
 */

export const INTERNAL_PREFIX = '/api/internal';
export const NOTIFY_LIMIT: RateLimit = { max: 10, windowSeconds: 60 };
export const RELOAD_LIMIT: RateLimit = { max: 5, windowSeconds: 60 };

export interface AgentInternalOptions {
  /** The running agent server; default: opencode's HTTP API at AGENT_HOST:AGENT_PORT. */
  agentServer?: (deps: DaemonDeps) => AgentServerClient;
}

/** A PgBoss for enqueueing from request handlers, started on first use and stopped with the app. */
function lazyBoss(db: Database): { get(): Promise<PgBoss>; stop(): Promise<void> } {
  let starting: Promise<PgBoss> | undefined;
  return {
    get() {
      starting ??= (async () => {
        const boss = createBoss(db.info, { max: 2, instanceName: 'docdex-agent-api' });
        boss.on('error', () => undefined);
        await boss.start();
        await ensureAgentQueues(boss);
        return boss;
      })();
      starting.catch(() => {
        starting = undefined;
      });
      return starting;
    },
    async stop() {
      const boss = await starting?.catch(() => undefined);
      await boss?.stop({ graceful: false, close: true }).catch(() => undefined);
    },
  };
}

const bearer = [{ bearer: [] }];
const tags = ['agent-internal'];
const errors = { 400: ErrorBody, 401: ErrorBody, 500: ErrorBody };

const UserQuery = z.object({ userId: UserId.optional() });
const RepoParams = z.object({ repoId: z.coerce.number().int().positive() });
const ScheduleParams = RepoParams.extend({ scheduleId: z.coerce.number().int().positive() });
const RunParams = ScheduleParams.extend({ runId: z.coerce.number().int().positive() });
const RunQuery = z.object({
  limit: z.coerce.number().int().min(1).max(RUN_LIST_MAX).optional().describe(`Default ${RUN_LIST_DEFAULT}, at most ${RUN_LIST_MAX}`),
  offset: z.coerce.number().int().min(0).optional(),
  status: RunStatus.optional(),
});

function rateLimited(route: string, limit: RateLimit, db: Database) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const decision = await takeRateLimitSlot(db.pool, rateLimitBucket(bearerToken(request) ?? '', route), limit);
    if (!decision.allowed) {
      void reply.header('Retry-After', String(decision.retryAfterSeconds));
      return sendError(reply, 'rate_limited', `Rate limit exceeded: at most ${limit.max} requests per ${limit.windowSeconds} s. Retry after ${decision.retryAfterSeconds} s.`);
    }
    void reply.header('X-RateLimit-Remaining', String(decision.remaining));
  };
}

/** What the internal routes share: the daemon's dependencies, the workspace and the agent server client. */
interface InternalContext {
  deps: DaemonDeps;
  workspace: ReturnType<typeof workspaceLayout>;
  agentServer: () => AgentServerClient;
  scheduleCtx: () => Promise<ScheduleContext>;
}

/** The manager token on every request (also for unknown paths), and the internal API's own error statuses. */
function guardInternalScope(app: FastifyInstance, authorised: (request: FastifyRequest) => Promise<boolean>): void {
  app.addHook('onRequest', async (request, reply) => {
    if (!(await authorised(request))) return rejectUnauthorized(reply, 'docdex-internal');
  });
  app.setNotFoundHandler(async (request, reply) => {
    if (!(await authorised(request))) return rejectUnauthorized(reply, 'docdex-internal');
    return sendError(reply, 'not_found', `No route ${request.method} ${request.url.split('?')[0]}`);
  });
  answerBadInputWith400(app, (error, reply) => {
    if (error instanceof AgentConfigRejectedError) {
      return reply.status(400).send({ error: error.message, code: error.code, details: error.validationIssues, validationIssues: error.validationIssues });
    }
    if (error instanceof AgentServerError) return sendError(reply, 'bad_gateway', error.message);
    return undefined;
  });
}

/** POST /notifications/send and GET, PATCH /settings. */
function registerNotificationAndSettingsRoutes(r: ZodApp, { deps }: InternalContext): void {
  r.post(
    '/notifications/send',
    {
      // After validation: a request refused as invalid (400) or unauthorised (401) uses none of the quota,
      // which budgets the notifications a user's devices receive, not the agent's mistakes.
      preHandler: rateLimited('notifications/send', NOTIFY_LIMIT, deps.db),
      schema: {
        summary: 'Send a push notification to every registered device of the user (10 per minute per token)',
        description:
          'Only requests that pass validation count toward the quota of 10 per minute per token; one refused with 400 or 401 does not. ' +
          'A valid request counts whatever happens next (503 without VAPID keys, delivery failures).',
        tags,
        security: bearer,
        querystring: UserQuery,
        body: NotificationInput,
        response: { 200: NotificationResult, ...errors, 429: ErrorBody, 503: ErrorBody },
      },
    },
    async (request) => sendNotification(deps.db.pool, deps.config, request.query.userId ?? DEFAULT_USER_ID, request.body),
  );

  r.get(
    '/settings',
    { schema: { summary: "The user's preferences (secrets removed)", tags, security: bearer, querystring: UserQuery, response: { 200: SettingsEnvelope, ...errors } } },
    async (request) => readSettings(deps.db.pool, request.query.userId ?? DEFAULT_USER_ID),
  );

  r.patch(
    '/settings',
    {
      // Keys first, so a rejected or unknown key is reported by name before any value is looked at. The parser
      // leaves the keys to that check (an open body shape: only nesting and the key count are checked first),
      // which tells a restricted key from an unknown one, as an agent needs to hear.
      config: { bodyShape: OPEN_SHAPE },
      preValidation: async (request) => assertPatchKeys(request.body),
      schema: {
        summary: 'Change preferences: allowed keys only',
        description:
          'Allowed keys: theme, mode, defaultModel, defaultAgent, autoScroll, expandDiffs, expandToolCalls, showReasoning, simpleChatMode, leaderKey, directShortcuts, keyboardShortcuts, customCommands, notifications, repoOrder, repoSortMode, tts, stt. ' +
          'Rejected (400): gitCredentials, gitIdentity, tts.apiKey, tts.endpoint, stt.apiKey, stt.endpoint, lastKnownGoodConfig, and any unknown key. ' +
          'tts and stt can be written only once configured in the manager (400 otherwise). `null` clears an optional key.',
        tags,
        security: bearer,
        querystring: UserQuery,
        body: PreferencesPatch,
        response: { 200: SettingsEnvelope, ...errors },
      },
    },
    async (request) => patchSettings(deps.db.pool, request.query.userId ?? DEFAULT_USER_ID, parsePreferencesPatch(request.body)),
  );
}

/** GET, PUT /agent-config and POST /assistant/reload. */
function registerAgentConfigRoutes(r: ZodApp, { deps, workspace, agentServer }: InternalContext): void {
  r.get(
    '/agent-config',
    { schema: { summary: 'The agent configuration file (JSON with comments)', tags, security: bearer, response: { 200: AgentConfigRecord, ...errors, 404: ErrorBody } } },
    async () => readAgentConfig(workspace),
  );

  r.put(
    '/agent-config',
    {
      schema: {
        summary: 'Replace the agent configuration (send the complete object)',
        description:
          'Read the file first, change only the keys you mean to, and send the complete object. A change to agent, plugin, skills or provider answers restartRequired: true; ' +
          'any other change is applied live to the running agent server (removedFields lists fields it dropped). A rejected configuration is 400 with validationIssues. ' +
          'This route is what the mgr tool reaches: with sandbox enforcement on, a change to any key that is not a model or look key ' +
          '(mcp, formatter, lsp, plugin, provider, permission, tools, command, shell, instructions, experimental, agent permission/tools/options, ...), or any {env:}/{file:} substitution, is 403; the user changes those through PUT /api/settings/agent-config or the CLI.',
        tags,
        security: bearer,
        body: z.object({ content: z.record(z.string(), z.unknown()) }).strict(),
        response: { 200: AgentConfigRecord, ...errors, 403: ErrorBody },
      },
    },
    async (request) => {
      const guarded = await agentConfigGuarded(deps.db.pool);
      return writeAgentConfig(workspace, request.body.content, agentServer(), guarded ? { check: assertAgentMayWrite } : {});
    },
  );

  r.post(
    '/assistant/reload',
    {
      onRequest: rateLimited('assistant/reload', RELOAD_LIMIT, deps.db),
      schema: {
        summary: "Dispose the agent server's current instance; edits take effect on the next message (5 per minute per token)",
        tags,
        security: bearer,
        description:
          'With sandbox enforcement on, 403 when a configuration file, plugin, tool, command, agent or mode file changed since the user approved it ' +
          '(the last agent server start or user write): a reload must not load host code or permissions the user never saw.',
        response: { 200: z.object({ success: z.literal(true) }), ...errors, 403: ErrorBody, 429: ErrorBody, 502: ErrorBody },
      },
    },
    async () => {
      if (await agentConfigGuarded(deps.db.pool)) await assertReloadApproved(deps.db.pool, workspace);
      await agentServer().disposeInstance();
      return { success: true as const };
    },
  );
}

/** GET /repos, /repos/:repoId/git-info and /agent-workspaces. */
function registerRepoRoutes(r: ZodApp, { deps, workspace }: InternalContext): void {
  r.get(
    '/repos',
    {
      schema: {
        summary: "Repositories in the user's order (repoOrder first, then repoSortMode)",
        tags,
        security: bearer,
        querystring: UserQuery,
        response: { 200: z.object({ repos: z.array(RepoRecord) }), ...errors },
      },
    },
    async (request) => ({
      repos: (await listReposOrdered({ pool: deps.db.pool, workspace }, request.query.userId ?? DEFAULT_USER_ID)).map(toRepoRecord),
    }),
  );

  r.get(
    '/repos/:repoId/git-info',
    {
      schema: { summary: 'Branch, upstream, working-tree state, remotes and last commit of a repo', tags, security: bearer, params: RepoParams, response: { 200: GitInfo, ...errors, 404: ErrorBody } },
    },
    async (request) => gitInfo({ pool: deps.db.pool, workspace }, request.params.repoId),
  );

  r.get(
    '/agent-workspaces',
    { schema: { summary: 'Folders agents work in, and the roots sandboxed commands can reach', tags, security: bearer, response: { 200: AgentWorkspaces, ...errors } } },
    async () => listAgentWorkspaces({ pool: deps.db.pool, workspace }),
  );
}

/** Scheduled jobs: every repo's, and one repo's (list, create, read, change, delete). */
function registerScheduleRoutes(r: ZodApp, { scheduleCtx }: InternalContext): void {
  r.get(
    '/schedules/all',
    { schema: { summary: 'Every scheduled job of every repo', tags, security: bearer, response: { 200: z.object({ schedules: z.array(ScheduleRecord) }), ...errors } } },
    async () => ({ schedules: await listAllSchedules(await scheduleCtx()) }),
  );

  r.get(
    '/schedules/all/runs',
    { schema: { summary: 'Recent runs of every job, newest first', tags, security: bearer, querystring: RunQuery, response: { 200: RunList, ...errors } } },
    async (request) => listRuns(await scheduleCtx(), request.query),
  );

  r.get(
    '/repos/:repoId/schedules',
    { schema: { summary: "A repo's scheduled jobs", tags, security: bearer, params: RepoParams, response: { 200: z.object({ schedules: z.array(ScheduleRecord) }), ...errors, 404: ErrorBody } } },
    async (request) => ({ schedules: await listSchedules(await scheduleCtx(), request.params.repoId) }),
  );

  r.post(
    '/repos/:repoId/schedules',
    {
      schema: {
        summary: 'Create a scheduled job (exactly one of intervalMinutes or cron)',
        tags,
        security: bearer,
        params: RepoParams,
        body: ScheduleCreate,
        response: { 201: ScheduleRecord, ...errors, 404: ErrorBody },
      },
    },
    async (request, reply) => reply.status(201).send(await createSchedule(await scheduleCtx(), request.params.repoId, request.body)),
  );

  r.get(
    '/repos/:repoId/schedules/:scheduleId',
    { schema: { summary: 'One scheduled job', tags, security: bearer, params: ScheduleParams, response: { 200: ScheduleRecord, ...errors, 404: ErrorBody } } },
    async (request) => getSchedule(await scheduleCtx(), request.params.repoId, request.params.scheduleId),
  );

  r.patch(
    '/repos/:repoId/schedules/:scheduleId',
    {
      schema: {
        summary: 'Change a scheduled job; omitted fields are unchanged',
        tags,
        security: bearer,
        params: ScheduleParams,
        body: SchedulePatch,
        response: { 200: ScheduleRecord, ...errors, 404: ErrorBody },
      },
    },
    async (request) => updateSchedule(await scheduleCtx(), request.params.repoId, request.params.scheduleId, request.body),
  );

  r.delete(
    '/repos/:repoId/schedules/:scheduleId',
    { schema: { summary: 'Delete a scheduled job and its runs', tags, security: bearer, params: ScheduleParams, response: { 200: ScheduleRecord, ...errors, 404: ErrorBody, 409: ErrorBody } } },
    async (request) => deleteSchedule(await scheduleCtx(), request.params.repoId, request.params.scheduleId),
  );
}

/** Runs of a scheduled job: start, list, delete, read, cancel. */
function registerRunRoutes(r: ZodApp, { scheduleCtx }: InternalContext): void {
  r.post(
    '/repos/:repoId/schedules/:scheduleId/run',
    { schema: { summary: 'Queue a run now', tags, security: bearer, params: ScheduleParams, response: { 202: RunRecord, ...errors, 404: ErrorBody } } },
    async (request, reply) => reply.status(202).send(await startRun(await scheduleCtx(), request.params.repoId, request.params.scheduleId, 'manual')),
  );

  r.get(
    '/repos/:repoId/schedules/:scheduleId/runs',
    { schema: { summary: "A job's runs, newest first", tags, security: bearer, params: ScheduleParams, querystring: RunQuery, response: { 200: RunList, ...errors, 404: ErrorBody } } },
    async (request) => listRuns(await scheduleCtx(), { ...request.query, repoId: request.params.repoId, scheduleId: request.params.scheduleId }),
  );

  r.delete(
    '/repos/:repoId/schedules/:scheduleId/runs',
    { schema: { summary: "Delete a job's finished runs", tags, security: bearer, params: ScheduleParams, response: { 200: z.object({ deleted: z.number() }), ...errors, 404: ErrorBody } } },
    async (request) => deleteRuns(await scheduleCtx(), request.params.repoId, request.params.scheduleId),
  );

  r.get(
    '/repos/:repoId/schedules/:scheduleId/runs/:runId',
    { schema: { summary: 'One run with its full log, response and error', tags, security: bearer, params: RunParams, response: { 200: RunRecord, ...errors, 404: ErrorBody } } },
    async (request) => getRun(await scheduleCtx(), request.params.repoId, request.params.scheduleId, request.params.runId),
  );

  r.delete(
    '/repos/:repoId/schedules/:scheduleId/runs/:runId',
    { schema: { summary: 'Delete a finished run', tags, security: bearer, params: RunParams, response: { 200: RunRecord, ...errors, 404: ErrorBody, 409: ErrorBody } } },
    async (request) => deleteRun(await scheduleCtx(), request.params.repoId, request.params.scheduleId, request.params.runId),
  );

  r.post(
    '/repos/:repoId/schedules/:scheduleId/runs/:runId/cancel',
    { schema: { summary: 'Cancel a queued or running run', tags, security: bearer, params: RunParams, response: { 200: RunRecord, ...errors, 404: ErrorBody, 409: ErrorBody } } },
    async (request) => cancelRun(await scheduleCtx(), request.params.repoId, request.params.scheduleId, request.params.runId),
  );
}

export function createAgentInternalRoutes(options: AgentInternalOptions = {}): RouteModule {
  return async function registerAgentInternalRoutes(app: FastifyInstance, deps: DaemonDeps): Promise<void> {
    const workspace = workspaceLayout(deps.config);
    const queue = lazyBoss(deps.db);
    app.addHook('onClose', async () => queue.stop());
    const ctx: InternalContext = {
      deps,
      workspace,
      agentServer: () => options.agentServer?.(deps) ?? defaultAgentServerClient(deps.config),
      scheduleCtx: async () => ({ pool: deps.db.pool, workspace, boss: await queue.get() }),
    };

    async function authorised(request: FastifyRequest): Promise<boolean> {
      const { token } = await ensureManagerToken(deps.db.pool);
      return createTokenChecker([token])(bearerToken(request));
    }

    await app.register(
      async (scope) => {
        guardInternalScope(scope, authorised);
        const r = scope.withTypeProvider<ZodTypeProvider>();
        registerNotificationAndSettingsRoutes(r, ctx);
        registerAgentConfigRoutes(r, ctx);
        registerRepoRoutes(r, ctx);
        registerScheduleRoutes(r, ctx);
        registerRunRoutes(r, ctx);
      },
      { prefix: INTERNAL_PREFIX },
    );
  };
}
