import path from 'node:path';
import pg from 'pg';
import type { Config } from '../config.js';
import { UserError } from '../errors.js';
import { ensureEmbeddedPostgres } from './embedded.js';
import { SCHEMA, currentMigrationVersion, latestMigrationId, migrate } from './migrate.js';
import { announceSchemaUpdate } from './schema-update.js';

// bigint ids and counts come back as strings by default; docdex's ids fit comfortably in a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export const BOSS_SCHEMA = 'pgboss';

export interface ConnectionInfo {
  mode: 'embedded' | 'external';
  config: pg.PoolConfig;
  /** host:port/database, never with a password: safe to print. */
  display: string;
}

function decodedHost(host: string): string {
  try {
    return decodeURIComponent(host);
  } catch {
    return host;
  }
}

/** Resolves where the database is, starting the embedded server when no external one is configured. */
export async function resolveConnection(config: Config): Promise<ConnectionInfo> {
  const db = config.database;
  if (db.mode === 'external') {
    if (db.connectionString) {
      const url = new URL(db.connectionString);
      return {
        mode: 'external',
        config: { connectionString: db.connectionString },
        // A socket directory as the host is percent-encoded (postgres://u@%2Fvar%2Frun%2Fpostgresql/db).
        display: `${decodedHost(url.hostname)}:${url.port || 5432}${url.pathname}`,
      };
    }
    return {
      mode: 'external',
      config: {
        host: db.host,
        port: db.port,
        database: db.database,
        ...(db.user === undefined ? {} : { user: db.user }),
        ...(db.password === undefined ? {} : { password: db.password }),
      },
      display: `${db.host}:${db.port}/${db.database}`,
    };
  }
  const embedded = await ensureEmbeddedPostgres(config.home);
  const where = embedded.host.startsWith('/') ? path.join(embedded.host, `.s.PGSQL.${embedded.port}`) : `${embedded.host}:${embedded.port}`;
  return { mode: 'embedded', config: embedded, display: `${where}/${embedded.database}` };
}

export interface Database {
  pool: pg.Pool;
  info: ConnectionInfo;
  close(): Promise<void>;
}

/**
 * Settings of every docdex connection that writes pages. The search indexes' pending lists (migrations 012, 013,
 * 039) hold 512 kB of new entries before the writer that fills one merges it in: small, because every search
 * reads the whole list, and not smaller, because each merge re-encodes the common words' posting lists. A
 * session setting rather than an index option, so that a pack import can merge a whole library once
 * (core/pack/install.ts).
 */
export const WRITER_SETTINGS = '-c gin_pending_list_limit=512kB';

export function createPool(info: ConnectionInfo, options: { max?: number; applicationName?: string } = {}): pg.Pool {
  const pool = new pg.Pool({
    ...info.config,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'docdex',
    // Named statements (search, page writes) are planned for each execution's values: a plan made once for any
    // values cannot tell a common word from a rare one, so it chose badly for two-word searches at a million
    // snippets (search.ts: the plan depends on how common the terms are). Sequential scans start at the
    // table's first block: synchronised with other scans, a search reading rows in table order until its
    // candidate cap is met started wherever the last scan had got to, and the same query gave other answers.
    options: `-c search_path=${SCHEMA},public -c plan_cache_mode=force_custom_plan -c synchronize_seqscans=off ${WRITER_SETTINGS}`,
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 10_000,
  });
  // An idle client losing its connection (server restart) must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  // Nor may a client that is checked out: pg emits 'error' on it as well as rejecting its queries, and the pool
  // listens only while the client is idle. The rejected query is the report; the pool drops the broken client
  // when it is released.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/**
 * Opens the database for a command: resolves (and if needed starts) the server, and brings the schema up to
 * date so that any command works on a fresh machine without `docdex init`.
 */
export async function openDatabase(config: Config, options: { max?: number; applicationName?: string; migrate?: boolean } = {}): Promise<Database> {
  const info = await resolveConnection(config);
  const pool = createPool(info, options);
  try {
    // Always touches the server, so an unreachable database is reported here with a hint, not mid-command.
    const version = await currentMigrationVersion(pool);
    if (options.migrate !== false && version < latestMigrationId()) {
      announceSchemaUpdate(version);
      await migrate(pool);
    }
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw connectionError(error, info);
  }
  return { pool, info, close: () => pool.end() };
}

export function connectionError(error: unknown, info: ConnectionInfo): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ETIMEDOUT' || code === '28P01' || code === '3D000') {
    const what = code === '28P01' ? 'authentication failed' : code === '3D000' ? 'the database does not exist' : `cannot connect (${code})`;
    return new UserError(`Database ${info.display}: ${what}.`, {
      hint:
        info.mode === 'external'
          ? 'Check DATABASE_URL or DB_HOST/DB_PORT/DB_NAME/DB_USER/DB_PASSWORD, or unset them to use the embedded database.'
          : 'Run `docdex db status` to inspect the embedded database.',
      code: 'database_unavailable',
      cause: error,
    });
  }
  return error;
}
