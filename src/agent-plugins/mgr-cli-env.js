// @ts-check
/* global fetch, AbortSignal, setInterval */
/**
 * Installed by docdex as `<plugin dir>/mgr-cli-env.js`: puts the hosting CLI's token variables (from docdex's
 * git credentials) into the agent-server process for host-side plugins and tools, and blanks them in every
 * agent shell. The always-managed variable names come from the generated `docdex/mgr-cli-env.json`.
 */
import { readPluginConfig } from './docdex/config.js';
import { MGR_INTERNAL } from './docdex/mgr-internal.js';

/** @typedef {{ managed: string[] }} MgrCliEnvConfig */
/** @typedef {{ env: Record<string, string>, variables: string[] }} CliEnv */

const MANAGED = /** @type {MgrCliEnvConfig} */ (readPluginConfig('mgr-cli-env')).managed;
// Credentials edited in docdex reach host-side tools within this interval, without a restart.
const REFRESH_MS = 60_000;
/** @type {CliEnv} */
let current = { env: {}, variables: MANAGED.slice() };

/** @returns {Promise<CliEnv>} */
async function refresh() {
  if (!MGR_INTERNAL.token || !MGR_INTERNAL.url) return current;
  const response = await fetch(MGR_INTERNAL.url + '/git-credentials/cli-env', {
    headers: { authorization: 'Bearer ' + MGR_INTERNAL.token, accept: 'application/json' },
    redirect: 'manual',
    signal: AbortSignal.timeout(10_000),
  });
  if (!response.ok) throw new Error('GET /git-credentials/cli-env answered HTTP ' + response.status);
  const next = /** @type {{ env?: Record<string, unknown>, variables?: string[] }} */ (await response.json());
  const variables = Array.from(new Set([...MANAGED, ...(next.variables ?? [])]));
  // Host-side plugins, custom tools and MCP servers spawned by this process use the hosting CLI through these.
  for (const name of variables) {
    const value = next.env?.[name];
    if (typeof value === 'string') process.env[name] = value;
    else if (current.env[name] !== undefined) delete process.env[name];
  }
  current = { env: /** @type {Record<string, string>} */ ({ ...(next.env ?? {}) }), variables };
  return current;
}

/** @param {unknown} error */
function logError(error) {
  const message = /** @type {{ message?: string } | undefined} */ (error)?.message;
  console.error('[docdex mgr-cli-env] ' + (message ?? String(error)));
}

const ready = refresh().catch((error) => {
  logError(error);
  return current;
});
const timer = setInterval(() => {
  refresh().catch(logError);
}, REFRESH_MS);
timer.unref?.();

// For host-side code: await globalThis[Symbol.for("docdex.mgr.cliEnv")].env() gives the variables.
/** @type {Record<symbol, unknown>} */ (/** @type {unknown} */ (globalThis))[Symbol.for('docdex.mgr.cliEnv')] = Object.freeze({
  env: async () => {
    await ready;
    return { ...current.env };
  },
  refresh: async () => ({ ...(await refresh()).env }),
});

/** @type {import('@opencode-ai/plugin').Plugin} */
export const MgrCliEnvPlugin = async () => {
  await ready;
  return {
    // Agent commands (bash tool, !command mode, PTYs) must not see the tokens: an empty value hides the
    // inherited one, and the hosting CLI treats an empty token as no token.
    'shell.env': async (_input, output) => {
      for (const name of current.variables) output.env[name] = '';
    },
  };
};
