import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ensureManagerToken } from '../../core/agent/token.js';
import { sandboxSettings } from '../../core/sandbox/settings.js';
import type { SandboxSettings } from '../../core/sandbox/settings.js';
import { planSessionShell } from '../../core/sandbox/shell-plan.js';
import type { ShellPlannerDeps } from '../../core/sandbox/shell-plan.js';
import type { DaemonDeps, RouteModule } from '../deps.js';
import { bearerToken, createTokenChecker, rejectUnauthorized } from '../auth.js';
import { ErrorBody } from '../errors.js';
import { answerBadInputWith400 } from './agent-errors.js';

/**
 * POST /api/internal/sandbox/shell: the sandbox planner, asked by the generated `mgr-sandbox.js` plugin
 * before each session shell spawn of an enforced agent server. Manager token only (constant-time check,
 * whatever API_AUTH says), and deliberately absent from the mgr tool's allow-list: an agent must not be
 * able to ask for plans, or learn forwarded credentials, through the tool.
 *
 * The answer is always 200 with a plan; a refusal is a plan too (`action: "refuse"`), carrying the message
 * the shim prints. 400 is a malformed body, 401 a missing or wrong token.
 */

export const SANDBOX_PLANNER_ROUTE = '/api/internal/sandbox/shell';

const PlanBody = z
  .object({
    cwd: z
      .string()
      .min(1)
      .max(4096)
      .refine((v) => v.startsWith('/') && !v.includes('\0'), 'cwd must be an absolute path')
      .describe("The spawn's working directory on the host"),
    callID: z.string().max(256).optional().describe('Present for session shells (bash tool, !command); absent for pseudo-terminals'),
    sessionID: z.string().max(256).optional(),
  })
  .strict()
  .meta({ id: 'SandboxShellPlanRequest' });

const PlanReply = z
  .object({
    action: z.enum(['host', 'sandbox', 'refuse']),
    env: z.record(z.string(), z.string()).describe('`MGR_SANDBOX_WORKDIR` (+ `MGR_SANDBOX_ENV_<name>`) or `MGR_SANDBOX_REFUSE`, for the shell shim'),
    workdir: z.string().optional(),
    message: z.string().optional(),
    forwardedHosts: z.array(z.string()).optional(),
  })
  .meta({ id: 'SandboxShellPlan' });

export interface SandboxPlannerOptions {
  settings?: (deps: DaemonDeps) => SandboxSettings;
  ensureVm?: ShellPlannerDeps['ensureVm'];
}

export function createSandboxPlannerRoutes(options: SandboxPlannerOptions = {}): RouteModule {
  return async function registerSandboxPlannerRoutes(app: FastifyInstance, deps: DaemonDeps): Promise<void> {
    const settings = options.settings?.(deps) ?? sandboxSettings(deps.config);
    await app.register(
      async (scope) => {
        scope.addHook('onRequest', async (request, reply) => {
          // Read per request: a rotated token stops working at once.
          const { token } = await ensureManagerToken(deps.db.pool);
          if (!createTokenChecker([token])(bearerToken(request))) return rejectUnauthorized(reply, 'docdex-internal');
        });
        // An agent route: every refused body (schema, lone surrogate, unknown field from the body scanner) is 400.
        answerBadInputWith400(scope);
        scope.withTypeProvider<ZodTypeProvider>().post(
          '/shell',
          {
            schema: {
              summary: 'Plan one agent shell spawn under sandbox enforcement (generated plugin only; not in the mgr allow-list)',
              tags: ['agent-internal'],
              security: [{ bearer: [] }],
              body: PlanBody,
              response: { 200: PlanReply, 400: ErrorBody, 401: ErrorBody, 500: ErrorBody },
            },
          },
          async (request) =>
            planSessionShell(
              {
                pool: deps.db.pool,
                settings,
                ...(options.ensureVm ? { ensureVm: options.ensureVm } : {}),
                warn: (message) => request.log.warn({ route: SANDBOX_PLANNER_ROUTE }, message),
              },
              { cwd: request.body.cwd, callId: request.body.callID, sessionId: request.body.sessionID },
            ),
        );
      },
      { prefix: '/api/internal/sandbox' },
    );
  };
}

export const registerSandboxPlannerRoutes: RouteModule = createSandboxPlannerRoutes();
