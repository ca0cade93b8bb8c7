import { execFileSync, spawn } from 'node:child_process';
import os from 'node:os';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workspaceLayout } from '../../src/core/agent/workspace.js';
import { pinnedOpencodeVersion, platformPackageNames, resolveOpencodeBinary } from '../../src/core/agent-server/binary.js';
import { agentServerStatus, startAgentServer, stopAgentServer } from '../../src/core/agent-server/control.js';
import { agentServerEnv, agentServerLayout, agentServerUrl, isLoopbackHost } from '../../src/core/agent-server/layout.js';
import { createOpencodeScheduleRunner } from '../../src/core/agent-server/schedule-runner.js';
import { createAgentServerService, endStaleServer, prepareAgentServer } from '../../src/core/agent-server/service.js';
import { readAgentServerState } from '../../src/core/agent-server/state.js';
import { AgentServerSupervisor } from '../../src/core/agent-server/supervisor.js';
import type { AgentServerEndpoint } from '../../src/core/agent-server/supervisor.js';
import { loadConfig } from '../../src/core/config.js';
import { UserError } from '../../src/core/errors.js';
import type { Config } from '../../src/core/config.js';
import type { Database } from '../../src/core/db/connect.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { freePort, removeDir, tempDir, waitUntil } from './helpers.js';

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('the opencode binary', () => {
  it('resolves from the platform package and is the pinned version', () => {
    const binary = resolveOpencodeBinary({});
    expect(binary.source).toMatch(/^opencode-(linux|darwin|windows)-/);
    expect(execFileSync(binary.path, ['--version'], { encoding: 'utf8' }).trim()).toBe(pinnedOpencodeVersion());
  });

  it('prefers the baseline build without AVX2 and musl builds on musl, like opencode-ai', () => {
    expect(platformPackageNames('linux', 'x64', true, false)).toEqual(['opencode-linux-x64', 'opencode-linux-x64-baseline', 'opencode-linux-x64-musl', 'opencode-linux-x64-baseline-musl']);
    expect(platformPackageNames('linux', 'x64', false, false)[0]).toBe('opencode-linux-x64-baseline');
    expect(platformPackageNames('linux', 'arm64', false, true)).toEqual(['opencode-linux-arm64-musl', 'opencode-linux-arm64']);
    expect(platformPackageNames('win32', 'x64', true, false)).toEqual(['opencode-windows-x64', 'opencode-windows-x64-baseline']);
  });

  it('honours OPENCODE_BIN_PATH and reports a missing one as a user error', () => {
    expect(() => resolveOpencodeBinary({ OPENCODE_BIN_PATH: '/nonexistent/opencode' })).toThrow(/not an executable/);
  });
});

describe('the agent server environment', () => {
  it('keeps files in the workspace and docdex secrets out of the child', () => {
    const layout = agentServerLayout(workspaceLayout({ agent: { workspacePath: '/w', host: '127.0.0.1', port: 1 } }));
    const env = agentServerEnv(
      { PATH: '/bin', DB_PASSWORD: 'x', DATABASE_URL: 'postgres://u:p@h/d', MCP_AUTH_TOKEN: 't', VAPID_PRIVATE_KEY: 'k', PGPASSWORD: 'p', OPENAI_API_KEY: 'provider', MGR_INTERNAL_TOKEN: 'stale' },
      { layout, internalApiUrl: 'http://127.0.0.1:7654/api/internal' },
    );
    expect(env).toMatchObject({
      PATH: '/bin',
      OPENAI_API_KEY: 'provider',
      HOME: '/w',
      XDG_CONFIG_HOME: '/w/.config',
      XDG_DATA_HOME: '/w/.opencode/state',
      // The token goes over in a file the plugins delete (issue #51), never in the environment.
      MGR_INTERNAL_TOKEN_FILE: '/w/.opencode/state/docdex/internal-token',
      OPENCODE_DISABLE_AUTOUPDATE: 'true',
      npm_config_fetch_retries: '0',
    });
    for (const key of ['DB_PASSWORD', 'DATABASE_URL', 'MCP_AUTH_TOKEN', 'VAPID_PRIVATE_KEY', 'PGPASSWORD', 'OPENCODE_SERVER_PASSWORD', 'MGR_INTERNAL_TOKEN']) expect(env).not.toHaveProperty(key);
    for (const dir of [env.HOME, env.XDG_CONFIG_HOME, env.XDG_DATA_HOME, env.XDG_STATE_HOME, env.XDG_CACHE_HOME]) {
      expect(dir!.startsWith('/w')).toBe(true);
      expect(dir!.startsWith('/w/repos') || dir!.startsWith('/w/schedule-worktrees')).toBe(false);
    }
  });

  it('fails a scheduled run clearly while the agent server is down', async () => {
    const runner = createOpencodeScheduleRunner({ agent: { workspacePath: '/w', host: '127.0.0.1', port: await freePort() } });
    await expect(
      runner.run({
        prompt: 'p',
        agent: null,
        model: null,
        directory: '/w',
        repo: {} as never,
        scheduleId: 1,
        runId: 1,
        signal: new AbortController().signal,
        log: async () => undefined,
        session: async () => undefined,
      }),
    ).rejects.toThrow(/The agent server is not running at http:\/\/127\.0\.0\.1:\d+\. Start it with `docdex agent start`/);
  });

  it('knows loopback hosts', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) expect(isLoopbackHost(host)).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', 'example.com', '192.168.1.2']) expect(isLoopbackHost(host)).toBe(false);
  });
});

describe('a server left behind by a daemon that died', () => {
  it('is ended by the next supervisor on the same host, and nothing else is', async () => {
    const spawnIdle = (args: string[]) => spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', ...args], { detached: true, stdio: 'ignore' });
    const stale = spawnIdle(['opencode', 'serve']);
    const stranger = spawnIdle(['something-else', 'serve']);
    try {
      await waitUntil(() => (stale.pid !== undefined && stranger.pid !== undefined ? true : undefined), 5000, 'the processes');
      const me = `${os.hostname()}:${process.pid}`;
      expect(endStaleServer({ supervisor: `other-host:1`, pid: stale.pid! }, me)).toBe(false);
      expect(endStaleServer({ supervisor: `${os.hostname()}:1`, pid: stranger.pid! }, me)).toBe(false);
      expect(alive(stranger.pid!)).toBe(true);
      expect(endStaleServer({ supervisor: `${os.hostname()}:1`, pid: stale.pid! }, me)).toBe(true);
      await waitUntil(() => (stale.exitCode !== null || stale.signalCode !== null ? true : undefined), 5000, 'the stale server to end');
      expect(stale.signalCode).toBe('SIGKILL');
    } finally {
      stale.kill('SIGKILL');
      stranger.kill('SIGKILL');
    }
  });
});

describe('agent server lifecycle (real opencode)', () => {
  let db: TestDatabase;
  let workspace: string;
  let config: Config;
  const database = (): Database => ({ pool: db.pool, info: db.info, close: async () => undefined });

  beforeAll(async () => {
    db = await createTestDatabase();
    workspace = tempDir('docdex-agent-ws-');
    config = loadConfig({ ...db.env, WORKSPACE_PATH: workspace, AGENT_PORT: String(await freePort()) });
  });

  afterAll(async () => {
    await db?.drop();
    removeDir(workspace);
  });

  it('starts, answers, restarts after a crash with backoff, and stops with its process group', async () => {
    const supervisor = new AgentServerSupervisor({
      url: agentServerUrl(config),
      prepare: () => prepareAgentServer(config, db.pool, { offline: true }),
      logFile: agentServerLayout(workspaceLayout(config)).logFile,
      log: silent,
      backoff: { initialMs: 300, maxMs: 2000 },
    });
    try {
      const started = await supervisor.start();
      expect(started.state).toBe('running');
      const first = started.pid!;
      expect(alive(first)).toBe(true);
      const health = (await (await fetch(`${agentServerUrl(config)}/global/health`)).json()) as { healthy: boolean; version: string };
      expect(health).toEqual({ healthy: true, version: pinnedOpencodeVersion() });

      process.kill(first, 'SIGKILL');
      const restarted = await waitUntil(
        () => {
          const s = supervisor.current();
          return s.state === 'running' && s.pid !== first ? s : undefined;
        },
        90_000,
        'the restart',
      );
      expect(restarted.restarts).toBe(1);
      expect(restarted.lastExit).toBe('signal SIGKILL');

      const second = restarted.pid!;
      const stopped = await supervisor.stop();
      expect(stopped.state).toBe('stopped');
      expect(alive(second)).toBe(false);
      const log = readFileSync(agentServerLayout(workspaceLayout(config)).logFile, 'utf8');
      expect(log).toContain('agent server exited (signal SIGKILL)');
      expect(log).toContain('opencode server listening');
    } finally {
      await supervisor.stop();
    }
  });

  it('refuses a non-loopback host without a password, and passes the password on its own calls', async () => {
    const open = loadConfig({ ...db.env, WORKSPACE_PATH: workspace, AGENT_HOST: '0.0.0.0', AGENT_PORT: config.agent.port.toString() });
    const refused = new AgentServerSupervisor({
      url: agentServerUrl(open),
      prepare: () => prepareAgentServer(open, db.pool, { offline: true }),
      logFile: agentServerLayout(workspaceLayout(open)).logFile,
      log: silent,
    });
    const status = await refused.start();
    expect(status.state).toBe('failed');
    expect(status.pid).toBeNull();
    expect(status.lastError).toMatch(/non-loopback host needs a server password/);
    await expect(startAgentServer(open)).rejects.toThrow(/non-loopback host needs a server password/);

    const guarded = loadConfig({ ...db.env, WORKSPACE_PATH: workspace, AGENT_PORT: config.agent.port.toString(), OPENCODE_SERVER_PASSWORD: 's3cret-pw' });
    const supervisor = new AgentServerSupervisor({
      url: agentServerUrl(guarded),
      password: 's3cret-pw',
      prepare: () => prepareAgentServer(guarded, db.pool, { offline: true }),
      logFile: agentServerLayout(workspaceLayout(guarded)).logFile,
      log: silent,
    });
    try {
      expect((await supervisor.start()).state).toBe('running');
      expect((await fetch(`${agentServerUrl(guarded)}/global/health`)).status).toBe(401);
      const auth = { authorization: `Basic ${Buffer.from('opencode:s3cret-pw').toString('base64')}` };
      expect((await fetch(`${agentServerUrl(guarded)}/global/health`, { headers: auth })).status).toBe(200);
    } finally {
      await supervisor.stop();
    }
  });

  it('follows `docdex agent start|stop` through the database, as the daemon does', async () => {
    const service = await createAgentServerService({ offline: true, pollMs: 300 })(database(), config, silent);
    try {
      const running = await startAgentServer(config, { timeoutMs: 90_000, pollMs: 200 });
      expect(running).toMatchObject({ status: 'running', desired: 'running', supervised: true });
      expect(alive(running.pid!)).toBe(true);
      expect((await agentServerStatus(config)).pid).toBe(running.pid);

      const restarted = await startAgentServer(config, { restart: true, timeoutMs: 90_000, pollMs: 200 });
      expect(restarted.status).toBe('running');
      expect(restarted.pid).not.toBe(running.pid);
      expect(alive(running.pid!)).toBe(false);

      const stopped = await stopAgentServer(config, { timeoutMs: 60_000, pollMs: 200 });
      expect(stopped).toMatchObject({ status: 'stopped', desired: 'stopped' });
      expect(alive(restarted.pid!)).toBe(false);
    } finally {
      await service.stop();
    }
    const after = await readAgentServerState(db.pool);
    expect(after.supervised).toBe(false);
    await expect(startAgentServer(config, { timeoutMs: 5000, pollMs: 200 })).rejects.toThrow(/No docdex daemon is supervising|did not get there/);
  });
});

describe('the supervisor with a stand-in server', () => {
  it('rotates its log file while the server runs, keeping one previous file', async () => {
    const dir = tempDir('docdex-supervisor-');
    const port = await freePort();
    const script = `
      const http = require('node:http');
      http.createServer((req, res) => res.end('{"healthy":true}')).listen(${port}, '127.0.0.1');
      let n = 0;
      setInterval(() => { for (let i = 0; i < 50; i++) console.log('line ' + (n++) + ' ' + 'x'.repeat(100)); }, 20);
    `;
    const supervisor = new AgentServerSupervisor({
      url: `http://127.0.0.1:${port}`,
      prepare: async () => ({ command: process.execPath, args: ['-e', script], cwd: dir, env: { PATH: process.env.PATH ?? '' } }),
      logFile: `${dir}/server.log`,
      log: silent,
      logRotateBytes: 64 * 1024,
    });
    try {
      expect((await supervisor.start()).state).toBe('running');
      await waitUntil(
        () => {
          try {
            return readFileSync(`${dir}/server.log.1`, 'utf8').length > 0 ? true : undefined;
          } catch {
            return undefined;
          }
        },
        20_000,
        'a rotated log',
      );
      expect(readFileSync(`${dir}/server.log.1`).length).toBeGreaterThan(64 * 1024);
      await waitUntil(() => (readFileSync(`${dir}/server.log`, 'utf8').includes('line ') ? true : undefined), 10_000, 'the new log');
      expect(supervisor.recentLog(5)).toHaveLength(5);
      expect(supervisor.current().state).toBe('running');
    } finally {
      await supervisor.stop();
      removeDir(dir);
    }
  });
});

describe('the start check of a spawn plan (stand-in server)', () => {
  const standIn = (port: number) => `require('node:http').createServer((req, res) => res.end('{"healthy":true}')).listen(${port}, '127.0.0.1');`;

  it('stops the server for good on a UserError, with the message as lastError', async () => {
    const dir = tempDir('docdex-verify-');
    const port = await freePort();
    const seen: AgentServerEndpoint[] = [];
    let prepared = 0;
    const supervisor = new AgentServerSupervisor({
      url: `http://127.0.0.1:${port}`,
      password: 'pw',
      prepare: async () => {
        prepared++;
        return {
          command: process.execPath,
          args: ['-e', standIn(port)],
          cwd: dir,
          env: { PATH: process.env.PATH ?? '' },
          async verify(server) {
            seen.push(server);
            // The server answers while it is checked, and is not reported as running yet.
            expect(supervisor.current().state).toBe('starting');
            throw new UserError('the plugin did not load');
          },
        };
      },
      logFile: `${dir}/server.log`,
      log: silent,
      backoff: { initialMs: 50, maxMs: 50 },
    });
    try {
      const status = await supervisor.start();
      expect(status).toMatchObject({ state: 'failed', pid: null, lastError: 'the plugin did not load' });
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ url: `http://127.0.0.1:${port}`, headers: { authorization: `Basic ${Buffer.from('opencode:pw').toString('base64')}` } });
      expect(alive(seen[0]!.pid!)).toBe(false);
      expect(await supervisor.probe(1000)).toBe(false);
      await new Promise((r) => setTimeout(r, 300));
      expect(prepared).toBe(1);
      expect(supervisor.current().state).toBe('failed');
    } finally {
      await supervisor.stop();
      removeDir(dir);
    }
  });

  it('kills and retries with backoff on any other error, and runs once the check passes', async () => {
    const dir = tempDir('docdex-verify-');
    const port = await freePort();
    const pids: Array<number | undefined> = [];
    const supervisor = new AgentServerSupervisor({
      url: `http://127.0.0.1:${port}`,
      prepare: async () => ({
        command: process.execPath,
        args: ['-e', standIn(port)],
        cwd: dir,
        env: { PATH: process.env.PATH ?? '' },
        async verify(server) {
          pids.push(server.pid);
          if (pids.length === 1) throw new Error('could not ask the server');
        },
      }),
      logFile: `${dir}/server.log`,
      log: silent,
      backoff: { initialMs: 50, maxMs: 50 },
    });
    try {
      await supervisor.start();
      await waitUntil(() => (supervisor.current().state === 'running' ? true : undefined), 20_000, 'the retry');
      expect(pids).toHaveLength(2);
      expect(alive(pids[0]!)).toBe(false);
      expect(supervisor.current()).toMatchObject({ state: 'running', pid: pids[1], restarts: 1, lastError: null });
    } finally {
      await supervisor.stop();
      removeDir(dir);
    }
  });
});
