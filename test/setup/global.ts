import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { ensureEmbeddedPostgres } from '../../src/core/db/embedded.js';
import { listMigrations, migrate } from '../../src/core/db/migrate.js';
import { createPool } from '../../src/core/db/connect.js';
import { installBossSchema } from '../../src/core/queue/boss.js';

/**
 * One real PostgreSQL for the whole run: TEST_DATABASE_URL when given (a server where we may create
 * databases), otherwise an embedded cluster in the temp directory, started by docdex's own embedded code.
 * A template database is migrated once per migration set; every test file clones it (CREATE DATABASE ...
 * TEMPLATE), which takes milliseconds.
 */
declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  let adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    const home = path.join(os.tmpdir(), `docdex-test-pg-${process.getuid?.() ?? 0}`);
    // Over its unix socket when it has one (the host is then the socket's directory, escaped in the URL).
    const c = await ensureEmbeddedPostgres(home);
    adminUrl = `postgres://${encodeURIComponent(c.user)}:${encodeURIComponent(c.password)}@${encodeURIComponent(c.host)}:${c.port}/postgres`;
  }
  const digest = createHash('sha256');
  for (const m of listMigrations()) digest.update(m.name).update(m.sql);
  const template = `docdex_tpl_${digest.digest('hex').slice(0, 12)}`;

  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    // Serialise concurrent test runs building the same template.
    await admin.query('SELECT pg_advisory_lock(74210001)');
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
    if (exists.rowCount === 0) {
      const building = `${template}_building`;
      await admin.query(`DROP DATABASE IF EXISTS ${building}`);
      await admin.query(`CREATE DATABASE ${building}`);
      const url = new URL(adminUrl);
      url.pathname = `/${building}`;
      const info = { mode: 'external' as const, config: { connectionString: url.toString() }, display: building };
      const pool = createPool(info, { max: 2 });
      try {
        await migrate(pool);
        await installBossSchema(info);
      } finally {
        await pool.end();
      }
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${template}`);
    }
    await admin.query('SELECT pg_advisory_unlock(74210001)');
  } finally {
    await admin.end();
  }
  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgTemplate', template);
}
