// @ts-check
/**
 * The `mgr` tool's path guard: one module for the core (`src/core/agent/mgr-allowlist.ts` imports it and
 * holds the lists) and for the installed mgr-manager.js plugin (which gets the lists from its generated
 * configuration), so the plugin runs exactly the code the core's tests cover.
 */

/** @typedef {'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'} MgrMethod */
/** @typedef {{ method: MgrMethod, path: string }} MgrRoute `*` in path stands for exactly one non-empty segment. */
/**
 * `path` is the path and query relative to the base, normalised; `url` is the path and query from the server root.
 * @typedef {{ ok: true, method: MgrMethod, path: string, url: string } | { ok: false, reason: string }} MgrCheck
 */

/**
 * Whether a path's segments match a pattern: `*` is one segment, `**` the rest of the path (at least one).
 * @param {string} pattern
 * @param {string[]} segments
 * @returns {boolean}
 */
function matchesPattern(pattern, segments) {
  const want = pattern.split('/').slice(1);
  for (let i = 0; i < want.length; i++) {
    if (want[i] === '**') return segments.length > i;
    if (i >= segments.length) return false;
    if (want[i] !== '*' && want[i] !== segments[i]) return false;
  }
  return want.length === segments.length;
}

/**
 * The reason a raw path (before its query) is refused on sight, or undefined.
 * @param {string} rawPath
 * @returns {string | undefined}
 */
function rawPathProblem(rawPath) {
  // No route of the internal API needs an encoded path character, and an encoding is the classic way to
  // disguise `..`, a separator or a route name from a matcher that compares the raw text.
  if (rawPath.includes('%')) return 'path must not contain percent-encoded characters (encoded dots, slashes or names)';
  for (const segment of rawPath.split('/').slice(1)) {
    if (segment === '') return 'path must not contain empty segments';
    if (segment === '.' || segment === '..') return 'path must not contain "." or ".." segments';
    // Route names and ids never need more; anything else (";", quotes, non-ASCII) only helps to disguise.
    if (!/^[A-Za-z0-9._~-]+$/.test(segment)) return 'path segments may only contain letters, digits, ".", "_", "~" and "-"';
  }
  return undefined;
}

/**
 * The reason a path is refused before it is split, or undefined.
 * @param {unknown} path
 * @returns {string | undefined}
 */
function pathShapeProblem(path) {
  if (typeof path !== 'string' || path.length === 0) return 'path must be a non-empty string';
  if (path.length > 2048) return 'path is too long';
  if (!path.startsWith('/')) return 'path must start with "/" and be relative to the internal API base (e.g. /settings)';
  if (path.startsWith('//')) return 'path must not start with "//" (that names another host)';
  // eslint-disable-next-line no-control-regex
  if (/[\\\u0000-\u0020\u007f]/.test(path)) return 'path must not contain backslashes, spaces or control characters';
  if (path.includes('#')) return 'path must not contain a fragment';
  return undefined;
}

/**
 * Decides whether the mgr tool may make this request. Rejects: a non-string or empty path, anything not
 * starting with a single `/`, absolute and protocol-relative URLs, backslashes, control characters and
 * spaces, a fragment, any percent-encoding in the path (`%2e%2e`, `%2f`, ...), `.` and `..` segments, empty
 * segments, any path the WHATWG URL parser would rewrite, the excluded routes, and every method and path
 * pair that is not on the allow-list.
 * @param {unknown} method
 * @param {unknown} path
 * @param {readonly MgrRoute[]} allowlist
 * @param {readonly string[]} excluded
 * @param {string} base
 * @returns {MgrCheck}
 */
export function checkMgrRequest(method, path, allowlist, excluded, base) {
  /** @type {(reason: string) => MgrCheck} */
  const fail = (reason) => ({ ok: false, reason });
  if (typeof method !== 'string') return fail('method must be a string');
  const verb = method.toUpperCase();
  if (!['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(verb)) return fail(`method ${method} is not allowed`);
  const shape = pathShapeProblem(path);
  if (shape !== undefined || typeof path !== 'string') return fail(shape ?? 'path must be a non-empty string');
  const queryAt = path.indexOf('?');
  const rawPath = queryAt === -1 ? path : path.slice(0, queryAt);
  const rawQuery = queryAt === -1 ? '' : path.slice(queryAt);
  const raw = rawPathProblem(rawPath);
  if (raw !== undefined) return fail(raw);
  const segments = rawPath.split('/').slice(1);
  let parsed;
  try {
    parsed = new URL(`${base}${path}`, 'http://mgr.invalid');
  } catch {
    return fail('path is not a valid URL path');
  }
  if (parsed.origin !== 'http://mgr.invalid' || parsed.pathname !== `${base}${rawPath}` || !parsed.pathname.startsWith(`${base}/`)) {
    return fail('path resolves outside the internal API base');
  }
  for (const pattern of excluded) if (matchesPattern(pattern, segments)) return fail(`${rawPath} is not available through the mgr tool`);
  if (!allowlist.some((route) => route.method === verb && matchesPattern(route.path, segments))) {
    const other = allowlist.filter((route) => matchesPattern(route.path, segments)).map((route) => route.method);
    return fail(other.length > 0 ? `${verb} is not allowed on ${rawPath} (allowed: ${other.join(', ')})` : `${rawPath} is not on the mgr allow-list`);
  }
  const normalised = `${rawPath}${parsed.search === '' && rawQuery === '?' ? '' : parsed.search}`;
  return { ok: true, method: /** @type {MgrMethod} */ (verb), path: normalised, url: `${base}${normalised}` };
}
