import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { Readable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Logger } from 'pino';
import type { Config } from '../../core/config.js';
import { openDatabase } from '../../core/db/connect.js';
import type { Database } from '../../core/db/connect.js';
import { embeddedServerState, embeddedStatus, stopEmbeddedIfIdle } from '../../core/db/embedded.js';
import { createDocdexMcpServer } from '../../core/mcp/server.js';
import { createLogger } from '../logger.js';
import type { BackgroundService, ServiceStarter } from '../server.js';

/**
 * `docdex serve --mcp`: MCP over standard input/output, for an MCP client that starts docdex itself. stdout
 * carries the protocol and nothing else, so console output from any library is sent to stderr, where the
 * logs go too. The database is opened the way every command opens it (the embedded server is started when no
 * external one is configured), so the client's config needs no other setup.
 */

export interface StdioServerOptions {
  /**
   * Services to run while the server is up, e.g. the crawl workers, so that init_crawl makes progress when
   * no daemon is running. They stop when the client disconnects.
   */
  services?: ServiceStarter[];
  logger?: Logger;
  /** The project the project tools default to and sync_project reads; default the working directory. */
  projectDir?: string;
  /** For tests; default process.stdin / process.stdout. */
  stdin?: Readable;
  stdout?: Writable;
}

/**
 * Keeps stdout for the protocol: console.* and any direct process.stdout.write from a dependency go to
 * stderr; the transport writes through a private handle on the original stdout.
 */
function reserveStdout(): Writable {
  const write = process.stdout.write.bind(process.stdout);
  const protocol = new Writable({
    write(chunk: Buffer | string, encoding, callback) {
      write(chunk, encoding, (error) => callback(error ?? null));
    },
  });
  const toStderr = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  process.stdout.write = toStderr;
  for (const method of ['log', 'info', 'debug', 'warn', 'trace', 'dir'] as const) {
    console[method] = (...args: unknown[]) => console.error(...args);
  }
  return protocol;
}

/** JSON-RPC answers to lines the SDK's stdio transport could not read (it only reports them to onerror). */
function parseErrorReply(error: Error): { code: number; message: string } | undefined {
  if (error instanceof SyntaxError) return { code: -32700, message: `Parse error: ${error.message}` };
  if (error.name === 'ZodError' || 'issues' in error) return { code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 message' };
  return undefined;
}

/**
 * The stop signals of a stdio server, listened to from the very start: an MCP client that gives up while the
 * database is still starting (the inspector's connect timeout) sends SIGTERM then, and the server must still
 * get to its cleanup, which stops an embedded server it started.
 */
function stopSignals(stdin: Readable): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const stop = () => controller.abort();
  stdin.once('end', stop);
  stdin.once('close', stop);
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return {
    signal: controller.signal,
    dispose() {
      stdin.off('end', stop);
      stdin.off('close', stop);
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}

/**
 * An MCP client (the inspector, Claude Desktop) starts docdex with none of the user's environment, so a
 * DOCDEX_HOME set in a shell is not seen and the default home's embedded server starts instead (issue #49).
 * Whether this process starts the embedded server (then it is its own, stopped at exit unless another docdex
 * process uses it), and whether the home is new.
 */
function embeddedStart(config: Config): { starts: boolean; newHome: boolean } {
  const starts = config.database.mode === 'embedded' && embeddedServerState(config.home) !== 'running';
  return { starts, newHome: starts && !embeddedStatus(config.home).initialised };
}

function announceDatabase(log: Logger, config: Config, db: Database, start: { starts: boolean; newHome: boolean }): void {
  log.info({ home: config.home, database: db.info.display, mode: db.info.mode }, `docdex MCP server: DOCDEX_HOME ${config.home}, ${db.info.mode} database ${db.info.display}`);
  if (start.newHome) {
    log.warn(
      { home: config.home },
      `DOCDEX_HOME ${config.home} held no index: a new, empty one was made there. If your index is in another home, give this server DOCDEX_HOME in the MCP client's configuration ("env"), or -e DOCDEX_HOME=... with the inspector.`,
    );
  } else if (start.starts) {
    log.info({ home: config.home }, 'started the embedded PostgreSQL; it stops again when this server exits, unless another docdex process is using it');
  }
}

const REAPER_CANDIDATES = [
  // Running from dist/: the sibling module.
  fileURLToPath(new URL('./embedded-reaper-main.js', import.meta.url)),
  // Running from src/ (tests): the build output.
  fileURLToPath(new URL('../../../dist/daemon/mcp/embedded-reaper-main.js', import.meta.url)),
];

/** A detached process that stops the embedded server once this one is gone, even by SIGKILL (embedded-reaper-main.ts). */
function startReaper(config: Config, log: Logger): void {
  const main = REAPER_CANDIDATES.find((file) => existsSync(file));
  if (!main) return;
  try {
    spawn(process.execPath, [main, config.home, String(process.pid)], { detached: true, stdio: 'ignore' }).unref();
  } catch (error) {
    log.warn({ err: error }, 'could not start the process that stops the embedded PostgreSQL after this server');
  }
}

async function stopOwnEmbedded(config: Config, log: Logger): Promise<void> {
  const outcome = await stopEmbeddedIfIdle(config.home).catch((error: unknown) => (log.warn({ err: error }, 'could not stop the embedded PostgreSQL'), 'in_use' as const));
  log.info({ home: config.home, outcome }, outcome === 'stopped' ? 'stopped the embedded PostgreSQL this server started' : 'left the embedded PostgreSQL running: another docdex process uses it');
}

async function startServices(db: Database, config: Config, log: Logger, starters: ServiceStarter[]): Promise<BackgroundService[]> {
  const services: BackgroundService[] = [];
  try {
    for (const start of starters) {
      const service = await start(db, config, log);
      if (service) services.push(service);
    }
  } catch (error) {
    await Promise.allSettled(services.map((s) => s.stop()));
    throw error;
  }
  return services;
}

/**
 * Serves MCP on the transport until it closes or a stop signal comes. `started` runs once the transport is
 * connected: the client's connect timeout (the inspector's is 15 s) is not spent starting the workers.
 */
async function serve(db: Database, config: Config, log: Logger, io: { stdin: Readable; stdout: Writable; projectDir: string }, stop: AbortSignal, started: () => Promise<void>): Promise<void> {
  const { server } = createDocdexMcpServer({
    pool: db.pool,
    info: db.info,
    config,
    onError: (error, context) => log.error({ err: error, tool: context.tool }, 'MCP tool failed'),
    // The client starts the server in the project it works on: the project tools default to it.
    localProjectDir: io.projectDir,
  });
  const transport = new StdioServerTransport(io.stdin, io.stdout);
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = resolve;
  });
  await server.connect(transport);

  // Installed after connect(), which wraps the transport's callbacks with the protocol's own.
  const protocolOnError = transport.onerror;
  transport.onerror = (error: Error) => {
    protocolOnError?.(error);
    const reply = parseErrorReply(error);
    if (reply) {
      log.warn({ err: error }, 'unreadable MCP message on stdin');
      // No id: the request's id is unknown, and MCP (unlike plain JSON-RPC) allows none rather than null.
      void transport.send({ jsonrpc: '2.0', error: reply }).catch(() => undefined);
    }
  };
  const shutdown = () => void server.close().catch(() => undefined);
  if (stop.aborted) shutdown();
  else stop.addEventListener('abort', shutdown, { once: true });
  log.info({ database: db.info.display }, 'docdex MCP server ready on stdio');
  await started().catch((error: unknown) => {
    log.error({ err: error }, 'the workers did not start');
    shutdown();
  });
  await closed;
}

/** Runs until the client closes stdin (or SIGINT/SIGTERM); resolves after everything is closed. */
export async function runStdioServer(config: Config, options: StdioServerOptions = {}): Promise<void> {
  const stdout = options.stdout ?? reserveStdout();
  const stdin = options.stdin ?? process.stdin;
  const log = options.logger ?? createLogger({ pretty: false });
  const stop = stopSignals(stdin);
  const start = embeddedStart(config);
  let db: Database | undefined;
  let services: BackgroundService[] = [];
  try {
    if (start.starts) startReaper(config, log);
    db = await openDatabase(config, { max: 10, applicationName: 'docdex-mcp' });
    announceDatabase(log, config, db, start);
    if (stop.signal.aborted) return;
    const open = db;
    await serve(db, config, log, { stdin, stdout, projectDir: options.projectDir ?? process.cwd() }, stop.signal, async () => {
      services = await startServices(open, config, log, options.services ?? []);
    });
  } finally {
    stop.dispose();
    await Promise.allSettled(services.map((s) => s.stop()));
    await db?.close();
    if (start.starts) await stopOwnEmbedded(config, log);
  }
}
