import type { RouteModule } from '../deps.js';
import { createUserAgentConfigRoutes } from './agent-config.js';
import { createAgentInternalRoutes } from './agent-internal.js';
import type { AgentInternalOptions } from './agent-internal.js';
import { registerAgentSettingsRoutes } from './agent-settings.js';
import { registerSandboxPlannerRoutes } from './sandbox-planner.js';
import { registerManagerSettingsRoutes } from './manager-settings.js';

/**
 * The agent manager's route modules: /api/settings (skills, sandbox switches, git identity and speech services, agent configuration, manager token, push subscriptions; behind the
 * daemon's REST auth) and /api/internal (always behind the manager token). Pair with
 * `startAgentServices` from src/core/agent/services.ts in `docdex serve`.
 */
export function createAgentRoutes(options: AgentInternalOptions = {}): RouteModule[] {
  return [registerAgentSettingsRoutes, registerManagerSettingsRoutes, createUserAgentConfigRoutes(options), createAgentInternalRoutes(options), registerSandboxPlannerRoutes];
}

export const agentRoutes: RouteModule[] = createAgentRoutes();
