import { checkMgrRequest, type MgrCheck, type MgrMethod, type MgrRoute } from '../../agent-plugins/docdex/mgr-guard.js';

/**
 * The `mgr` tool's allow-list. An agent passes a method and a path relative to the internal API base; only
 * the spec's allow-listed routes may be reached, and nothing outside the base.
 *
 * The guard, `checkMgrRequest`, is a module of the installed plugin (`agent-plugins/docdex/mgr-guard.js`)
 * that this module imports, so the plugin and the core run the same code; the lists go to the plugin as data
 * (`mgrManagerConfig()` in agent-server/plugins.ts).
 */

export const MGR_INTERNAL_BASE = '/api/internal';

export type { MgrCheck, MgrRoute };

function routes(methods: MgrMethod[], path: string): MgrRoute[] {
  return methods.map((method) => ({ method, path }));
}

/** The spec's allow-list, one entry per method. */
export const MGR_ALLOWLIST: readonly MgrRoute[] = Object.freeze([
  ...routes(['GET', 'PATCH'], '/settings'),
  ...routes(['GET', 'PUT'], '/agent-config'),
  ...routes(['POST'], '/assistant/reload'),
  ...routes(['GET'], '/repos'),
  ...routes(['GET'], '/repos/*/git-info'),
  ...routes(['GET'], '/agent-workspaces'),
  ...routes(['GET'], '/schedules/all'),
  ...routes(['GET'], '/schedules/all/runs'),
  ...routes(['GET', 'POST'], '/repos/*/schedules'),
  ...routes(['GET', 'PATCH', 'DELETE'], '/repos/*/schedules/*'),
  ...routes(['POST'], '/repos/*/schedules/*/run'),
  ...routes(['GET', 'DELETE'], '/repos/*/schedules/*/runs'),
  ...routes(['GET', 'DELETE'], '/repos/*/schedules/*/runs/*'),
  ...routes(['POST'], '/repos/*/schedules/*/runs/*/cancel'),
]);

/**
 * Deliberately unreachable, whatever the allow-list says: checked first, for every method. `**` matches
 * the rest of the path.
 */
export const MGR_EXCLUDED: readonly string[] = Object.freeze(['/notifications/send', '/git-credentials/cli-env', '/sandbox/shell', '/repos/*/mirror/**']);

/** The guard with the spec's lists. */
export function resolveMgrRequest(method: unknown, path: unknown): MgrCheck {
  return checkMgrRequest(method, path, MGR_ALLOWLIST, MGR_EXCLUDED, MGR_INTERNAL_BASE);
}

/** The allow-list as JSON, as the plugin's configuration carries it. */
export function mgrAllowlistJson(): string {
  return JSON.stringify({ base: MGR_INTERNAL_BASE, allowlist: MGR_ALLOWLIST, excluded: MGR_EXCLUDED });
}
