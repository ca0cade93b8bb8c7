// @ts-check
/* global fetch */
/**
 * The `mgr` tool (installed by docdex as `<plugin dir>/mgr-manager.js`). It runs inside the agent-server
 * process and holds the manager token there, so agents reach the allow-listed part of /api/internal without
 * ever seeing a token. The allow-list, exclusions, base and notification limits come from the generated
 * `docdex/mgr-manager.json`; the guard is the core's own module (`docdex/mgr-guard.js`).
 */
import { tool } from '@opencode-ai/plugin';
import { readPluginConfig } from './docdex/config.js';
import { checkMgrRequest as checkMgrRequestWith } from './docdex/mgr-guard.js';
import { MGR_INTERNAL } from './docdex/mgr-internal.js';

/**
 * @typedef {{
 *   base: string,
 *   allowlist: import('./docdex/mgr-guard.js').MgrRoute[],
 *   excluded: string[],
 *   limits: { title: [number, number], body: [number, number], url: [number, number], tag: number },
 * }} MgrManagerConfig
 */

const CONFIG = /** @type {MgrManagerConfig} */ (readPluginConfig('mgr-manager'));
const MGR_ALLOWLIST = Object.freeze(CONFIG.allowlist);
const MGR_EXCLUDED = Object.freeze(CONFIG.excluded);
const LIMITS = CONFIG.limits;
const BODY_METHODS = ['POST', 'PUT', 'PATCH'];

/**
 * @param {unknown} method
 * @param {unknown} path
 */
function checkMgrRequest(method, path) {
  return checkMgrRequestWith(method, path, MGR_ALLOWLIST, MGR_EXCLUDED, CONFIG.base);
}

/**
 * @param {string} method
 * @param {string} relative
 * @param {unknown} body
 * @param {AbortSignal | undefined} signal
 * @returns {Promise<string>}
 */
async function callInternal(method, relative, body, signal) {
  if (!MGR_INTERNAL.token || !MGR_INTERNAL.url) {
    throw new Error('mgr is not configured: the agent server was not started by docdex (no manager token from MGR_INTERNAL_TOKEN_FILE, or no MGR_INTERNAL_API_URL).');
  }
  let response;
  try {
    response = await fetch(MGR_INTERNAL.url + relative, {
      method,
      headers: { authorization: 'Bearer ' + MGR_INTERNAL.token, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      // The base is docdex's own API: a redirect would lead somewhere the allow-list never checked.
      redirect: 'manual',
      signal: signal ?? null,
    });
  } catch (error) {
    const e = /** @type {{ message?: string, cause?: { code?: string } } | undefined} */ (error);
    throw new Error('mgr could not reach the docdex manager at ' + MGR_INTERNAL.url + ': ' + (e?.cause?.code ?? e?.message ?? String(error)), { cause: error });
  }
  const text = await response.text();
  if (response.status < 200 || response.status > 299) throw new Error('mgr ' + method + ' ' + relative + ' failed with HTTP ' + response.status + ': ' + text);
  return text;
}

/**
 * @param {string} message
 * @returns {never}
 */
function fail(message) {
  throw new Error('mgr rejected the call: ' + message);
}

/**
 * @param {unknown} value
 * @param {[number, number]} range
 * @returns {boolean}
 */
function withinLength(value, range) {
  return typeof value === 'string' && value.length >= range[0] && value.length <= range[1];
}

/**
 * @param {Record<string, unknown>} args
 * @param {AbortSignal | undefined} signal
 */
function sendNotification(args, signal) {
  /** @type {Record<string, unknown>} */
  const payload = {};
  for (const key of ['title', 'body', 'url', 'tag', 'priority']) if (args[key] !== undefined && args[key] !== null) payload[key] = args[key];
  if (!withinLength(payload.title, LIMITS.title)) fail('send_notification needs a title of ' + LIMITS.title[0] + ' to ' + LIMITS.title[1] + ' characters');
  if (!withinLength(payload.body, LIMITS.body)) fail('send_notification needs a body of ' + LIMITS.body[0] + ' to ' + LIMITS.body[1] + ' characters');
  const url = /** @type {string | undefined} */ (payload.url);
  const tag = /** @type {string | undefined} */ (payload.tag);
  if (url !== undefined && (url.length < LIMITS.url[0] || url.length > LIMITS.url[1])) fail('url must be ' + LIMITS.url[0] + ' to ' + LIMITS.url[1] + ' characters');
  if (tag !== undefined && tag.length > LIMITS.tag) fail('tag must be at most ' + LIMITS.tag + ' characters');
  if (payload.priority !== undefined && payload.priority !== 'normal' && payload.priority !== 'high') fail('priority must be normal or high');
  return callInternal('POST', '/notifications/send', payload, signal);
}

/**
 * @param {Record<string, unknown>} args
 * @param {AbortSignal | undefined} signal
 */
function request(args, signal) {
  const check = checkMgrRequest(args.method, args.path);
  if (!check.ok) return fail(check.reason);
  let body = args.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      fail('body must be a JSON object');
    }
  }
  if (body !== undefined && body !== null && !BODY_METHODS.includes(check.method)) fail('a body is only sent with POST, PUT or PATCH');
  if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body))) fail('body must be a JSON object');
  return callInternal(check.method, check.path, body ?? undefined, signal);
}

const z = tool.schema;

const DESCRIPTION = [
  "Talk to the docdex manager: send a push notification to the user's devices, or call an allow-listed route of the manager's internal API (settings, agent configuration, repos, schedules and their runs).",
  'action=send_notification: give title (' +
    LIMITS.title[0] +
    '-' +
    LIMITS.title[1] +
    ' chars) and body (' +
    LIMITS.body[0] +
    '-' +
    LIMITS.body[1] +
    ' chars), optionally url, tag and priority (normal or high).',
  'action=request: give method and path relative to the internal API, e.g. GET /settings, PATCH /settings with a body, GET /repos, GET /repos/3/schedules, POST /repos/3/schedules/7/run. Query strings are allowed. The raw response body is returned.',
  'Allowed routes: ' + MGR_ALLOWLIST.map((r) => r.method + ' ' + r.path).join(', ') + ' (* is one path segment, such as an id).',
].join('\n');

const ARGS = {
  action: z.enum(['send_notification', 'request']).describe('What to do'),
  title: z.string().max(LIMITS.title[1]).optional().describe('send_notification: the notification title'),
  body: z
    .union([z.string(), z.record(z.string(), z.any())])
    .optional()
    .describe('send_notification: the message text. request: the JSON object to send with POST, PUT or PATCH'),
  url: z.string().max(LIMITS.url[1]).optional().describe('send_notification: a link to open'),
  tag: z.string().max(LIMITS.tag).optional().describe('send_notification: replaces an earlier notification with the same tag'),
  priority: z.enum(['normal', 'high']).optional().describe('send_notification: delivery urgency'),
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).optional().describe('request: the HTTP method'),
  path: z.string().optional().describe('request: the route under the internal API, starting with /, e.g. /settings or /repos/3/schedules?limit=5'),
};

/** @type {import('@opencode-ai/plugin').Plugin} */
export const MgrManagerPlugin = async () => ({
  tool: {
    mgr: tool({
      description: DESCRIPTION,
      args: ARGS,
      async execute(args, context) {
        const signal = context?.abort;
        if (args.action === 'send_notification') {
          if (typeof args.body !== 'string') fail('send_notification needs body as text');
          return sendNotification(args, signal);
        }
        if (args.action === 'request') return request(args, signal);
        return fail('action must be send_notification or request');
      },
    }),
  },
});
