import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { PushSubscriptionInput, PushSubscriptionRecord, listPushSubscriptions, subscribePush, unsubscribePush, vapidPublicKey } from '../../core/agent/notifications.js';
import { Skill, SkillCreate, SkillScope, SkillUpdate, assertSkillName, createSkill, deleteSkill, listSkills, readSkill, skillPlace, updateSkill } from '../../core/agent/skills.js';
import { UserId } from '../../core/agent/settings.js';
import { ensureManagerToken, rotateManagerToken } from '../../core/agent/token.js';
import { workspaceLayout } from '../../core/agent/workspace.js';
import type { DaemonDeps } from '../deps.js';
import type { ZodApp } from '../zod-app.js';
import { ErrorBody } from '../errors.js';
import { answerBadInputWith400 } from './agent-errors.js';

/**
 * Manager settings under /api/settings: skills, the internal API token, and push subscriptions.
 *
 * Authentication follows the daemon's REST setting: with API_AUTH on (or MCP_AUTH_ENABLED on a
 * non-loopback API_HOST) these routes need `Authorization: Bearer <MCP_AUTH_TOKEN(S)>` like every other
 * REST route; the daemon's own hook enforces it. The manager token routes are `secret`: they always need a
 * full REST/MCP token (SECURITY.md, "Who may call what").
 *
 * Errors (spec: Errors): 400 for any invalid input (a skill name, checked before any path is built, a body,
 * query or parameter, a scope/repoId mismatch), 404 unknown skill or repo, 409 skill exists or repo not ready.
 */

const tags = ['agent-settings'];
const Scoped = z.object({
  scope: SkillScope.describe('global or project'),
  repoId: z.coerce.number().int().positive().optional().describe('Required when scope is project'),
});
const NameParams = z.object({ name: z.string().max(1000) });
const ManagerToken = z
  .object({ token: z.string().describe('Send as `Authorization: Bearer <token>` to /api/internal'), createdAt: z.number(), rotatedAt: z.number().nullable() })
  .meta({ id: 'ManagerToken' });

// POST bodies validate the name in the handler, so that a bad name is the same 400 as in a path.
const SkillCreateBody = SkillCreate.extend({ name: z.string().max(1000) });

type SkillContext = { pool: DaemonDeps['db']['pool']; workspace: ReturnType<typeof workspaceLayout> };

/** GET /api/settings/skills, GET /api/settings/skills/:name and POST /api/settings/skills. */
function registerSkillListCreateRoutes(r: ZodApp, ctx: SkillContext): void {
  r.get(
    '/api/settings/skills',
    {
      schema: {
        summary: 'Global skills, plus project skills (of one repo with repoId, else of every ready repo)',
        tags,
        querystring: z.object({ repoId: z.coerce.number().int().positive().optional() }),
        response: { 200: z.object({ skills: z.array(Skill) }), 404: ErrorBody, 400: ErrorBody },
      },
    },
    async (request) => ({ skills: await listSkills(ctx, request.query.repoId === undefined ? {} : { repoId: request.query.repoId }) }),
  );

  r.get(
    '/api/settings/skills/:name',
    { schema: { summary: 'One skill', tags, params: NameParams, querystring: Scoped, response: { 200: Skill, 400: ErrorBody, 404: ErrorBody } } },
    async (request) => {
      assertSkillName(request.params.name);
      return readSkill(await skillPlace(ctx, request.query.scope, request.query.repoId), request.params.name);
    },
  );

  r.post(
    '/api/settings/skills',
    {
      schema: {
        summary: 'Create a skill (409 if it exists)',
        tags,
        body: SkillCreateBody,
        response: { 201: Skill, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody },
      },
    },
    async (request, reply) => {
      const { name, description, body, scope, repoId } = request.body;
      assertSkillName(name);
      const skill = await createSkill(await skillPlace(ctx, scope, repoId), { name, description, body });
      return reply.status(201).send(skill);
    },
  );
}

/** PUT and DELETE /api/settings/skills/:name. */
function registerSkillChangeRoutes(r: ZodApp, ctx: SkillContext): void {
  r.put(
    '/api/settings/skills/:name',
    {
      schema: {
        summary: 'Update a skill; omitted fields are unchanged',
        tags,
        params: NameParams,
        querystring: Scoped,
        body: SkillUpdate,
        response: { 200: Skill, 400: ErrorBody, 404: ErrorBody },
      },
    },
    async (request) => {
      assertSkillName(request.params.name);
      return updateSkill(await skillPlace(ctx, request.query.scope, request.query.repoId), request.params.name, request.body);
    },
  );

  r.delete(
    '/api/settings/skills/:name',
    {
      schema: {
        summary: 'Delete a skill (its whole folder)',
        tags,
        params: NameParams,
        querystring: Scoped,
        response: { 200: z.object({ deleted: z.literal(true), skill: Skill }), 400: ErrorBody, 404: ErrorBody },
      },
    },
    async (request) => {
      assertSkillName(request.params.name);
      const skill = await deleteSkill(await skillPlace(ctx, request.query.scope, request.query.repoId), request.params.name);
      return { deleted: true as const, skill };
    },
  );
}

/** The internal API's token: read and rotate (secret access). */
function registerManagerTokenRoutes(r: ZodApp, deps: DaemonDeps): void {
  r.get(
    '/api/settings/manager-token',
    {
      // A secret: a REST/MCP token is needed even on loopback with API auth off (`docdex manager token` reads the database).
      config: { access: 'secret' },
      schema: {
        summary: 'The bearer token of the internal API (/api/internal)',
        description:
          'For external clients that hold a full REST/MCP token (MCP_AUTH_TOKENS without :read): it is always required, whatever API_AUTH says. ' +
          'The manager token itself is not accepted (401) and a read-only token is refused (403). Without configured tokens nothing reads it over HTTP, ' +
          "because the agent server's own fetch tool runs on this host and can GET loopback URLs; the CLI reads it with `docdex manager token`.",
        tags,
        response: { 200: ManagerToken, 401: ErrorBody, 403: ErrorBody },
      },
    },
    async () => ensureManagerToken(deps.db.pool),
  );

  r.post(
    '/api/settings/manager-token/rotate',
    {
      config: { access: 'secret' },
      schema: {
        summary: 'Replace the internal API token; the old one stops working at once',
        description: 'Restart the agent server afterwards: its plugins hold the token. Needs a full REST/MCP token, as GET does.',
        tags,
        response: { 200: ManagerToken, 401: ErrorBody, 403: ErrorBody },
      },
    },
    async () => rotateManagerToken(deps.db.pool),
  );
}

/** Web push: the VAPID key, subscribe, unsubscribe, list. */
function registerPushRoutes(r: ZodApp, deps: DaemonDeps): void {
  r.get(
    '/api/settings/push/vapid-public-key',
    {
      schema: {
        summary: 'The VAPID public key a device passes to pushManager.subscribe() as applicationServerKey',
        tags,
        response: { 200: z.object({ publicKey: z.string() }), 503: ErrorBody },
      },
    },
    async () => ({ publicKey: vapidPublicKey(deps.config) }),
  );

  r.post(
    '/api/settings/push/subscribe',
    {
      schema: {
        summary: 'Register a device for push notifications',
        description:
          'Send the PushSubscription the browser returned (endpoint and keys.p256dh, keys.auth) and optionally the userId (default "default"). ' +
          'An endpoint registered before is refreshed (200); a new one is created (201). Subscriptions a push service reports as gone (404/410) are removed when a notification is sent.',
        tags,
        body: PushSubscriptionInput,
        response: { 200: PushSubscriptionRecord, 201: PushSubscriptionRecord, 400: ErrorBody, 503: ErrorBody },
      },
    },
    async (request, reply) => {
      vapidPublicKey(deps.config);
      const { subscription, created } = await subscribePush(deps.db.pool, deps.config, request.body);
      return reply.status(created ? 201 : 200).send(subscription);
    },
  );

  r.post(
    '/api/settings/push/unsubscribe',
    {
      schema: {
        summary: 'Remove a device (by its push endpoint)',
        tags,
        body: z.object({ endpoint: z.string().min(1).max(2048) }).strict(),
        response: { 200: z.object({ removed: z.boolean() }), 400: ErrorBody },
      },
    },
    async (request) => ({ removed: await unsubscribePush(deps.db.pool, request.body.endpoint) }),
  );

  r.get(
    '/api/settings/push/subscriptions',
    {
      schema: {
        summary: 'Registered devices (keys are not returned)',
        tags,
        querystring: z.object({ userId: UserId.optional() }),
        response: { 200: z.object({ subscriptions: z.array(PushSubscriptionRecord) }), 400: ErrorBody },
      },
    },
    async (request) => ({ subscriptions: await listPushSubscriptions(deps.db.pool, request.query.userId) }),
  );
}

export async function registerAgentSettingsRoutes(app: FastifyInstance, deps: DaemonDeps): Promise<void> {
  const workspace = workspaceLayout(deps.config);
  const ctx = { pool: deps.db.pool, workspace };
  await app.register(async (scope) => {
    answerBadInputWith400(scope);
    const r = scope.withTypeProvider<ZodTypeProvider>();
    registerSkillListCreateRoutes(r, ctx);
    registerSkillChangeRoutes(r, ctx);
    registerManagerTokenRoutes(r, deps);
    registerPushRoutes(r, deps);
  });
}
