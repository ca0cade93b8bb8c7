import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { embeddedServerState, embeddedStatus, ensureEmbeddedPostgres, serverMallocEnvironment, socketDirectory, stopEmbeddedPostgres } from '../../src/core/db/embedded.js';
import { runCli } from '../helpers/cli.js';

const homes: string[] = [];
function freshHome(): string {
  const home = mkdtempSync(path.join(os.tmpdir(), 'docdex-embedded-'));
  homes.push(home);
  return home;
}

afterAll(async () => {
  for (const home of homes) {
    await stopEmbeddedPostgres(home).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  }
});

function cliEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DOCDEX_HOME: home };
  delete env.DATABASE_URL;
  delete env.DB_HOST;
  return env;
}

async function query(c: { host: string; port: number; user: string; password: string; database: string }, sql: string) {
  const client = new pg.Client(c);
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('embedded PostgreSQL', () => {
  it('starts on first use, is reused by the next command, and db stop stops it', async () => {
    const home = freshHome();
    expect(embeddedStatus(home)).toMatchObject({ initialised: false, running: false });
    const first = await ensureEmbeddedPostgres(home);
    const status = embeddedStatus(home);
    expect(status).toMatchObject({ initialised: true, running: true, port: first.port });
    expect(await query(first, 'SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
    // pg_trgm ships with the binaries: the spec's fuzzy matching depends on it.
    expect(await query(first, "SELECT count(*)::int AS n FROM pg_available_extensions WHERE name = 'pg_trgm'")).toEqual([{ n: 1 }]);
    // The password file is private, and TCP listens on loopback only.
    expect(readFileSync(path.join(home, 'postgres.password'), 'utf8').trim()).toBe(first.password);
    expect((await import('node:fs')).statSync(path.join(home, 'postgres.password')).mode & 0o777).toBe(0o600);
    expect(await query(first, 'SHOW listen_addresses')).toEqual([{ listen_addresses: '127.0.0.1' }]);
    // docdex connects through the unix socket, in a directory only this user can enter; TCP stays for other tools.
    const run = path.join(home, 'run');
    expect(first.host).toBe(run);
    expect(statSync(run).mode & 0o777).toBe(0o700);
    expect(await query(first, "SELECT inet_server_addr() AS addr, current_setting('unix_socket_directories') AS dirs")).toEqual([{ addr: null, dirs: run }]);
    expect(await query({ ...first, host: '127.0.0.1' }, 'SELECT inet_server_addr()::text AS addr')).toEqual([{ addr: '127.0.0.1/32' }]);
    // The server runs with docdex's malloc settings (serverMallocEnvironment), which its backends inherit.
    const environ = readFileSync(`/proc/${status.pid}/environ`, 'utf8').split('\0');
    expect(environ).toEqual(expect.arrayContaining(['MALLOC_MMAP_THRESHOLD_=33554432', 'MALLOC_TRIM_THRESHOLD_=134217728']));

    const viaCli = await runCli(['db', 'status', '--json'], { env: cliEnv(home) });
    expect(viaCli.exitCode).toBe(0);
    const json = JSON.parse(String(viaCli.stdout));
    expect(json).toMatchObject({ mode: 'embedded', running: true, pid: status.pid, port: first.port, socket_dir: run, schema_version: 0 });

    const second = await ensureEmbeddedPostgres(home);
    expect(second.port).toBe(first.port);
    expect(embeddedStatus(home).pid).toBe(status.pid);

    const stop = await runCli(['db', 'stop'], { env: cliEnv(home) });
    expect(stop.exitCode).toBe(0);
    expect(embeddedStatus(home).running).toBe(false);
    await expect(query(first, 'SELECT 1')).rejects.toThrow();
    // A stop the user asked for is not a crash for `docdex serve`'s supervisor to undo; a start clears it.
    expect(embeddedServerState(home)).toBe('stopped');
    await ensureEmbeddedPostgres(home);
    expect(embeddedServerState(home)).toBe('running');
  });

  it('counts a killed server as crashed at once, zombie or not, and even once its postmaster.pid is gone', async () => {
    const home = freshHome();
    await ensureEmbeddedPostgres(home);
    const pid = embeddedStatus(home).pid!;
    process.kill(pid, 'SIGKILL');
    // Until its parent (often the machine's init) reaps it, the postmaster is a zombie: kill(0) still succeeds.
    for (let i = 0; i < 100 && embeddedServerState(home) === 'running'; i++) await new Promise((r) => setTimeout(r, 20));
    expect(embeddedServerState(home)).toBe('crashed');
    // Another process's start attempt removes the stale file before it fails, as one does while the dead
    // server's backends still hold its shared memory.
    rmSync(path.join(home, 'postgres', 'postmaster.pid'), { force: true });
    expect(embeddedServerState(home)).toBe('crashed');
  });

  it('survives concurrent starts from several processes without corruption', async () => {
    const home = freshHome();
    const results = await Promise.all([0, 1, 2].map(() => runCli(['db', 'start', '--json'], { env: cliEnv(home) })));
    for (const r of results) expect(r.exitCode, String(r.stderr)).toBe(0);
    const pids = new Set(results.map((r) => JSON.parse(String(r.stdout)).pid));
    expect(pids.size).toBe(1);
    const c = await ensureEmbeddedPostgres(home);
    expect(await query(c, 'SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
  });

  it('recovers from a crash that left a stale postmaster.pid, even when the pid was reused', async () => {
    const home = freshHome();
    const c = await ensureEmbeddedPostgres(home);
    const pid = embeddedStatus(home).pid!;
    process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 100 && embeddedStatus(home).running; i++) await new Promise((r) => setTimeout(r, 50));
    // Simulate pid reuse: point postmaster.pid and the socket's lock file at a live process that is not postgres.
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
    for (const lockFile of [path.join(home, 'postgres', 'postmaster.pid'), path.join(home, 'run', `.s.PGSQL.${c.port}.lock`)]) {
      const lines = readFileSync(lockFile, 'utf8').split('\n');
      lines[0] = String(sleeper.pid);
      writeFileSync(lockFile, lines.join('\n'));
    }
    try {
      const again = await ensureEmbeddedPostgres(home);
      expect(await query(again, 'SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
      expect(again.password).toBe(c.password);
      expect(embeddedStatus(home).pid).not.toBe(pid);
    } finally {
      sleeper.kill();
    }
  });

  it('falls back to loopback TCP when the home is too deep for a unix socket path', async () => {
    const home = path.join(freshHome(), 'd'.repeat(60), 'docdex');
    mkdirSync(home, { recursive: true });
    homes.unshift(home); // stopped before its parent directory is removed
    expect(socketDirectory(home)).toBeNull();
    const c = await ensureEmbeddedPostgres(home);
    expect(c.host).toBe('127.0.0.1');
    expect(await query(c, 'SELECT inet_server_addr()::text AS addr')).toEqual([{ addr: '127.0.0.1/32' }]);
    expect(embeddedStatus(home).socketDir).toBeNull();
    expect(readdirSync(home)).not.toContain('run');
  });

  it('puts the socket under the home only where the server can name it', () => {
    expect(socketDirectory('/home/ada/.local/share/docdex')).toBe('/home/ada/.local/share/docdex/run');
    // A comma separates the server's socket directories; quotes and backslashes would need escaping in its config.
    for (const home of ['/srv/a,b/docdex', "/srv/o'neil/docdex", '/srv/"q"/docdex', '/srv/back\\slash/docdex']) expect(socketDirectory(home)).toBeNull();
  });

  it("keeps malloc settings the caller's environment already has", () => {
    expect(serverMallocEnvironment({})).toEqual({ MALLOC_MMAP_THRESHOLD_: '33554432', MALLOC_TRIM_THRESHOLD_: '134217728' });
    expect(serverMallocEnvironment({ MALLOC_TRIM_THRESHOLD_: '0' })).toEqual({ MALLOC_MMAP_THRESHOLD_: '33554432' });
  });
});
