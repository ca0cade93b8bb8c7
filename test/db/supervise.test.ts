import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { embeddedStatus, rotateEmbeddedLog, stopEmbeddedPostgres } from '../../src/core/db/embedded.js';
import { BIN } from '../helpers/cli.js';

/**
 * `docdex serve` on its own embedded cluster (no DATABASE_URL, no DB_HOST): the postmaster is killed with
 * SIGKILL and the daemon starts it again, so /health is ok and searches answer without anyone running `db start`.
 */

const home = mkdtempSync(path.join(os.tmpdir(), 'docdex-supervise-'));
let daemon: ChildProcess | null = null;

afterAll(async () => {
  if (daemon && daemon.exitCode === null) {
    daemon.kill('SIGTERM');
    await new Promise((r) => daemon!.once('exit', r));
  }
  await stopEmbeddedPostgres(home).catch(() => undefined);
  rmSync(home, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

async function waitFor<T>(probe: () => Promise<T | null>, timeoutMs: number): Promise<{ value: T | null; ms: number }> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    const value = await probe().catch(() => null);
    if (value !== null) return { value, ms: Date.now() - started };
    await new Promise((r) => setTimeout(r, 250));
  }
  return { value: null, ms: Date.now() - started };
}

describe('embedded PostgreSQL under docdex serve', () => {
  it('restarts a postmaster killed with SIGKILL: /health is ok again and search answers', async () => {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, DOCDEX_HOME: home, WORKSPACE_PATH: path.join(home, 'workspace'), API_PORT: String(port), NO_COLOR: '1' };
    delete env.DATABASE_URL;
    delete env.DB_HOST;
    daemon = spawn(process.execPath, [BIN, 'serve', '--port', String(port)], { env, cwd: home, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    daemon.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    daemon.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const base = `http://127.0.0.1:${port}`;
    const healthy = async () => {
      const res = await fetch(`${base}/health`);
      return res.status === 200 ? ((await res.json()) as { status: string }) : null;
    };
    const up = await waitFor(healthy, 120_000);
    expect(up.value, output).not.toBeNull();
    // serve binds before it starts its workers; it logs this line once they are up. A database lost while they
    // start is a failed start (serve exits 1), not the crash of a running daemon this test is about.
    expect((await waitFor(async () => (output.includes('docdex daemon listening') ? true : null), 60_000)).value, output).toBe(true);

    const pid = embeddedStatus(home).pid!;
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGKILL');

    const back = await waitFor(async () => {
      const h = await healthy();
      if (!h) return null;
      const search = await fetch(`${base}/api/search?q=anything`);
      return search.status === 200 ? h : null;
    }, 60_000);
    expect(back.value, output).not.toBeNull();
    expect(embeddedStatus(home).running).toBe(true);
    expect(embeddedStatus(home).pid).not.toBe(pid);
    expect(output).toMatch(/embedded PostgreSQL supervisor/);
  }, 240_000);

  it('rotates the server log past its size, keeping a few old files', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'docdex-log-'));
    try {
      const log = path.join(dir, 'postgres.log');
      for (let round = 1; round <= 5; round++) {
        writeFileSync(log, `round ${round}\n`.repeat(200));
        expect(await rotateEmbeddedLog(log, 1000, 3)).toBe(true);
        expect(statSync(log).size).toBe(0);
      }
      expect(await rotateEmbeddedLog(log, 1000, 3)).toBe(false);
      expect(['.1', '.2', '.3'].map((s) => existsSync(log + s))).toEqual([true, true, true]);
      expect(existsSync(`${log}.4`)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
