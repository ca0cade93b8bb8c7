import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { ROOT } from './cli.js';
import { createTestDatabase } from './db.js';
import type { TestDatabase } from './db.js';

/**
 * An indexed corpus shared by the test files that read it. Indexing the real documentation takes minutes;
 * several files need the same index (the relevance floors, the pack round trip, the real-world repositories),
 * and each only reads it or works on a copy. So the first file to ask builds it once into a database of the
 * test cluster, and every file gets its own clone (CREATE DATABASE … TEMPLATE, seconds).
 *
 * The template's name carries a digest of the code that builds it (src/, bench/harness/, migrations/) and of
 * what the caller says its input is, so an index built by other code or from another corpus is never reused.
 * What the build returns (source ids, counts) is kept in the template beside the index.
 */
export interface CorpusDatabase<M> {
  db: TestDatabase;
  manifest: M;
}

const CODE_DIRS = ['src', 'bench/harness', 'migrations'];

function codeDigest(): string {
  const digest = createHash('sha256');
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (entry.isFile()) digest.update(path.relative(ROOT, file)).update(readFileSync(file));
    }
  };
  for (const dir of CODE_DIRS) if (statSync(path.join(ROOT, dir), { throwIfNoEntry: false })?.isDirectory()) walk(path.join(ROOT, dir));
  return digest.digest('hex');
}

async function withAdmin<T>(fn: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: inject('pgAdminUrl') });
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.end();
  }
}

/** Builds the template when this cluster lacks it; the caller holds the template's lock. */
async function buildTemplate<M>(admin: pg.Client, template: string, build: (db: TestDatabase) => Promise<M>): Promise<void> {
  const db = await createTestDatabase();
  try {
    const manifest = await build(db);
    await db.pool.query('CREATE TABLE test_corpus_manifest (manifest jsonb NOT NULL)');
    await db.pool.query('INSERT INTO test_corpus_manifest VALUES ($1)', [JSON.stringify(manifest)]);
    await db.pool.end();
    await admin.query(`ALTER DATABASE ${db.name} RENAME TO ${template}`);
  } catch (error) {
    await db.drop();
    throw error;
  }
}

/**
 * A clone of the corpus `kind` built by `build`, with what `build` returned. `input` names what the build
 * reads (the corpus files' fingerprints), so another corpus gets another template.
 */
export async function sharedCorpusDatabase<M>(kind: string, input: string, build: (db: TestDatabase) => Promise<M>, extraEnv: Record<string, string> = {}): Promise<CorpusDatabase<M>> {
  const key = createHash('sha256').update(inject('pgTemplate')).update(codeDigest()).update(input).digest('hex').slice(0, 12);
  const template = `docdex_corpus_${kind.replace(/[^a-z0-9]/g, '_')}_${key}`;
  await withAdmin(async (admin) => {
    // One builder per template across the run's workers; the others wait here, then clone.
    await admin.query('SELECT pg_advisory_lock(hashtext($1))', [template]);
    try {
      const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
      if (exists.rowCount === 0) await buildTemplate(admin, template, build);
    } finally {
      await admin.query('SELECT pg_advisory_unlock(hashtext($1))', [template]);
    }
  });
  const db = await createTestDatabase(extraEnv, template);
  const { rows } = await db.pool.query<{ manifest: M }>('SELECT manifest FROM test_corpus_manifest');
  return { db, manifest: rows[0]!.manifest };
}
