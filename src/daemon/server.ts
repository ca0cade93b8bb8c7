import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { assertAuthConfigured, configForBind } from '../core/config.js';
import type { Config } from '../core/config.js';
import { openDatabase } from '../core/db/connect.js';
import { superviseEmbeddedPostgres } from '../core/db/embedded-supervisor.js';
import type { EmbeddedSupervisor, SupervisorEvent } from '../core/db/embedded-supervisor.js';
import type { Database } from '../core/db/connect.js';
import { UserError } from '../core/errors.js';
import { limitSearches, refuseWaitingSearches } from '../core/search/shared.js';
import { buildApp } from './app.js';
import type { RouteModule } from './deps.js';
import { EventsHub } from './events-hub.js';

/** Something the daemon runs beside HTTP (pg-boss workers, the agent supervisor) and stops on shutdown. */
export interface BackgroundService {
  name: string;
  stop(): Promise<void>;
}

/** Starts a service that always runs once started (the pg-boss workers). */
export type RequiredServiceStarter = (db: Database, config: Config, log: Logger) => Promise<BackgroundService>;
/** Starts a service; null when it decided not to run (the agent manager when nobody asked for it). */
export type ServiceStarter = (db: Database, config: Config, log: Logger) => Promise<BackgroundService | null>;

export interface DaemonHandle {
  app: FastifyInstance;
  db: Database;
  url: string;
  /** Graceful: stop accepting, finish in-flight requests and current pages (bounded), close the pool. */
  close(): Promise<void>;
}

export function packageVersion(): string {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
  return (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
}

export interface DaemonOptions {
  host?: string;
  port?: number;
  routes: RouteModule[];
  services?: ServiceStarter[];
  logger: Logger;
  /** Upper bound for the graceful part of shutdown before connections are cut. */
  shutdownTimeoutMs?: number;
}

/** Logs the embedded database supervisor's events: each restart attempt and its result. */
function logSupervisorEvent(log: Logger, event: SupervisorEvent): void {
  if (event.type === 'restarted' || event.type === 'log-rotated') log.info({ event }, 'embedded PostgreSQL supervisor');
  else log.warn({ event }, 'embedded PostgreSQL supervisor');
}

/** The embedded server is restarted when it crashes while the daemon runs; an external one is not ours to start. */
function superviseDatabase(db: Database, config: Config, log: Logger): EmbeddedSupervisor | null {
  if (db.info.mode !== 'embedded') return null;
  return superviseEmbeddedPostgres(config.home, { onEvent: (event) => logSupervisorEvent(log, event) });
}

/** A bind failure a user can fix, said in their words; anything else is returned as it is. */
export function listenError(error: unknown, host: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const hint = 'Pick another port with --port or API_PORT, or stop what is listening there.';
  if (code === 'EADDRINUSE') return new UserError(`port ${port} is in use on ${host}.`, { code: 'port_in_use', hint, cause: error });
  if (code === 'EACCES') return new UserError(`port ${port} on ${host} needs privileges this user does not have.`, { code: 'port_denied', hint, cause: error });
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    return new UserError(`cannot bind to ${host}: no such local address.`, { code: 'bad_host', hint: 'Use --host or API_HOST with an address of this machine, e.g. 127.0.0.1.', cause: error });
  }
  return error;
}

/** Starts each service in order; on a failure stops those already started and rethrows. */
async function startServices(starters: ServiceStarter[], db: Database, config: Config, log: Logger, into: BackgroundService[]): Promise<void> {
  try {
    for (const start of starters) {
      const service = await start(db, config, log);
      if (service) into.push(service);
    }
  } catch (error) {
    await Promise.allSettled(into.map((s) => s.stop()));
    throw error;
  }
}

export async function startDaemon(configured: Config, options: DaemonOptions): Promise<DaemonHandle> {
  // `serve --host` decides the bind, and with it the auth default and the Host check's own names.
  const config = configForBind(configured, options.host ?? configured.api.host);
  assertAuthConfigured(config);
  const log = options.logger;
  const db = await openDatabase(config, { max: 20, applicationName: 'docdex-serve' });
  limitSearches(db.pool, config.api.searchConcurrency);
  const hub = new EventsHub(db.info, log);
  await hub.start();
  const supervisor = superviseDatabase(db, config, log);
  const services: BackgroundService[] = [];
  const app = await buildApp({ db, config, hub, version: packageVersion(), workers: () => ({ running: services.length > 0, kinds: services.map((s) => s.name) }) }, options.routes, { logger: log });
  const host = config.api.host;
  const port = options.port ?? config.api.port;
  const release = async () => {
    await app.close();
    await hub.stop();
    await supervisor?.stop();
    await db.close();
  };
  let address: string;
  try {
    address = await app.listen({ host, port });
  } catch (error) {
    await release();
    throw listenError(error, host, port);
  }
  // Only once the port is ours: a daemon that cannot bind starts no worker and provisions nothing.
  await startServices(options.services ?? [], db, config, log, services).catch(async (error: unknown) => {
    await release();
    throw error;
  });
  let closing: Promise<void> | undefined;
  return {
    app,
    db,
    url: address,
    close() {
      closing ??= (async () => {
        const timeout = options.shutdownTimeoutMs ?? 20_000;
        const bounded = <T>(p: Promise<T>) => Promise.race([p, new Promise<void>((r) => setTimeout(r, timeout).unref())]);
        // Workers first: the current page of each crawl finishes and its pg-boss job is released, while
        // HTTP keeps answering; then HTTP stops accepting and drains in-flight requests.
        await bounded(Promise.allSettled(services.map((s) => s.stop())));
        await bounded(app.close());
        // Requests still waiting for a search slot when the bound ran out get a 503, not a closed pool's error.
        refuseWaitingSearches(db.pool, new UserError('docdex serve is shutting down.', { code: 'unavailable', hint: 'Retry once it is running again.' }));
        await hub.stop();
        await supervisor?.stop();
        await db.close();
      })();
      return closing;
    },
  };
}
