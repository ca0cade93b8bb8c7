import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AgentConfigRecord, readAgentConfig, writeAgentConfig } from '../../core/agent/agent-config.js';
import { approveAgentConfigFile } from '../../core/agent/agent-config-guard.js';
import { defaultAgentServerClient } from '../../core/agent/agent-server-client.js';
import type { AgentServerClient } from '../../core/agent/agent-server-client.js';
import { workspaceLayout } from '../../core/agent/workspace.js';
import type { DaemonDeps, RouteModule } from '../deps.js';
import { ErrorBody } from '../errors.js';
import type { ZodApp } from '../zod-app.js';
import { answerBadInputWith400 } from './agent-errors.js';

/**
 * The user's own route to the agent configuration, under /api/settings and so behind the daemon's REST auth
 * (never the manager token the mgr tool holds). Unlike PUT /api/internal/agent-config it may change every key,
 * with sandbox enforcement on too, and it records the written file as approved, so a later reload through mgr
 * may load it.
 */

const tags = ['agent-settings'];

export function createUserAgentConfigRoutes(options: { agentServer?: (deps: DaemonDeps) => AgentServerClient } = {}): RouteModule {
  return async function registerUserAgentConfigRoutes(app: FastifyInstance, deps: DaemonDeps): Promise<void> {
    const workspace = workspaceLayout(deps.config);
    await app.register(async (scope) => {
      answerBadInputWith400(scope);
      registerRoutes(scope.withTypeProvider<ZodTypeProvider>(), workspace, deps);
    });
  };

  function registerRoutes(r: ZodApp, workspace: ReturnType<typeof workspaceLayout>, deps: DaemonDeps): void {
    r.get('/api/settings/agent-config', { schema: { summary: 'The agent configuration file (JSON with comments)', tags, response: { 200: AgentConfigRecord, 404: ErrorBody } } }, async () =>
      readAgentConfig(workspace),
    );

    r.put(
      '/api/settings/agent-config',
      {
        schema: {
          summary: 'Replace the agent configuration as the user (send the complete object)',
          description:
            'Every key may change here, including those that start host processes or loosen permissions (mcp, plugin, formatter, lsp, provider, permission, ...), ' +
            'which the mgr tool cannot change while sandbox enforcement is on. The written file counts as approved for POST /api/internal/assistant/reload.',
          tags,
          body: z.object({ content: z.record(z.string(), z.unknown()) }).strict(),
          response: { 200: AgentConfigRecord, 400: ErrorBody },
        },
      },
      async (request) => {
        const record = await writeAgentConfig(workspace, request.body.content, options.agentServer?.(deps) ?? defaultAgentServerClient(deps.config));
        await approveAgentConfigFile(deps.db.pool, record.path);
        return record;
      },
    );
  }
}
