// @ts-check
/**
 * The manager's internal API address and token, shared by every docdex plugin in the agent server.
 *
 * Installed by docdex into `<plugin dir>/docdex/` (a subfolder, so opencode does not load it as a plugin) and
 * imported by each plugin. The first import moves MGR_INTERNAL_TOKEN from process.env into a process-global
 * slot, because agent commands inherit the agent server's environment and must not find the token there.
 */

/** @typedef {{ readonly token: string, readonly url: string }} MgrInternal */

const key = Symbol.for('docdex.mgr.internal');
const slots = /** @type {Record<symbol, MgrInternal | undefined>} */ (/** @type {unknown} */ (globalThis));
if (!slots[key]) {
  slots[key] = Object.freeze({
    token: process.env.MGR_INTERNAL_TOKEN ?? '',
    url: (process.env.MGR_INTERNAL_API_URL ?? '').replace(/\/+$/, ''),
  });
}
// Agent commands inherit this process's environment: the token leaves it as soon as a docdex plugin loads.
delete process.env.MGR_INTERNAL_TOKEN;

/** @type {MgrInternal} */
export const MGR_INTERNAL = slots[key];
