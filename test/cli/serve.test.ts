import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { ResultPromise } from 'execa';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

/** `docdex serve` as a user starts it: the real binary, in a directory of its own. */

type Serve = ResultPromise<{ cwd: string; env: NodeJS.ProcessEnv; extendEnv: false; reject: false; all: true; stdin: 'pipe' }>;

let db: TestDatabase;
let cwd: string;
const running: Serve[] = [];

function serve(args: string[], env: NodeJS.ProcessEnv = {}): Serve {
  const base: NodeJS.ProcessEnv = { ...db.env, LOG_LEVEL: 'info', ...env };
  if (!('WORKSPACE_PATH' in env)) delete base.WORKSPACE_PATH;
  const child = execa(process.execPath, [BIN, 'serve', '--host', '127.0.0.1', ...args], { cwd, env: base, extendEnv: false, reject: false, all: true, stdin: 'pipe' });
  running.push(child);
  return child;
}

/** Resolves with everything the process printed once `pattern` shows up (or rejects when it exits first). */
function waitForOutput(child: Serve, pattern: RegExp, timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}; output:\n${seen}`)), timeoutMs);
    child.all!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (pattern.test(seen)) {
        clearTimeout(timer);
        resolve(seen);
      }
    });
    void child.then(() => {
      clearTimeout(timer);
      if (!pattern.test(seen)) reject(new Error(`exited before ${pattern}; output:\n${seen}`));
    });
  });
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});
afterEach(async () => {
  for (const child of running.splice(0)) {
    child.kill('SIGTERM');
    await child;
  }
  rmSync(cwd, { recursive: true, force: true });
});

describe('docdex serve', () => {
  it('shuts down gracefully on a signal that comes while its services start, after HTTP answers', async () => {
    cwd = mkdtempSync(path.join(os.tmpdir(), 'docdex-serve-'));
    const child = serve(['--port', String(await freePort())]);
    // Fastify's own line: the port answers (a supervisor's health check passes) before the services have started.
    await waitForOutput(child, /Server listening at/);
    child.kill('SIGTERM');
    const done = await child;
    expect(done.exitCode, String(done.all)).toBe(0);
    expect(String(done.all)).toContain('docdex daemon stopped');
  });

  it('provisions no agent workspace for a docs-only user', async () => {
    cwd = mkdtempSync(path.join(os.tmpdir(), 'docdex-serve-'));
    const child = serve(['--port', String(await freePort())]);
    // Logged once startDaemon returns, after its services (and so the agent manager's decision) started.
    const output = await waitForOutput(child, /docdex daemon listening/);
    expect(output).toContain('agent manager off');
    expect(existsSync(path.join(cwd, 'workspace'))).toBe(false);
    child.kill('SIGTERM');
    expect((await child).exitCode).toBe(0);
    expect(existsSync(path.join(cwd, 'workspace'))).toBe(false);
  });

  it('says a busy port in one Error: and one Hint: line, and provisions nothing', async () => {
    cwd = mkdtempSync(path.join(os.tmpdir(), 'docdex-serve-'));
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as AddressInfo;
    try {
      const result = await serve(['--port', String(port), '--agent']);
      expect(result.exitCode).toBe(1);
      const lines = String(result.all)
        .trimEnd()
        .split('\n')
        .filter((l) => /^(Error|Hint):/.test(l));
      expect(lines).toEqual([`Error: port ${port} is in use on 127.0.0.1.`, 'Hint: Pick another port with --port or API_PORT, or stop what is listening there.']);
      expect(String(result.all)).not.toContain('EADDRINUSE');
      expect(existsSync(path.join(cwd, 'workspace'))).toBe(false);
    } finally {
      blocker.close();
    }
  });

  it('provisions ./workspace when asked with --agent', async () => {
    cwd = mkdtempSync(path.join(os.tmpdir(), 'docdex-serve-'));
    const child = serve(['--port', String(await freePort()), '--agent']);
    await waitForOutput(child, /agent workspace ready/);
    expect(existsSync(path.join(cwd, 'workspace'))).toBe(true);
  });

  it('logs a request once, at debug, with whole milliseconds; nothing per request at info; no deprecation warning', async () => {
    cwd = mkdtempSync(path.join(os.tmpdir(), 'docdex-serve-'));
    for (const level of ['info', 'debug']) {
      const port = await freePort();
      const child = serve(['--port', String(port), '--no-workers'], { LOG_LEVEL: level });
      await waitForOutput(child, /docdex daemon listening/);
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBeLessThan(600);
      child.kill('SIGTERM');
      const output = String((await child).all);
      expect(output).not.toMatch(/incoming request|request completed|responseTime/);
      // Fastify 5.12 deprecated the top-level option that kept them quiet, and said so at every start (issue #49).
      expect(output).not.toMatch(/FSTDEP|DeprecationWarning|is deprecated/);
      const lines = output
        .split('\n')
        .filter((l) => l.includes('"url":"/health"'))
        .map((l) => JSON.parse(l) as { level: number; msg: string; ms: number });
      if (level === 'info') expect(lines).toEqual([]);
      else {
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatchObject({ level: 20, msg: 'request', status: expect.any(Number) });
        expect(Number.isInteger(lines[0]!.ms)).toBe(true);
      }
    }
  }, 120_000);

  it('with --mcp, says on stderr which home and database it uses', async () => {
    cwd = mkdtempSync(path.join(os.tmpdir(), 'docdex-serve-'));
    const child = serve(['--mcp', '--no-workers']);
    const output = await waitForOutput(child, /DOCDEX_HOME/);
    const line = output.split('\n').find((l) => l.includes('DOCDEX_HOME'))!;
    expect(line).toContain(db.home);
    expect(line).toContain(db.name);
    child.stdin!.end();
    expect((await child).exitCode).toBe(0);
    expect(String((await child).stdout)).toBe('');
  });
});
