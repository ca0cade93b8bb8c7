import type { FastifyInstance } from 'fastify';
import type { Config } from '../core/config.js';
import type { Database } from '../core/db/connect.js';
import type { EventsHub } from './events-hub.js';

// What every route module is given, and the shape of one: apart from app.ts, which builds the app from them, so
// that the routes and the access control they sit behind do not import the module that imports them.

export interface DaemonDeps {
  db: Database;
  config: Config;
  hub: EventsHub;
  /** Reports the daemon's own worker state for /health. */
  workers: () => { running: boolean; kinds: string[] };
  version: string;
}

export type RouteModule = (app: FastifyInstance, deps: DaemonDeps) => void | Promise<void>;
