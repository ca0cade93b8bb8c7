import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MGR_ALLOWLIST, MGR_EXCLUDED, resolveMgrRequest } from '../../src/core/agent/mgr-allowlist.js';
import { NotificationInput } from '../../src/core/agent/notifications.js';
import { PLUGIN_SOURCE_DIR, pluginConfigPath } from '../../src/core/agent-server/plugin-files.js';
import { CLI_TOKEN_VARIABLES, notificationLimits, pluginPackageSources, seedPluginDependencies, writeGeneratedPlugins } from '../../src/core/agent-server/plugins.js';
import { removeDir, tempDir } from './helpers.js';

describe('installed mgr-manager.js', () => {
  it('is copied unchanged, and its configuration holds exactly the core allow-list, exclusions, base and limits', async () => {
    const dir = tempDir('docdex-plugin-config-');
    try {
      const [manager, cliEnv] = await writeGeneratedPlugins(path.join(dir, 'plugin'));
      expect(readFileSync(manager!, 'utf8')).toBe(readFileSync(path.join(PLUGIN_SOURCE_DIR, 'mgr-manager.js'), 'utf8'));
      const config = JSON.parse(readFileSync(pluginConfigPath(path.join(dir, 'plugin'), 'mgr-manager.js'), 'utf8'));
      expect(config).toEqual({ base: '/api/internal', allowlist: JSON.parse(JSON.stringify(MGR_ALLOWLIST)), excluded: MGR_EXCLUDED, limits: notificationLimits() });
      expect(JSON.parse(readFileSync(pluginConfigPath(path.join(dir, 'plugin'), cliEnv!), 'utf8'))).toEqual({ managed: [...CLI_TOKEN_VARIABLES] });
      // The guard the plugin imports is the very module the core imports.
      expect(readFileSync(path.join(dir, 'plugin', 'docdex', 'mgr-guard.js'), 'utf8')).toBe(readFileSync(path.join(PLUGIN_SOURCE_DIR, 'docdex', 'mgr-guard.js'), 'utf8'));
    } finally {
      removeDir(dir);
    }
  });

  it('takes the notification limits from the internal route schema', () => {
    expect(notificationLimits()).toEqual({ title: [1, 120], body: [1, 500], url: [1, 500], tag: 80 });
    expect(NotificationInput.safeParse({ title: 'x'.repeat(121), body: 'b' }).success).toBe(false);
  });

  it('holds no token: the plugins read it from the file or environment docdex gives their process', () => {
    const source = readFileSync(path.join(PLUGIN_SOURCE_DIR, 'docdex', 'mgr-internal.js'), 'utf8');
    expect(source).toContain('process.env.MGR_INTERNAL_TOKEN_FILE');
    expect(source).toContain('process.env.MGR_INTERNAL_TOKEN');
    expect(source).toContain('delete process.env.MGR_INTERNAL_TOKEN');
    for (const name of ['mgr-manager.js', 'mgr-cli-env.js', 'mgr-sandbox.js']) {
      expect(readFileSync(path.join(PLUGIN_SOURCE_DIR, name), 'utf8')).toContain("from './docdex/mgr-internal.js'");
    }
  });
});

describe('the mgr tool, loaded as opencode loads it', () => {
  let dir: string;
  let server: http.Server;
  const seen: Array<{ method: string; url: string; auth: string | undefined; body: string }> = [];
  let tool: { execute(args: Record<string, unknown>, ctx: { abort: AbortSignal }): Promise<string>; args: Record<string, unknown> };
  const run = (args: Record<string, unknown>) => tool.execute(args, { abort: new AbortController().signal });

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', auth: req.headers.authorization, body });
        if (req.url?.startsWith('/api/internal/repos/999')) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"No repo with id 999."}');
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ echo: req.url }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    dir = tempDir('docdex-plugin-');
    await seedPluginDependencies(dir);
    const [file] = await writeGeneratedPlugins(path.join(dir, 'plugin'));
    process.env.MGR_INTERNAL_TOKEN = 'test-token-123';
    process.env.MGR_INTERNAL_API_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/internal/`;
    const mod = (await import(pathToFileURL(file!).href)) as { MgrManagerPlugin: () => Promise<{ tool: { mgr: typeof tool } }> };
    tool = (await mod.MgrManagerPlugin()).tool.mgr;
  });

  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    removeDir(dir);
  });

  it('removes the token from the process environment once loaded', () => {
    expect(process.env.MGR_INTERNAL_TOKEN).toBeUndefined();
  });

  it('calls allow-listed routes with the token and returns the raw body', async () => {
    expect(await run({ action: 'request', method: 'GET', path: '/settings?userId=default' })).toBe(JSON.stringify({ echo: '/api/internal/settings?userId=default' }));
    expect(seen.at(-1)).toMatchObject({ method: 'GET', auth: 'Bearer test-token-123', body: '' });
    await run({ action: 'request', method: 'PATCH', path: '/settings', body: { theme: 'dark' } });
    expect(seen.at(-1)).toMatchObject({ method: 'PATCH', url: '/api/internal/settings', body: '{"theme":"dark"}' });
    await run({ action: 'request', method: 'PUT', path: '/agent-config', body: '{"content":{}}' });
    expect(seen.at(-1)).toMatchObject({ method: 'PUT', url: '/api/internal/agent-config', body: '{"content":{}}' });
    await run({ action: 'request', method: 'post', path: '/repos/3/schedules/7/runs/12/cancel' });
    expect(seen.at(-1)).toMatchObject({ method: 'POST', url: '/api/internal/repos/3/schedules/7/runs/12/cancel' });
  });

  it('reports an HTTP error with its status and body', async () => {
    await expect(run({ action: 'request', method: 'GET', path: '/repos/999/git-info' })).rejects.toThrow('mgr GET /repos/999/git-info failed with HTTP 404: {"error":"No repo with id 999."}');
  });

  it('rejects a route off the allow-list without calling it', async () => {
    const before = seen.length;
    await expect(run({ action: 'request', method: 'GET', path: '/missing' })).rejects.toThrow(/not on the mgr allow-list/);
    expect(seen.length).toBe(before);
  });

  const rejected: Array<[string, string]> = [
    ['GET', 'http://evil.example/settings'],
    ['GET', '//evil.example/settings'],
    ['GET', 'settings'],
    ['GET', '/../settings'],
    ['GET', '/repos/../settings'],
    ['GET', '/repos/%2e%2e/settings'],
    ['GET', '/repos/%2E%2E/notifications/send'],
    ['GET', '/repos\\..\\settings'],
    ['GET', '/repos/1/git-info/..'],
    ['GET', '/./settings'],
    ['GET', '/settings#frag'],
    ['POST', '/notifications/send'],
    ['GET', '/git-credentials/cli-env'],
    ['POST', '/sandbox/shell'],
    ['GET', '/repos/1/mirror/pack'],
    ['DELETE', '/settings'],
    ['GET', '/repos/1/schedules/2/runs/3/cancel'],
    ['TRACE', '/settings'],
  ];

  it.each(rejected)('rejects %s %s before any request, like the core guard', async (method, route) => {
    expect(resolveMgrRequest(method, route).ok).toBe(false);
    const before = seen.length;
    await expect(run({ action: 'request', method, path: route })).rejects.toThrow(/^mgr rejected the call: /);
    expect(seen.length).toBe(before);
  });

  it('refuses a body on GET and DELETE', async () => {
    await expect(run({ action: 'request', method: 'GET', path: '/settings', body: { a: 1 } })).rejects.toThrow(/only sent with POST, PUT or PATCH/);
  });

  it('sends notifications through the fixed route with the spec limits', async () => {
    await run({ action: 'send_notification', title: 'Build done', body: 'All green', priority: 'high', tag: 't1' });
    expect(seen.at(-1)).toMatchObject({ method: 'POST', url: '/api/internal/notifications/send' });
    expect(JSON.parse(seen.at(-1)!.body)).toEqual({ title: 'Build done', body: 'All green', priority: 'high', tag: 't1' });
    const before = seen.length;
    await expect(run({ action: 'send_notification', title: '', body: 'x' })).rejects.toThrow(/title of 1 to 120/);
    await expect(run({ action: 'send_notification', title: 't'.repeat(121), body: 'x' })).rejects.toThrow(/title of 1 to 120/);
    await expect(run({ action: 'send_notification', title: 't', body: 'b'.repeat(501) })).rejects.toThrow(/body of 1 to 500/);
    await expect(run({ action: 'send_notification', title: 't', body: 'b', tag: 'x'.repeat(81) })).rejects.toThrow(/tag/);
    await expect(run({ action: 'send_notification', title: 't', body: 'b', url: 'u'.repeat(501) })).rejects.toThrow(/url/);
    await expect(run({ action: 'send_notification', title: 't', body: 'b', priority: 'urgent' })).rejects.toThrow(/priority/);
    expect(seen.length).toBe(before);
  });
});

describe('the manager token handed over in a file (issue #51)', () => {
  it('is read once and deleted by the first docdex plugin to load, and both variables leave the environment', async () => {
    const dir = tempDir('docdex-token-file-');
    const slot = Symbol.for('docdex.mgr.internal');
    const saved = (globalThis as Record<symbol, unknown>)[slot];
    try {
      // A fresh "process": no slot yet, and a plugin folder of its own so the helper module loads afresh.
      delete (globalThis as Record<symbol, unknown>)[slot];
      await writeGeneratedPlugins(path.join(dir, 'plugin'));
      const tokenFile = path.join(dir, 'internal-token');
      writeFileSync(tokenFile, 'file-token-456\n', { mode: 0o600 });
      process.env.MGR_INTERNAL_TOKEN_FILE = tokenFile;
      process.env.MGR_INTERNAL_API_URL = 'http://127.0.0.1:1/api/internal';
      const mod = (await import(pathToFileURL(path.join(dir, 'plugin', 'docdex', 'mgr-internal.js')).href)) as { MGR_INTERNAL: { token: string; url: string } };
      expect(mod.MGR_INTERNAL).toEqual({ token: 'file-token-456', url: 'http://127.0.0.1:1/api/internal' });
      expect(existsSync(tokenFile)).toBe(false);
      expect(process.env.MGR_INTERNAL_TOKEN_FILE).toBeUndefined();
      expect(process.env.MGR_INTERNAL_TOKEN).toBeUndefined();
    } finally {
      (globalThis as Record<symbol, unknown>)[slot] = saved;
      removeDir(dir);
    }
  });
});

describe('plugin dependency seeding', () => {
  it('creates the state in which opencode skips its npm install, and keeps user entries', async () => {
    const dir = tempDir('docdex-seed-');
    try {
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ dependencies: { 'left-pad': '1.3.0' } }));
      const first = await seedPluginDependencies(dir);
      expect(first.copied.sort()).toEqual(['@opencode-ai/plugin', 'zod']);
      const [plugin] = pluginPackageSources();
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
      expect(pkg.dependencies).toEqual({ 'left-pad': '1.3.0', '@opencode-ai/plugin': plugin!.version });
      const lock = JSON.parse(readFileSync(path.join(dir, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dependencies: Record<string, string> }> };
      expect(lock.packages['']!.dependencies['@opencode-ai/plugin']).toBe(plugin!.version);
      expect(existsSync(path.join(dir, 'node_modules', '@opencode-ai', 'plugin', 'dist', 'index.js'))).toBe(true);
      expect(existsSync(path.join(dir, '.gitignore'))).toBe(true);
      expect((await seedPluginDependencies(dir)).copied).toEqual([]);
    } finally {
      removeDir(dir);
    }
  });
});
