/**
 * The `mgr` tool's allow-list and path guard. An agent passes a method and a path relative to the
 * internal API base; only the spec's allow-listed routes may be reached, and nothing outside the base.
 *
 * `checkMgrRequest` is deliberately self-contained (no imports, no closure over module state, plain
 * JavaScript once types are stripped): `renderMgrGuardSource()` embeds its source text, with the list as
 * data, into the generated plugin, so the plugin and this module cannot drift apart.
 */

export const MGR_INTERNAL_BASE = '/api/internal';

export type MgrMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface MgrRoute {
  method: MgrMethod;
  /** `*` stands for exactly one non-empty path segment. */
  path: string;
}

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

export type MgrCheck =
  | { ok: true; method: MgrMethod; /** Path and query relative to the base, normalised. */ path: string; /** Path and query from the server root. */ url: string }
  | { ok: false; reason: string };

/**
 * Decides whether the mgr tool may make this request. Rejects: a non-string or empty path, anything not
 * starting with a single `/`, absolute and protocol-relative URLs, backslashes, control characters and
 * spaces, a fragment, any percent-encoding in the path (`%2e%2e`, `%2f`, ...), `.` and `..` segments, empty
 * segments, any path the WHATWG URL parser would rewrite, the excluded routes, and every method and path
 * pair that is not on the allow-list.
 */
export function checkMgrRequest(method: unknown, path: unknown, allowlist: readonly MgrRoute[], excluded: readonly string[], base: string): MgrCheck {
  const fail = (reason: string): MgrCheck => ({ ok: false, reason });
  if (typeof method !== 'string') return fail('method must be a string');
  const verb = method.toUpperCase();
  if (!['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(verb)) return fail(`method ${method} is not allowed`);
  if (typeof path !== 'string' || path.length === 0) return fail('path must be a non-empty string');
  if (path.length > 2048) return fail('path is too long');
  if (!path.startsWith('/')) return fail('path must start with "/" and be relative to the internal API base (e.g. /settings)');
  if (path.startsWith('//')) return fail('path must not start with "//" (that names another host)');
  // eslint-disable-next-line no-control-regex
  if (/[\\\u0000-\u0020\u007f]/.test(path)) return fail('path must not contain backslashes, spaces or control characters');
  if (path.includes('#')) return fail('path must not contain a fragment');
  const queryAt = path.indexOf('?');
  const rawPath = queryAt === -1 ? path : path.slice(0, queryAt);
  const rawQuery = queryAt === -1 ? '' : path.slice(queryAt);
  // No route of the internal API needs an encoded path character, and an encoding is the classic way to
  // disguise `..`, a separator or a route name from a matcher that compares the raw text.
  if (rawPath.includes('%')) return fail('path must not contain percent-encoded characters (encoded dots, slashes or names)');
  const segments = rawPath.split('/').slice(1);
  for (const segment of segments) {
    if (segment === '') return fail('path must not contain empty segments');
    if (segment === '.' || segment === '..') return fail('path must not contain "." or ".." segments');
    // Route names and ids never need more; anything else (";", quotes, non-ASCII) only helps to disguise.
    if (!/^[A-Za-z0-9._~-]+$/.test(segment)) return fail('path segments may only contain letters, digits, ".", "_", "~" and "-"');
  }
  let parsed: URL;
  try {
    parsed = new URL(`${base}${path}`, 'http://mgr.invalid');
  } catch {
    return fail('path is not a valid URL path');
  }
  if (parsed.origin !== 'http://mgr.invalid' || parsed.pathname !== `${base}${rawPath}` || !parsed.pathname.startsWith(`${base}/`)) {
    return fail('path resolves outside the internal API base');
  }
  const matches = (pattern: string): boolean => {
    const want = pattern.split('/').slice(1);
    for (let i = 0; i < want.length; i++) {
      if (want[i] === '**') return segments.length > i;
      if (i >= segments.length) return false;
      if (want[i] !== '*' && want[i] !== segments[i]) return false;
    }
    return want.length === segments.length;
  };
  for (const pattern of excluded) if (matches(pattern)) return fail(`${rawPath} is not available through the mgr tool`);
  if (!allowlist.some((route) => route.method === verb && matches(route.path))) {
    const other = allowlist.filter((route) => matches(route.path)).map((route) => route.method);
    return fail(other.length > 0 ? `${verb} is not allowed on ${rawPath} (allowed: ${other.join(', ')})` : `${rawPath} is not on the mgr allow-list`);
  }
  const normalised = `${rawPath}${parsed.search === '' && rawQuery === '?' ? '' : parsed.search}`;
  return { ok: true, method: verb as MgrMethod, path: normalised, url: `${base}${normalised}` };
}

/** The guard with the spec's lists. */
export function resolveMgrRequest(method: unknown, path: unknown): MgrCheck {
  return checkMgrRequest(method, path, MGR_ALLOWLIST, MGR_EXCLUDED, MGR_INTERNAL_BASE);
}

/** The allow-list as JSON, for embedding in the generated plugin. */
export function mgrAllowlistJson(): string {
  return JSON.stringify({ base: MGR_INTERNAL_BASE, allowlist: MGR_ALLOWLIST, excluded: MGR_EXCLUDED });
}

/**
 * JavaScript source defining `MGR_ALLOWLIST`, `MGR_EXCLUDED`, `MGR_INTERNAL_BASE` and
 * `checkMgrRequest(method, path)` for the generated plugin: the lists as data and the guard's own
 * compiled source, so the plugin runs exactly the code these tests cover.
 */
export function renderMgrGuardSource(): string {
  const data = JSON.parse(mgrAllowlistJson()) as { base: string; allowlist: MgrRoute[]; excluded: string[] };
  return [
    `const MGR_INTERNAL_BASE = ${JSON.stringify(data.base)};`,
    `const MGR_ALLOWLIST = Object.freeze(${JSON.stringify(data.allowlist)});`,
    `const MGR_EXCLUDED = Object.freeze(${JSON.stringify(data.excluded)});`,
    `const checkMgrRequestWith = ${checkMgrRequest.toString()};`,
    'function checkMgrRequest(method, path) { return checkMgrRequestWith(method, path, MGR_ALLOWLIST, MGR_EXCLUDED, MGR_INTERNAL_BASE); }',
    '',
  ].join('\n');
}
