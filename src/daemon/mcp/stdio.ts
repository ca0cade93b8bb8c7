import { Writable } from 'node:stream';
import type { Readable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Logger } from 'pino';
import type { Config } from '../../core/config.js';
import { openDatabase } from '../../core/db/connect.js';
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

/** Runs until the client closes stdin (or SIGINT/SIGTERM); resolves after everything is closed. */
export async function runStdioServer(config: Config, options: StdioServerOptions = {}): Promise<void> {
  const stdout = options.stdout ?? reserveStdout();
  const stdin = options.stdin ?? process.stdin;
  const log = options.logger ?? createLogger({ pretty: false });

  const db = await openDatabase(config, { max: 10, applicationName: 'docdex-mcp' });
  // An MCP client may start docdex with no environment at all: say which home and database this is, so a
  // second, empty index (the default home) is noticed at once.
  log.info({ home: config.home, database: db.info.display, mode: db.info.mode }, `docdex MCP server: DOCDEX_HOME ${config.home}, ${db.info.mode} database ${db.info.display}`);
  const services: BackgroundService[] = [];
  try {
    for (const start of options.services ?? []) {
      const service = await start(db, config, log);
      if (service) services.push(service);
    }
  } catch (error) {
    await Promise.allSettled(services.map((s) => s.stop()));
    await db.close();
    throw error;
  }

  const { server } = createDocdexMcpServer({
    pool: db.pool,
    info: db.info,
    config,
    onError: (error, context) => log.error({ err: error, tool: context.tool }, 'MCP tool failed'),
    // The client starts the server in the project it works on: the project tools default to it.
    localProjectDir: options.projectDir ?? process.cwd(),
  });
  const transport = new StdioServerTransport(stdin, stdout);
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
  stdin.once('end', shutdown);
  stdin.once('close', shutdown);
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
  log.info({ database: db.info.display }, 'docdex MCP server ready on stdio');

  try {
    await closed;
  } finally {
    process.off('SIGINT', shutdown);
    process.off('SIGTERM', shutdown);
    await Promise.allSettled(services.map((s) => s.stop()));
    await db.close();
  }
}
