import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { UserError } from '../errors.js';

/**
 * Numbered, append-only `.sql` migrations, each applied in its own transaction under one advisory lock and
 * recorded in docdex.migrations (after graphile-worker's migrate.ts). Re-running is a no-op and concurrent
 * runners serialise on the lock, then find nothing left to do.
 */

export const SCHEMA = 'docdex';
// An arbitrary constant; it only has to differ from other applications' advisory locks in the same database.
const MIGRATION_LOCK_ID = 7_380_412_001;

export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'migrations');

export interface Migration {
  id: number;
  name: string;
  sql: string;
}

let migrationCache: Migration[] | undefined;

export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  if (dir === MIGRATIONS_DIR && migrationCache) return migrationCache;
  const migrations = readdirSync(dir)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((file) => ({ id: Number(file.slice(0, 3)), name: file.replace(/\.sql$/, ''), sql: readFileSync(path.join(dir, file), 'utf8') }));
  migrations.forEach((m, i) => {
    if (m.id !== i + 1) throw new Error(`Migration numbering has a gap or duplicate at ${m.name}`);
  });
  if (dir === MIGRATIONS_DIR) migrationCache = migrations;
  return migrations;
}

export function latestMigrationId(): number {
  return listMigrations().at(-1)?.id ?? 0;
}

export interface MigrateResult {
  applied: string[];
  version: number;
}

export async function currentMigrationVersion(client: pg.ClientBase | pg.Pool): Promise<number> {
  const exists = await client.query<{ ok: boolean }>(`SELECT to_regclass('${SCHEMA}.migrations') IS NOT NULL AS ok`);
  if (!exists.rows[0]?.ok) return 0;
  const { rows } = await client.query<{ version: number | null }>(`SELECT max(id) AS version FROM ${SCHEMA}.migrations`);
  return rows[0]?.version ?? 0;
}

/**
 * A migration that creates an extension (pg_trgm, btree_gin: both trusted, in PostgreSQL's contrib package) fails
 * on a server of one's own when docdex's user may not create it or the server lacks contrib. That is the
 * server's setup, not a docdex bug, so it gets a message naming the extension and what to do.
 */
function migrationError(name: string, error: unknown): Error {
  const { code, message } = error as { code?: string; message?: string };
  const extension = /extension "([^"]+)"/.exec(message ?? '')?.[1];
  // 42501: permission denied; 58P01 and 0A000: the extension is not installed on the server.
  if (extension !== undefined && (code === '42501' || code === '58P01' || code === '0A000')) {
    return new UserError(`Updating the database schema (${name}) needs the PostgreSQL extension ${extension}: ${message}.`, {
      hint:
        `Have a superuser run \`CREATE EXTENSION IF NOT EXISTS ${extension} WITH SCHEMA public;\` in this database ` +
        "(it ships in PostgreSQL's contrib package), or grant docdex's database user the CREATE privilege on it.",
      code: 'database_extension_unavailable',
      cause: error,
    });
  }
  return new Error(`Migration ${name} failed: ${message}`, { cause: error });
}

export async function migrate(pool: pg.Pool): Promise<MigrateResult> {
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    try {
      // Only when missing: CREATE SCHEMA IF NOT EXISTS checks the CREATE privilege on the database first, which a
      // user given a schema prepared by its DBA does not need and may not have.
      const schema = await client.query<{ ok: boolean }>(`SELECT to_regnamespace('${SCHEMA}') IS NOT NULL AS ok`);
      if (!schema.rows[0]?.ok) await client.query(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${SCHEMA}.migrations (id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
      const done = new Set((await client.query<{ id: number }>(`SELECT id FROM ${SCHEMA}.migrations`)).rows.map((r) => r.id));
      for (const migration of listMigrations()) {
        if (done.has(migration.id)) continue;
        await client.query('BEGIN');
        try {
          await client.query(`SET LOCAL search_path = ${SCHEMA}, public`);
          await client.query(migration.sql);
          await client.query(`INSERT INTO ${SCHEMA}.migrations (id, name) VALUES ($1, $2)`, [migration.id, migration.name]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK');
          throw migrationError(migration.name, error);
        }
        applied.push(migration.name);
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]);
    }
    return { applied, version: await currentMigrationVersion(client) };
  } finally {
    client.release();
  }
}

/** Removes every docdex table and the pg-boss queue schema; `migrate` recreates them. */
export async function dropSchema(pool: pg.Pool, bossSchema: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    try {
      await client.query('BEGIN');
      await client.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
      await client.query(`DROP SCHEMA IF EXISTS ${bossSchema} CASCADE`);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]);
    }
  } finally {
    client.release();
  }
}
