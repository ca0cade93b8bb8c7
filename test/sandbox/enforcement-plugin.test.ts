import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureManagerToken } from '../../src/core/agent/token.js';
import { loadConfig } from '../../src/core/config.js';
import { writeMgrSandboxPlugin } from '../../src/core/sandbox/plugin.js';
import { sandboxRoots } from '../../src/core/sandbox/settings.js';
import { UNAVAILABLE_PREFIX, outsideRootsMessage } from '../../src/core/sandbox/unavailable.js';
import { createSandboxPlannerRoutes } from '../../src/daemon/routes/sandbox-planner.js';
import type { DaemonHandle } from '../../src/daemon/server.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';

/**
 * The installed mgr-sandbox.js, loaded as plain JavaScript in node (as opencode loads it) and its hooks called
 * with the inputs opencode gives them. It talks to the real daemon's planner route through a recording proxy,
 * so the test sees exactly which HTTP calls a hook makes.
 */

type Hooks = {
  config?: (config: Record<string, unknown>) => Promise<void>;
  'shell.env'?: (input: { cwd: string; sessionID?: string; callID?: string }, output: { env: Record<string, string> }) => Promise<void>;
  'tool.execute.after'?: (input: { tool: string; sessionID: string; callID: string; args: unknown }, output: { title: string; output: string; metadata: any }) => Promise<void>;
};

interface Recorded {
  method: string;
  url: string;
  authorization: string | undefined;
  body: any;
}

describe('the generated mgr-sandbox.js plugin', () => {
  let db: TestDatabase;
  let daemon: DaemonHandle & { base: string };
  let proxy: http.Server;
  let proxyUrl: string;
  let ws: string;
  let dir: string;
  let token: string;
  const recorded: Recorded[] = [];
  const shimPath = '/opt/docdex-test/mgr-sandbox-shell';
  const nonce = 'n0nce'.repeat(6);
  const planned = { MGR_SANDBOX_PLANNED: nonce };
  let loads = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    ws = await mkdtemp(path.join(os.tmpdir(), 'docdex-plugin-'));
    dir = await mkdtemp(path.join(os.tmpdir(), 'docdex-plugin-js-'));
    await mkdir(path.join(ws, 'repos', 'app'), { recursive: true });
    await mkdir(path.join(ws, 'schedule-worktrees'), { recursive: true });
    daemon = await startTestDaemon(loadConfig({ ...db.env, WORKSPACE_PATH: ws }), { routes: [createSandboxPlannerRoutes({ ensureVm: async () => undefined })] });
    token = (await ensureManagerToken(db.pool)).token;
    proxy = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        recorded.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization, body: text ? JSON.parse(text) : undefined });
        void fetch(`${daemon.base}/api/internal${req.url}`, { method: req.method!, headers: req.headers as Record<string, string>, body: text || undefined }).then(async (upstream) => {
          res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
          res.end(Buffer.from(await upstream.arrayBuffer()));
        });
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => proxy?.close(resolve));
    await daemon?.close();
    await db?.drop();
    await rm(ws, { recursive: true, force: true });
    await rm(dir, { recursive: true, force: true });
    for (const name of ['MGR_SANDBOX_ENFORCED', 'MGR_INTERNAL_TOKEN', 'MGR_INTERNAL_API_URL', 'MGR_SANDBOX_WORKDIR', 'MGR_SANDBOX_HOOKED', 'MGR_SANDBOX_PLANNED']) delete process.env[name];
  });

  beforeEach(() => {
    recorded.length = 0;
  });

  /** A fresh copy of the plugin module, loaded with the given agent-server environment. */
  async function load(env: Record<string, string | undefined>): Promise<Hooks> {
    // The token slot is per process and set by the first docdex plugin; every load here is a new "process".
    delete (globalThis as Record<symbol, unknown>)[Symbol.for('docdex.mgr.internal')];
    for (const [k, v] of Object.entries(env)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    // A folder per load: its modules (the plugin and the helpers it imports) are loaded afresh.
    const file = await writeMgrSandboxPlugin(path.join(dir, `load-${++loads}`), { shimPath, plannerTimeoutMs: 5000, nonce, reportPath: path.join(dir, 'report.json') });
    const mod = (await import(pathToFileURL(file).href)) as { MgrSandboxPlugin: () => Promise<Hooks> };
    return mod.MgrSandboxPlugin();
  }

  const enforcedEnv = () => ({ MGR_SANDBOX_ENFORCED: 'true', MGR_INTERNAL_TOKEN: token, MGR_INTERNAL_API_URL: proxyUrl });

  it('is inert without the enforcement stamp', async () => {
    expect(await load({ ...enforcedEnv(), MGR_SANDBOX_ENFORCED: undefined })).toEqual({});
    expect(await load({ ...enforcedEnv(), MGR_SANDBOX_ENFORCED: 'false' })).toEqual({});
  });

  it('pins the in-memory shell to the shim and takes the token out of the process environment', async () => {
    process.env.MGR_SANDBOX_WORKDIR = '/inherited';
    const hooks = await load(enforcedEnv());
    expect(process.env.MGR_INTERNAL_TOKEN).toBeUndefined();
    expect(process.env.MGR_SANDBOX_WORKDIR).toBeUndefined();
    const config: Record<string, unknown> = { shell: '/usr/bin/fish', model: 'x' };
    await hooks.config!(config);
    expect(config).toEqual({ shell: shimPath, model: 'x' });
  });

  it('marks every spawn it sees with the start nonce, and reports itself loaded for the start check', async () => {
    const report = path.join(dir, 'report.json');
    await rm(report, { force: true });
    // Markers inherited by the agent server (another start's) must not vouch for anything.
    process.env.MGR_SANDBOX_HOOKED = 'stale';
    process.env.MGR_SANDBOX_PLANNED = 'stale';
    const hooks = await load(enforcedEnv());
    expect(process.env.MGR_SANDBOX_HOOKED).toBeUndefined();
    expect(process.env.MGR_SANDBOX_PLANNED).toBeUndefined();
    await hooks.config!({});
    const loaded = JSON.parse(await readFile(report, 'utf8'));
    expect(loaded).toMatchObject({ nonce, pid: process.pid, shell: shimPath, shellEnv: false });

    // A pseudo-terminal: planned as host, marked, and from now on the hook is known to fire in this process.
    const output = { env: { MGR_SANDBOX_PLANNED: 'forged-by-another-plugin' } as Record<string, string> };
    await hooks['shell.env']!({ cwd: path.join(ws, 'repos', 'app') }, output);
    expect(output.env).toEqual(planned);
    expect(process.env.MGR_SANDBOX_HOOKED).toBe(nonce);
    expect(JSON.parse(await readFile(report, 'utf8'))).toMatchObject({ nonce, shell: shimPath, shellEnv: true });
    expect(recorded).toEqual([]);
  });

  it('asks the planner for a session shell and injects the working directory; the command is never seen', async () => {
    const hooks = await load(enforcedEnv());
    const cwd = path.join(ws, 'repos', 'app');
    const output = { env: { OTHER: '1' } as Record<string, string> };
    await hooks['shell.env']!({ cwd, sessionID: 'ses_1', callID: 'call_1' }, output);
    expect(recorded).toEqual([{ method: 'POST', url: '/sandbox/shell', authorization: `Bearer ${token}`, body: { cwd, callID: 'call_1', sessionID: 'ses_1' } }]);
    expect(output.env).toEqual({ OTHER: '1', ...planned, MGR_SANDBOX_WORKDIR: cwd });

    const after = { title: 'ls', output: 'x', metadata: { exit: 0 } };
    await hooks['tool.execute.after']!({ tool: 'bash', sessionID: 'ses_1', callID: 'call_1', args: { command: 'ls' } }, after);
    expect(after.metadata).toEqual({ exit: 0, sandbox: true });
    // Marked once: the call is forgotten afterwards, and unknown calls are left alone.
    const again = { title: '', output: '', metadata: {} };
    await hooks['tool.execute.after']!({ tool: 'bash', sessionID: 'ses_1', callID: 'call_1', args: {} }, again);
    await hooks['tool.execute.after']!({ tool: 'read', sessionID: 'ses_1', callID: 'call_x', args: {} }, again);
    expect(again.metadata).toEqual({});
  });

  it('makes no call and sets nothing for a spawn without a call id, clearing planner variables set by others', async () => {
    const hooks = await load(enforcedEnv());
    const output = { env: { MGR_SANDBOX_WORKDIR: '/x', MGR_SANDBOX_ENV_GH_TOKEN: 't', KEEP: 'y' } };
    await hooks['shell.env']!({ cwd: path.join(ws, 'repos', 'app') }, output);
    expect(recorded).toEqual([]);
    expect(output.env).toEqual({ KEEP: 'y', ...planned });
  });

  it('injects the refusal for a directory outside the roots, and does not badge it', async () => {
    const hooks = await load(enforcedEnv());
    const output = { env: {} as Record<string, string> };
    await hooks['shell.env']!({ cwd: '/', callID: 'call_2' }, output);
    expect(output.env).toEqual({ ...planned, MGR_SANDBOX_REFUSE: outsideRootsMessage('/', sandboxRoots(ws)) });
    const after = { title: '', output: '', metadata: {} };
    await hooks['tool.execute.after']!({ tool: 'bash', sessionID: 's', callID: 'call_2', args: {} }, after);
    expect(after.metadata).toEqual({});
  });

  it('fails closed when the planner cannot be reached or rejects the token', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    let hooks = await load({ ...enforcedEnv(), MGR_INTERNAL_API_URL: `http://127.0.0.1:${port}` });
    let output = { env: {} as Record<string, string> };
    await hooks['shell.env']!({ cwd: path.join(ws, 'repos', 'app'), callID: 'c' }, output);
    expect(Object.keys(output.env)).toEqual(['MGR_SANDBOX_PLANNED', 'MGR_SANDBOX_REFUSE']);
    expect(output.env.MGR_SANDBOX_REFUSE).toMatch(new RegExp(`^${UNAVAILABLE_PREFIX}: the sandbox planner at http://127.0.0.1:${port} could not be reached \\(ECONNREFUSED\\)$`));

    hooks = await load({ ...enforcedEnv(), MGR_INTERNAL_TOKEN: 'not-the-token' });
    output = { env: {} };
    await hooks['shell.env']!({ cwd: path.join(ws, 'repos', 'app'), callID: 'c' }, output);
    expect(recorded.at(-1)?.authorization).toBe('Bearer not-the-token');
    expect(output.env.MGR_SANDBOX_REFUSE).toMatch(new RegExp(`^${UNAVAILABLE_PREFIX}: the sandbox planner answered HTTP 401: Missing or invalid bearer token`));

    hooks = await load({ ...enforcedEnv(), MGR_INTERNAL_TOKEN: undefined });
    output = { env: {} };
    await hooks['shell.env']!({ cwd: path.join(ws, 'repos', 'app'), callID: 'c' }, output);
    expect(output.env.MGR_SANDBOX_REFUSE).toBe(`${UNAVAILABLE_PREFIX}: the agent server was started without the manager token or the internal API address`);
  });

  it('refuses answers that are not a plan for a session shell', async () => {
    const fake = http.createServer((req, res) => {
      const answers: Record<string, unknown> = {
        '/host/sandbox/shell': { action: 'host', env: {} },
        '/foreign/sandbox/shell': { action: 'sandbox', env: { MGR_SANDBOX_WORKDIR: '/w', LD_PRELOAD: '/evil.so' } },
        '/empty/sandbox/shell': { action: 'sandbox', env: {} },
      };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answers[req.url!] ?? null));
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
    try {
      for (const [prefix, reason] of [
        ['host', 'the sandbox planner answered "host" for a session shell'],
        ['foreign', 'the sandbox planner sent an unexpected variable "LD_PRELOAD"'],
        ['empty', 'the sandbox planner answered "sandbox" for a session shell'],
      ] as const) {
        const hooks = await load({ ...enforcedEnv(), MGR_INTERNAL_API_URL: `${base}/${prefix}` });
        const output = { env: {} as Record<string, string> };
        await hooks['shell.env']!({ cwd: '/w', callID: 'c' }, output);
        expect(output.env).toEqual({ ...planned, MGR_SANDBOX_REFUSE: `${UNAVAILABLE_PREFIX}: ${reason}` });
      }
    } finally {
      await new Promise((resolve) => fake.close(resolve));
    }
  });
});
