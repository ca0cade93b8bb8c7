// @ts-check
/* global fetch, AbortSignal */
/**
 * Installed by docdex as `<plugin dir>/mgr-sandbox.js` when the agent server starts with sandbox enforcement
 * (spec: Sandboxing, Mechanism 1-7; the core side is src/core/sandbox/plugin.ts). It runs inside the agent
 * server and:
 *
 * - `config`: pins the in-memory shell to the shim.
 * - `shell.env`: marks every spawn it sees with the start's nonce, and the agent server's own environment once;
 *   for a spawn with a call id it asks the manager's planner and injects exactly the variables the shim reads.
 *   Every failure to get a usable plan becomes a refusal, never a missing variable, because a missing variable
 *   means "host".
 * - `tool.execute.after`: marks calls that were planned into the VM with `metadata.sandbox = true`.
 *
 * Everything it needs to know (shim path, nonce, report path, variable names, planner path and timeout) comes
 * from the generated `docdex/mgr-sandbox.json`. The command text is never looked at, let alone rewritten.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { readPluginConfig } from './docdex/config.js';
import { MGR_INTERNAL } from './docdex/mgr-internal.js';

/**
 * @typedef {{
 *   SHIM: string, NONCE: string, REPORT: string, ENFORCED_VAR: string, PLANNED_VAR: string, HOOKED_VAR: string,
 *   PLANNER_PATH: string, PLANNER_TIMEOUT_MS: number, UNAVAILABLE_PREFIX: string, WORKDIR_VAR: string,
 *   REFUSE_VAR: string, ENV_PREFIX: string, MAX_TRACKED_CALLS: number,
 * }} MgrSandboxConfig
 * @typedef {{ action: 'sandbox' | 'refuse', env: Record<string, string> }} Plan
 */

const C = /** @type {MgrSandboxConfig} */ (readPluginConfig('mgr-sandbox'));
// The enforcement stamp of this process: read once, so a settings change cannot turn it off before a restart.
const ENFORCED = process.env[C.ENFORCED_VAR] === 'true';

/** @param {string} name */
const ours = (name) => name === C.WORKDIR_VAR || name === C.REFUSE_VAR || name.startsWith(C.ENV_PREFIX);
/** @param {string} name */
const marker = (name) => name === C.PLANNED_VAR || name === C.HOOKED_VAR;
// Spawns inherit this process's environment: an inherited plan would apply to every shell, an inherited marker
// would vouch for spawns this plugin never saw.
for (const name of Object.keys(process.env)) if (ours(name) || marker(name)) delete process.env[name];

// The manager's start check reads this; a report that cannot be written makes that check fail, which is the
// closed side, so a write error is not an error here.
/** @type {{ nonce: string, pid: number, shell: string | null, shellEnv: boolean, at: number }} */
const state = { nonce: C.NONCE, pid: process.pid, shell: null, shellEnv: false, at: 0 };
/** @param {Partial<typeof state>} patch */
function report(patch) {
  Object.assign(state, patch, { at: Date.now() });
  const tmp = C.REPORT + '.' + process.pid + '.tmp';
  try {
    writeFileSync(tmp, JSON.stringify(state), { mode: 0o600 });
    renameSync(tmp, C.REPORT);
  } catch {
    // See above: the start check notices.
  }
}

/**
 * @param {string} reason
 * @returns {Plan}
 */
function refusal(reason) {
  return { action: 'refuse', env: { [C.REFUSE_VAR]: C.UNAVAILABLE_PREFIX + ': ' + reason } };
}

/**
 * Checks the planner's answer; anything unexpected refuses the call.
 * @param {any} body
 * @returns {Plan}
 */
function checkPlan(body) {
  if (!body || typeof body !== 'object' || !body.env || typeof body.env !== 'object' || Array.isArray(body.env)) return refusal('the sandbox planner gave no plan');
  /** @type {Record<string, string>} */
  const env = {};
  for (const [name, value] of Object.entries(body.env)) {
    if (!ours(name) || typeof value !== 'string' || value.includes('\0')) return refusal('the sandbox planner sent an unexpected variable ' + JSON.stringify(name));
    env[name] = value;
  }
  const workdir = env[C.WORKDIR_VAR];
  const refuse = env[C.REFUSE_VAR];
  if (body.action === 'sandbox' && typeof workdir === 'string' && workdir !== '' && refuse === undefined) return { action: 'sandbox', env };
  if (body.action === 'refuse' && typeof refuse === 'string' && refuse.startsWith(C.UNAVAILABLE_PREFIX)) return { action: 'refuse', env: { [C.REFUSE_VAR]: refuse } };
  // "host" is only right for a spawn without a call id, which is never sent.
  return refusal('the sandbox planner answered ' + JSON.stringify(body.action) + ' for a session shell');
}

/**
 * @param {{ cwd?: string, callID: string, sessionID?: string }} input
 * @returns {Promise<Plan>}
 */
async function plan(input) {
  if (!MGR_INTERNAL.token || !MGR_INTERNAL.url) return refusal('the agent server was started without the manager token or the internal API address');
  let response;
  try {
    response = await fetch(MGR_INTERNAL.url + C.PLANNER_PATH, {
      method: 'POST',
      headers: { authorization: 'Bearer ' + MGR_INTERNAL.token, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ cwd: input.cwd, callID: input.callID, ...(input.sessionID ? { sessionID: input.sessionID } : {}) }),
      // The base is docdex's own API: a redirect would lead somewhere else.
      redirect: 'manual',
      signal: AbortSignal.timeout(C.PLANNER_TIMEOUT_MS),
    });
  } catch (error) {
    const e = /** @type {{ message?: string, cause?: { code?: string, message?: string } } | undefined} */ (error);
    return refusal('the sandbox planner at ' + MGR_INTERNAL.url + ' could not be reached (' + (e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(error)) + ')');
  }
  /** @type {any} */
  let body;
  try {
    body = await response.json();
  } catch {
    body = undefined;
  }
  if (response.status !== 200) {
    const detail = typeof body?.error === 'string' ? ': ' + body.error : '';
    return refusal('the sandbox planner answered HTTP ' + response.status + detail);
  }
  return checkPlan(body);
}

/** @type {Map<string, Plan['action']>} */
const planned = new Map();
/**
 * @param {string} callID
 * @param {Plan['action']} action
 */
function remember(callID, action) {
  planned.delete(callID);
  planned.set(callID, action);
  if (planned.size > C.MAX_TRACKED_CALLS) planned.delete(/** @type {string} */ (planned.keys().next().value));
}

/**
 * The shell.env hook: marks the spawn, and plans it when it belongs to a tool call.
 * @param {any} input
 * @param {{ env: Record<string, string> }} output
 */
async function shellEnv(input, output) {
  for (const name of Object.keys(output.env)) if (ours(name) || marker(name)) delete output.env[name];
  // Seen: the shim may hand this spawn to the host shell if no plan below says otherwise.
  output.env[C.PLANNED_VAR] = C.NONCE;
  if (process.env[C.HOOKED_VAR] !== C.NONCE) {
    // The hook is known to fire in this process from now on, so a spawn opencode never offers to it (a
    // slash-command template, which the spec keeps on the host) may pass too.
    process.env[C.HOOKED_VAR] = C.NONCE;
    report({ shellEnv: true });
  }
  if (typeof input?.callID !== 'string' || input.callID === '') return;
  let result;
  try {
    result = await plan(input);
  } catch (error) {
    const message = /** @type {{ message?: string } | undefined} */ (error)?.message;
    result = refusal('planning failed (' + (message ?? String(error)) + ')');
  }
  Object.assign(output.env, result.env);
  remember(input.callID, result.action);
}

/**
 * @param {any} input
 * @param {any} output
 */
async function toolExecuteAfter(input, output) {
  const action = planned.get(input?.callID);
  if (action === undefined) return;
  planned.delete(input.callID);
  if (action === 'sandbox' && output && typeof output === 'object') output.metadata = { ...(output.metadata ?? {}), sandbox: true };
}

/** @type {import('@opencode-ai/plugin').Plugin} */
export const MgrSandboxPlugin = async () => {
  if (!ENFORCED) return {};
  return {
    config: async (config) => {
      // `shell` is a key of opencode's configuration that the plugin package's Config type does not list.
      const settable = /** @type {{ shell?: string }} */ (config);
      settable.shell = C.SHIM;
      report({ shell: settable.shell });
    },
    'shell.env': shellEnv,
    'tool.execute.after': toolExecuteAfter,
  };
};
