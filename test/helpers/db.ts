import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import type { Config } from '../../src/core/config.js';
import { createPool } from '../../src/core/db/connect.js';
import type { ConnectionInfo } from '../../src/core/db/connect.js';

export interface TestDatabase {
  name: string;
  url: string;
  info: ConnectionInfo;
  pool: pg.Pool;
  /** A docdex Config pointing at this database, with CRAWL_DELAY=0, CRAWL_ALLOW_HOSTS=127.0.0.1 and a private DOCDEX_HOME. */
  config: Config;
  /** Environment for spawning the real binary against this database. */
  env: NodeJS.ProcessEnv;
  home: string;
  drop(): Promise<void>;
}

/**
 * A fresh database cloned from the migrated template (schema and pg-boss installed), or from `template`: a
 * database of the same cluster that nothing is connected to (an indexed corpus, test/helpers/corpus-db.ts).
 */
export async function createTestDatabase(extraEnv: Record<string, string> = {}, template = inject('pgTemplate')): Promise<TestDatabase> {
  const adminUrl = inject('pgAdminUrl');
  const name = `docdex_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const home = mkdtempSync(path.join(os.tmpdir(), 'docdex-test-home-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: url.toString(),
    DOCDEX_HOME: home,
    CRAWL_DELAY: '0',
    NO_COLOR: '1',
    // Test sites listen on 127.0.0.1 and many tests crawl them over REST and MCP, which the outbound policy
    // keeps off loopback unless it is listed. Tests of the policy itself pass their own (or an empty) list.
    CRAWL_ALLOW_HOSTS: '127.0.0.1',
    ...extraEnv,
  };
  delete env.DB_HOST;
  const info: ConnectionInfo = { mode: 'external', config: { connectionString: url.toString() }, display: name };
  const pool = createPool(info, { max: 5 });
  const config = loadConfig(env);
  return {
    name,
    url: url.toString(),
    info,
    pool,
    config,
    env,
    home,
    async drop() {
      await pool.end().catch(() => undefined);
      const a = new pg.Client({ connectionString: adminUrl });
      await a.connect();
      try {
        await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await a.end();
      }
      rmSync(home, { recursive: true, force: true });
    },
  };
}
