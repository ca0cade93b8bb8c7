// @ts-check
import { readFileSync, rmSync } from 'node:fs';

/**
 * The manager's internal API address and token, shared by every docdex plugin in the agent server.
 *
 * Installed by docdex into `<plugin dir>/docdex/` (a subfolder, so opencode does not load it as a plugin) and
 * imported by each plugin. The first import takes the token into a process-global slot:
 * - docdex names a file (MGR_INTERNAL_TOKEN_FILE, mode 0600, outside the sandbox roots), which is read and
 *   deleted here, so the token is in neither the process's initial environment (`/proc/<pid>/environ`, which
 *   a later `delete process.env.X` does not change) nor on disk once the plugins have loaded;
 * - MGR_INTERNAL_TOKEN, the specification's hand-over, is still read when no file is named.
 * Both variables leave process.env, since agent commands inherit the agent server's environment.
 */

/** @typedef {{ readonly token: string, readonly url: string }} MgrInternal */

/** @returns {string} */
function takeToken() {
  const file = process.env.MGR_INTERNAL_TOKEN_FILE;
  if (!file) return process.env.MGR_INTERNAL_TOKEN ?? '';
  let token = '';
  try {
    token = readFileSync(file, 'utf8').trim();
  } catch {
    // No token: every mgr call and planner request then says the server was not started by docdex.
  }
  rmSync(file, { force: true });
  return token;
}

const key = Symbol.for('docdex.mgr.internal');
const slots = /** @type {Record<symbol, MgrInternal | undefined>} */ (/** @type {unknown} */ (globalThis));
if (!slots[key]) {
  slots[key] = Object.freeze({
    token: takeToken(),
    url: (process.env.MGR_INTERNAL_API_URL ?? '').replace(/\/+$/, ''),
  });
}
// Agent commands inherit this process's environment: the token leaves it as soon as a docdex plugin loads.
delete process.env.MGR_INTERNAL_TOKEN;
delete process.env.MGR_INTERNAL_TOKEN_FILE;

/** @type {MgrInternal} */
export const MGR_INTERNAL = slots[key];
