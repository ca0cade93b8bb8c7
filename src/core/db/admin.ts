import type { Config } from '../config.js';
import { UserError } from '../errors.js';
import { createPool, resolveConnection } from './connect.js';
import { embeddedClients, embeddedStatus, startEmbeddedPostgres, stopEmbeddedPostgres } from './embedded.js';
import type { EmbeddedStatus } from './embedded.js';
import { currentMigrationVersion, latestMigrationId } from './migrate.js';

export type DatabaseStatus =
  | (EmbeddedStatus & { schemaVersion: number | null; latestVersion: number })
  | { mode: 'external'; database: string; reachable: boolean; error?: string; serverVersion: string | null; schemaVersion: number | null; latestVersion: number };

export async function databaseStatus(config: Config): Promise<DatabaseStatus> {
  const latestVersion = latestMigrationId();
  if (config.database.mode === 'embedded') {
    const status = embeddedStatus(config.home);
    let schemaVersion: number | null = null;
    if (status.running) {
      const info = await resolveConnection(config);
      const pool = createPool(info, { max: 1 });
      try {
        schemaVersion = await currentMigrationVersion(pool);
      } catch {
        schemaVersion = null;
      } finally {
        await pool.end();
      }
    }
    return { ...status, schemaVersion, latestVersion };
  }
  const info = await resolveConnection(config);
  const pool = createPool(info, { max: 1 });
  try {
    const version = await pool.query<{ server_version: string }>('SHOW server_version');
    return {
      mode: 'external',
      database: info.display,
      reachable: true,
      serverVersion: version.rows[0]?.server_version ?? null,
      schemaVersion: await currentMigrationVersion(pool),
      latestVersion,
    };
  } catch (error) {
    return { mode: 'external', database: info.display, reachable: false, error: (error as Error).message, serverVersion: null, schemaVersion: null, latestVersion };
  } finally {
    await pool.end();
  }
}

function requireEmbedded(config: Config, action: string): void {
  if (config.database.mode !== 'embedded') {
    throw new UserError(`docdex uses an external database (DATABASE_URL or DB_HOST is set), so there is no embedded server to ${action}.`, {
      hint: 'Unset DATABASE_URL and DB_HOST to use the embedded database.',
    });
  }
}

export async function startDatabase(config: Config): Promise<EmbeddedStatus> {
  requireEmbedded(config, 'start');
  await startEmbeddedPostgres(config.home);
  return embeddedStatus(config.home);
}

/** `cutOff`: the docdex processes (`docdex-serve`, ...) that were using the server and now cannot reach it. */
export async function stopDatabase(config: Config): Promise<EmbeddedStatus & { wasRunning: boolean; cutOff: string[] }> {
  requireEmbedded(config, 'stop');
  const cutOff = await embeddedClients(config.home);
  const result = await stopEmbeddedPostgres(config.home);
  if (!result.stopped) throw new UserError('The embedded PostgreSQL server did not stop within 30 seconds.', { hint: `Check ${config.home}/postgres.log.` });
  return { ...embeddedStatus(config.home), wasRunning: result.wasRunning, cutOff };
}
