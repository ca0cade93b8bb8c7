import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { checkMgrRequest } from '../../src/agent-plugins/docdex/mgr-guard.js';
import { MGR_ALLOWLIST, MGR_EXCLUDED, mgrAllowlistJson, resolveMgrRequest } from '../../src/core/agent/mgr-allowlist.js';
import type { MgrCheck, MgrRoute } from '../../src/core/agent/mgr-allowlist.js';
import { writeGeneratedPlugins } from '../../src/core/agent-server/plugins.js';

const ok = (method: string, path: string) => resolveMgrRequest(method, path);
const expectAllowed = (method: string, path: string, normalised = path) => {
  const result = ok(method, path);
  expect(result, `${method} ${path}`).toMatchObject({ ok: true, path: normalised, url: `/api/internal${normalised}` });
};
const expectRejected = (method: unknown, path: unknown, reason?: RegExp) => {
  const result = resolveMgrRequest(method, path);
  expect(result.ok, `${String(method)} ${String(path)}`).toBe(false);
  if (reason && !result.ok) expect(result.reason).toMatch(reason);
};

/** The spec's table, written out once more by hand: the module must match it exactly. */
const SPEC_TABLE: Array<[string[], string]> = [
  [['GET', 'PATCH'], '/settings'],
  [['GET', 'PUT'], '/agent-config'],
  [['POST'], '/assistant/reload'],
  [['GET'], '/repos'],
  [['GET'], '/repos/*/git-info'],
  [['GET'], '/agent-workspaces'],
  [['GET'], '/schedules/all'],
  [['GET'], '/schedules/all/runs'],
  [['GET', 'POST'], '/repos/*/schedules'],
  [['GET', 'PATCH', 'DELETE'], '/repos/*/schedules/*'],
  [['POST'], '/repos/*/schedules/*/run'],
  [['GET', 'DELETE'], '/repos/*/schedules/*/runs'],
  [['GET', 'DELETE'], '/repos/*/schedules/*/runs/*'],
  [['POST'], '/repos/*/schedules/*/runs/*/cancel'],
];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const concrete = (pattern: string, value = '12') => pattern.replaceAll('*', value);

describe('mgr allow-list', () => {
  it('is exactly the spec table', () => {
    const expected = SPEC_TABLE.flatMap(([methods, path]) => methods.map((method) => ({ method, path })));
    expect([...MGR_ALLOWLIST].sort((a, b) => `${a.path} ${a.method}`.localeCompare(`${b.path} ${b.method}`))).toEqual(
      expected.sort((a, b) => `${a.path} ${a.method}`.localeCompare(`${b.path} ${b.method}`)),
    );
  });

  it('allows every listed method on every listed path, and no other method', () => {
    for (const [methods, pattern] of SPEC_TABLE) {
      for (const method of METHODS) {
        const result = ok(method, concrete(pattern));
        expect(result.ok, `${method} ${pattern}`).toBe(methods.includes(method));
      }
      // Method names are case-insensitive on input and normalised.
      expect(ok(methods[0]!.toLowerCase(), concrete(pattern))).toMatchObject({ ok: true, method: methods[0] });
    }
  });

  it('matches * to exactly one non-empty segment', () => {
    expectAllowed('GET', '/repos/7/git-info');
    expectAllowed('GET', '/repos/my-repo/git-info');
    expectRejected('GET', '/repos/git-info');
    expectRejected('GET', '/repos/1/2/git-info');
    expectRejected('GET', '/repos//git-info', /empty segments/);
    expectAllowed('POST', '/repos/1/schedules/2/runs/3/cancel');
    expectRejected('POST', '/repos/1/schedules/2/runs/cancel');
    expectRejected('POST', '/repos/1/schedules/2/runs/3/4/cancel');
    expectRejected('GET', '/repos/1/schedules/2/runs/3/cancel');
  });

  it('rejects paths that are not exactly on the list', () => {
    expectRejected('GET', '/settings/', /empty segments/);
    expectRejected('GET', '/settingsx');
    expectRejected('GET', '/Settings');
    expectRejected('GET', '/');
    expectRejected('GET', '/repos/1');
    expectRejected('GET', '/schedules');
    expectRejected('GET', '/schedules/other');
    expectRejected('GET', '/schedules/all/runs/1');
    expectRejected('POST', '/settings', /POST is not allowed on \/settings \(allowed: GET, PATCH\)/);
    expectRejected('HEAD', '/settings', /method HEAD/);
    expectRejected('OPTIONS', '/settings');
    expectRejected('TRACE', '/settings');
    expectRejected(undefined, '/settings');
    expectRejected('GET', undefined);
    expectRejected('GET', '');
    expectRejected('GET', 42);
  });

  it('keeps the excluded routes unreachable with every method and shape', () => {
    for (const method of METHODS) {
      expectRejected(method, '/notifications/send', /not available through the mgr tool/);
      expectRejected(method, '/notifications/send?userId=x');
      expectRejected(method, '/git-credentials/cli-env');
      expectRejected(method, '/sandbox/shell');
      expectRejected(method, '/repos/1/mirror/pull');
      expectRejected(method, '/repos/1/mirror/a/b/c');
      expectRejected(method, '/repos/any/mirror/x');
      expectRejected(method, '/NOTIFICATIONS/send');
      expectRejected(method, '/notifications/%73end');
      expectRejected(method, '/repos/1/%6Dirror/x');
    }
    expect(MGR_EXCLUDED).toEqual(['/notifications/send', '/git-credentials/cli-env', '/sandbox/shell', '/repos/*/mirror/**']);
  });

  it('allows query strings and normalises them like the URL parser', () => {
    expectAllowed('GET', '/settings?userId=default');
    expectAllowed('GET', '/schedules/all/runs?limit=10&status=failed');
    expectAllowed('GET', '/repos/1/schedules/2/runs?limit=100&offset=20');
    expectAllowed('GET', '/settings?', '/settings');
    expectAllowed('GET', '/settings?q=a%2Fb', '/settings?q=a%2Fb');
    expectAllowed('GET', '/settings?next=/../../x', '/settings?next=/../../x');
    // The query cannot smuggle a path: it stays a query.
    const r = ok('GET', '/settings?/../../notifications/send') as Extract<MgrCheck, { ok: true }>;
    expect(r.url.startsWith('/api/internal/settings?')).toBe(true);
  });

  it('rejects absolute URLs and other hosts', () => {
    expectRejected('GET', 'http://127.0.0.1:7654/api/internal/settings', /must start with/);
    expectRejected('GET', 'https://evil.example/settings');
    expectRejected('GET', 'file:///etc/passwd');
    expectRejected('GET', 'javascript:alert(1)');
    expectRejected('GET', '//evil.example/settings', /another host/);
    expectRejected('GET', '///settings');
    expectRejected('GET', 'settings');
    expectRejected('GET', './settings');
    expectRejected('GET', '/\\evil.example/settings', /backslashes/);
    expectRejected('GET', '\\\\evil.example\\settings');
  });

  it('rejects traversal in every spelling', () => {
    const attempts = [
      '/../settings',
      '/settings/..',
      '/repos/../notifications/send',
      '/repos/1/../../notifications/send',
      '/./settings',
      '/settings/.',
      '/%2e%2e/settings',
      '/%2E%2E/api/internal/settings',
      '/.%2e/settings',
      '/%2e./settings',
      '/repos/%2e%2e/git-info',
      '/repos/1%2f..%2f..%2fnotifications/send',
      '/repos/1%2Fgit-info',
      '/repos/1%5c..%5cgit-info',
      '/repos/%252e%252e/git-info',
      '/repos/1\\..\\git-info',
      '/repos/..;/git-info',
      '/repos/ ../git-info',
      '/repos/\t/git-info',
      '/repos/\n/git-info',
      '/settings#frag',
      '/settings%00',
      '/settings%23',
      '/..%00/settings',
    ];
    for (const path of attempts) expectRejected('GET', path);
  });

  it('rejects paths the WHATWG URL parser would rewrite', () => {
    // Each of these is changed by `new URL()`: the guard insists the parsed path equals the text given.
    for (const path of [
      '/repos/1/git-info/../../../settings',
      '/repos/\u00e9/git-info',
      '/repos/a b/git-info',
      '/repos/"x"/git-info',
      '/repos/<x>/git-info',
      '/repos/`x`/git-info',
      '/repos/{x}/git-info',
    ]) {
      expectRejected('GET', path);
    }
    expectRejected('GET', `/${'a'.repeat(3000)}`, /too long/);
  });

  it('emits the list as JSON for the plugin', () => {
    const data = JSON.parse(mgrAllowlistJson()) as { base: string; allowlist: unknown[]; excluded: string[] };
    expect(data.base).toBe('/api/internal');
    expect(data.allowlist).toEqual(JSON.parse(JSON.stringify(MGR_ALLOWLIST)));
    expect(data.excluded).toEqual(MGR_EXCLUDED);
  });

  it('installs a guard into the plugin folder that decides exactly like the module', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'docdex-guard-'));
    await writeGeneratedPlugins(path.join(dir, 'plugin'));
    const installed = (await import(pathToFileURL(path.join(dir, 'plugin', 'docdex', 'mgr-guard.js')).href)) as { checkMgrRequest: typeof checkMgrRequest };
    const config = JSON.parse(await readFile(path.join(dir, 'plugin', 'docdex', 'mgr-manager.json'), 'utf8')) as { base: string; allowlist: MgrRoute[]; excluded: string[] };
    await rm(dir, { recursive: true, force: true });
    const guard = (m: unknown, p: unknown): MgrCheck => installed.checkMgrRequest(m, p, config.allowlist, config.excluded, config.base);
    const cases: Array<[unknown, unknown]> = [
      ['GET', '/settings'],
      ['PATCH', '/settings?userId=a'],
      ['PUT', '/agent-config'],
      ['POST', '/notifications/send'],
      ['GET', '/repos/1/mirror/x'],
      ['GET', '/../settings'],
      ['GET', '/%2e%2e/settings'],
      ['GET', '//host/settings'],
      ['DELETE', '/repos/1/schedules/2/runs/3'],
      ['POST', '/repos/1/schedules/2/runs/3/cancel'],
      ['GET', 'https://x/settings'],
      [null, '/settings'],
    ];
    for (const [method, path] of cases) expect(JSON.parse(JSON.stringify(guard(method, path)))).toEqual(resolveMgrRequest(method, path));
  });
});
