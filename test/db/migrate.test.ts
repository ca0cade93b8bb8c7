import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { initDatabase } from '../../src/core/init.js';
import { createPool } from '../../src/core/db/connect.js';
import { currentMigrationVersion, latestMigrationId, listMigrations, migrate } from '../../src/core/db/migrate.js';
import { isUserError } from '../../src/core/errors.js';
import type { UserError } from '../../src/core/errors.js';
import { refreshSearchTermsNow } from '../../src/core/search/lexicon.js';
import { runCli } from '../helpers/cli.js';
import { createSource } from '../search/fixtures.js';
import type { FixtureSource } from '../search/fixtures.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

async function emptyDatabase(): Promise<{ pool: pg.Pool; url: string; drop: () => Promise<void> }> {
  const adminUrl = inject('pgAdminUrl');
  const name = `docdex_m_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const pool = createPool({ mode: 'external', config: { connectionString: url.toString() }, display: name }, { max: 6 });
  return {
    pool,
    url: url.toString(),
    drop: async () => {
      await pool.end();
      const a = new pg.Client({ connectionString: adminUrl });
      await a.connect();
      await a.query(`DROP DATABASE ${name} WITH (FORCE)`);
      await a.end();
    },
  };
}

describe('migrations', () => {
  it('installs on an empty database, then re-running is a no-op', async () => {
    const db = await emptyDatabase();
    try {
      expect(await currentMigrationVersion(db.pool)).toBe(0);
      const first = await migrate(db.pool);
      expect(first.applied.length).toBe(latestMigrationId());
      expect(first.version).toBe(latestMigrationId());
      const second = await migrate(db.pool);
      expect(second.applied).toEqual([]);
      const tables = await db.pool.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'docdex' ORDER BY 1");
      expect(tables.rows.map((r) => r.table_name)).toEqual(expect.arrayContaining(['sources', 'crawl_jobs', 'crawl_frontier', 'upload_jobs', 'documents', 'snippets', 'migrations']));
    } finally {
      await db.drop();
    }
  });

  it('lets concurrent runners race safely: each migration is applied exactly once', async () => {
    const db = await emptyDatabase();
    try {
      const results = await Promise.all([migrate(db.pool), migrate(db.pool), migrate(db.pool)]);
      const applied = results.flatMap((r) => r.applied);
      expect(applied.sort()).toEqual(results.find((r) => r.applied.length > 0)!.applied.sort());
      expect(results.filter((r) => r.applied.length > 0)).toHaveLength(1);
      const rows = await db.pool.query('SELECT count(*)::int AS n FROM docdex.migrations');
      expect(rows.rows[0].n).toBe(latestMigrationId());
    } finally {
      await db.drop();
    }
  });

  it('keeps the weighted search vector in the database', async () => {
    const db = await emptyDatabase();
    try {
      await migrate(db.pool);
      const src = await db.pool.query<{ id: string }>("INSERT INTO sources (name) VALUES ('lib') RETURNING id");
      const job = await db.pool.query<{ id: string }>("INSERT INTO crawl_jobs (source_id, name, start_urls) VALUES ($1, 'lib', '{http://x}') RETURNING id", [src.rows[0]!.id]);
      const doc = await db.pool.query<{ id: string }>("INSERT INTO documents (source_id, url, content_hash, source_type, crawl_job_id) VALUES ($1, 'http://x/a', 'h', 'crawled', $2) RETURNING id", [
        src.rows[0]!.id,
        job.rows[0]!.id,
      ]);
      await db.pool.query(
        "INSERT INTO snippets (source_id, document_id, title, description, code, code_hash, source_url) VALUES ($1, $2, 'Reading files', 'Open a file', 'data = json.dumps(readFileSync(p))', 'c', 'http://x/a')",
        [src.rows[0]!.id, doc.rows[0]!.id],
      );
      const match = async (q: string) => (await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM snippets WHERE search_vector @@ plainto_tsquery('english', $1)", [q])).rows[0]!.n;
      for (const q of ['reading', 'open file', 'json.dumps', 'dumps', 'readFileSync', 'read file sync']) expect(await match(q), q).toBe(1);
      expect(await match('nonexistentword')).toBe(0);
      // The document CHECK: a crawled document must name its crawl job and no upload job.
      await expect(db.pool.query("INSERT INTO documents (source_id, url, content_hash, source_type) VALUES ($1, 'http://x/b', 'h', 'crawled')", [src.rows[0]!.id])).rejects.toThrow(
        /documents_one_job/,
      );
    } finally {
      await db.drop();
    }
  });

  it('names the extension a migration needs when the database user may not create it, and resumes once it exists', async () => {
    const db = await emptyDatabase();
    const adminUrl = inject('pgAdminUrl');
    const role = `docdex_r_${Math.random().toString(36).slice(2, 10)}`;
    const dbName = new URL(db.url).pathname.slice(1);
    const inDb = new URL(db.url);
    // The admin prepares what a cautious DBA would: docdex's schema owned by its user and pg_trgm, but no
    // CREATE on the database, so the user cannot create btree_gin itself (migration 016).
    const admin = new pg.Client({ connectionString: inDb.toString() });
    await admin.connect();
    const asRole = new URL(db.url);
    asRole.username = role;
    asRole.password = 'pw-for-test';
    const pool = createPool({ mode: 'external', config: { connectionString: asRole.toString() }, display: dbName }, { max: 2 });
    try {
      await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'pw-for-test'`);
      await admin.query(`REVOKE CREATE ON DATABASE ${dbName} FROM PUBLIC`);
      await admin.query(`CREATE SCHEMA docdex AUTHORIZATION ${role}`);
      await admin.query('CREATE EXTENSION pg_trgm WITH SCHEMA public');

      const error = await migrate(pool).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isUserError(error), String(error)).toBe(true);
      expect((error as Error).message).toMatch(/^Updating the database schema \(016_search_index_with_language\) needs the PostgreSQL extension btree_gin: permission denied/);
      expect((error as UserError).options.hint).toContain('CREATE EXTENSION IF NOT EXISTS btree_gin WITH SCHEMA public;');
      // Everything before 016 is kept, and 016 left nothing behind.
      expect(await currentMigrationVersion(pool)).toBe(15);
      const idx = await admin.query<{ def: string }>(`SELECT pg_get_indexdef('docdex.snippets_search'::regclass) AS def`);
      expect(idx.rows[0]!.def).toMatch(/USING gin \(search_vector\)/);

      await admin.query('CREATE EXTENSION btree_gin WITH SCHEMA public');
      // The next command the user runs updates the schema, and says so first (the update rebuilds an index,
      // about a minute at a million snippets); once up to date, nothing more is said.
      const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: asRole.toString(), NO_COLOR: '1' };
      delete env.DB_HOST;
      const pending = listMigrations()
        .filter((m) => m.id > 15)
        .map((m) => m.name);
      const first = await runCli(['sources', 'list', '--json'], { env });
      expect(first.exitCode, String(first.stderr)).toBe(0);
      expect(String(first.stderr)).toContain(`Updating the database schema (${pending.join(', ')}); on a large index this can take a minute.`);
      expect(JSON.parse(String(first.stdout))).toMatchObject({ items: [], total: 0 });
      expect(await currentMigrationVersion(pool)).toBe(latestMigrationId());
      const second = await runCli(['sources', 'list', '--json'], { env });
      expect(second.exitCode, String(second.stderr)).toBe(0);
      expect(String(second.stderr)).not.toContain('Updating the database schema');
    } finally {
      await pool.end();
      await admin.end();
      await db.drop();
      const a = new pg.Client({ connectionString: adminUrl });
      await a.connect();
      await a.query(`DROP ROLE IF EXISTS ${role}`);
      await a.end();
    }
  });
});

/** Applies the migrations up to and including `last`, as `migrate` does. */
async function migrateUpTo(pool: pg.Pool, last: number): Promise<void> {
  await pool.query('CREATE SCHEMA docdex');
  await pool.query('CREATE TABLE docdex.migrations (id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
  for (const m of listMigrations().filter((x) => x.id <= last)) {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL search_path = docdex, public');
      await client.query(m.sql);
      await client.query('INSERT INTO docdex.migrations (id, name) VALUES ($1, $2)', [m.id, m.name]);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
  }
}

/**
 * A page and its snippets as an index of that age held them: written in SQL with the columns every migration
 * up to 029 has, not through today's page store, whose writes name columns later migrations add (037's page
 * flags, 038's snippet kind).
 */
async function addOldPage(pool: pg.Pool, source: FixtureSource, url: string, snippets: { title: string; code: string }[], options: { markdown?: string } = {}): Promise<void> {
  const markdown = options.markdown ?? snippets.map((s) => `## ${s.title}\n\n\`\`\`\n${s.code}\n\`\`\``).join('\n\n');
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO documents (source_id, url, title, markdown, content_hash, source_type, crawl_job_id)
     VALUES ($1, $2, $3, $4, md5($4), 'crawled', $5) RETURNING id`,
    [source.id, url, snippets[0]?.title ?? url, markdown, source.jobId],
  );
  for (const [position, s] of snippets.entries()) {
    await pool.query(`INSERT INTO snippets (source_id, document_id, title, code, code_hash, source_url, position) VALUES ($1, $2, $3, $4, md5($4), $5, $6)`, [
      source.id,
      rows[0]!.id,
      s.title,
      s.code,
      url,
      position,
    ]);
  }
}

interface LexiconRow {
  term: string;
  doc_count: number;
  code_count: number;
}

async function lexiconRows(pool: pg.Pool): Promise<LexiconRow[]> {
  return (await pool.query<LexiconRow>('SELECT term, doc_count, code_count FROM search_terms ORDER BY term')).rows;
}

/** The lexicon counted afresh from the stored snippets: what the kept one must equal. */
async function countedLexiconRows(pool: pg.Pool): Promise<LexiconRow[]> {
  const { rows } = await pool.query<LexiconRow>(
    `SELECT w AS term, count(*)::int AS doc_count, count(*) FILTER (WHERE w IN (SELECT search_vector_terms(ts_filter(s.search_vector, '{c}'))))::int AS code_count
       FROM snippets s, LATERAL search_vector_terms(s.search_vector) AS w GROUP BY w ORDER BY w`,
  );
  return rows;
}

describe('lexicon code counts (030) on an index that predates them', () => {
  it('counts the stored code once, and folds in the changes queued before the update exactly', async () => {
    const db = await emptyDatabase();
    try {
      await migrateUpTo(db.pool, 29);
      const source = await createSource(db.pool, 'upgrade');
      await addOldPage(db.pool, source, 'https://upgrade.example/a.html', [
        { title: 'Gathering results', code: 'results = await asyncio.gather(first(), second())' },
        { title: 'Sleeping a while', code: 'await asyncio.sleep(1)' },
        { title: 'Walrus tusks', code: 'walrus_count = 2' },
      ]);
      // Queued before the update, without code words: a change of code and a deletion; and a new snippet
      // written past the page store, queued to be counted whole.
      await db.pool.query("UPDATE snippets SET code = 'await asyncio.wait_for(nap(), 5)' WHERE title = 'Sleeping a while'");
      await db.pool.query("DELETE FROM snippets WHERE title = 'Walrus tusks'");
      await db.pool.query(
        `WITH d AS (INSERT INTO documents (source_id, url, title, markdown, content_hash, source_type, crawl_job_id)
                    VALUES ($1, 'https://upgrade.example/b.html', 'b', 'b', md5('b'), 'crawled', $2) RETURNING id)
         INSERT INTO snippets (source_id, document_id, title, code, code_hash, source_url)
         SELECT $1, d.id, 'Narwhal', 'asyncio.run(narwhal())', md5('narwhal'), 'https://upgrade.example/b.html' FROM d`,
        [source.id, source.jobId],
      );
      expect(Number((await db.pool.query('SELECT count(*) AS n FROM search_terms_queue')).rows[0].n)).toBeGreaterThan(0);

      await migrate(db.pool);
      await refreshSearchTermsNow(db.pool);
      const lexicon = await lexiconRows(db.pool);
      expect(lexicon).toEqual(await countedLexiconRows(db.pool));
      const byTerm = new Map(lexicon.map((r) => [r.term, r]));
      expect(byTerm.get('asyncio')).toMatchObject({ doc_count: 3, code_count: 3 });
      expect(byTerm.get('narwhal')).toMatchObject({ doc_count: 1, code_count: 1 });
      expect(byTerm.get('sleep')).toMatchObject({ doc_count: 1, code_count: 0 });
      expect(byTerm.has('walrus')).toBe(false);
    } finally {
      await db.drop();
    }
  });
});

describe('identifier parts in page text (031) on an index that predates them', () => {
  it('recomputes the stored pages, which are then found by the words of their identifiers', async () => {
    const db = await emptyDatabase();
    try {
      await migrateUpTo(db.pool, 30);
      const source = await createSource(db.pool, 'upgrade');
      await addOldPage(db.pool, source, 'https://upgrade.example/timers.html', [{ title: 'Timers', code: 'controller.cancel()' }], {
        markdown: '# Timers\n\nStatic method AbortSignal.timeout(ms) fires later.',
      });
      const found = "SELECT count(*)::int AS n FROM documents WHERE search_vector @@ to_tsquery('english', 'abort & signal & timeout')";
      expect((await db.pool.query<{ n: number }>(found)).rows[0]!.n).toBe(0);
      await migrate(db.pool);
      expect((await db.pool.query<{ n: number }>(found)).rows[0]!.n).toBe(1);
      const whole = "SELECT count(*)::int AS n FROM documents WHERE search_vector @@ to_tsquery('english', 'abortsignal.timeout & later')";
      expect((await db.pool.query<{ n: number }>(whole)).rows[0]!.n).toBe(1);
    } finally {
      await db.drop();
    }
  });
});

describe('identifier parts in snippet titles (032) on an index that predates them', () => {
  it('recomputes the stored snippets and counts the lexicon again from them', async () => {
    const db = await emptyDatabase();
    try {
      await migrateUpTo(db.pool, 31);
      const source = await createSource(db.pool, 'upgrade');
      await addOldPage(db.pool, source, 'https://upgrade.example/url.html', [
        { title: 'url.searchParams | URL', code: 'u.sort()' },
        { title: 'Sorting', code: 'items.sort()' },
      ]);
      // Queued before the update: a change not yet folded into the lexicon.
      await db.pool.query("UPDATE snippets SET code = 'items.reverse()' WHERE title = 'Sorting'");
      const found = "SELECT count(*)::int AS n FROM snippets WHERE search_vector @@ to_tsquery('english', 'search:A & param:A')";
      expect((await db.pool.query<{ n: number }>(found)).rows[0]!.n).toBe(0);

      await migrate(db.pool);
      expect((await db.pool.query<{ n: number }>(found)).rows[0]!.n).toBe(1);
      const whole = "SELECT count(*)::int AS n FROM snippets WHERE search_vector @@ to_tsquery('english', 'url.searchparams:A')";
      expect((await db.pool.query<{ n: number }>(whole)).rows[0]!.n).toBe(1);
      await refreshSearchTermsNow(db.pool);
      const lexicon = await lexiconRows(db.pool);
      expect(lexicon).toEqual(await countedLexiconRows(db.pool));
      expect(lexicon.find((r) => r.term === 'param')).toMatchObject({ doc_count: 1, code_count: 0 });
    } finally {
      await db.drop();
    }
  });
});

describe('init --drop', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it('empties every table and recreates the schema', async () => {
    // The state of a freshly migrated database: a few tables hold singleton rows seeded by their migration.
    const fresh = await createTestDatabase();
    const freshCounts = new Map<string, number>();
    try {
      const names = await fresh.pool.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'docdex' AND table_type = 'BASE TABLE' AND table_name <> 'migrations'",
      );
      for (const { table_name } of names.rows) {
        freshCounts.set(table_name, (await fresh.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM docdex.${table_name}`)).rows[0]!.n);
      }
    } finally {
      await fresh.drop();
    }
    await db.pool.query("INSERT INTO sources (name) VALUES ('a'), ('b')");
    const result = await initDatabase(db.config, { drop: true });
    expect(result.dropped).toBe(true);
    expect(result.version).toBe(latestMigrationId());
    expect(freshCounts.size).toBeGreaterThan(5);
    for (const [table, expected] of freshCounts) {
      const count = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM docdex.${table}`);
      expect(count.rows[0]!.n, table).toBe(expected);
    }
    expect(freshCounts.get('sources')).toBe(0);
    const boss = await db.pool.query("SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'pgboss'");
    expect(boss.rows[0].n).toBeGreaterThan(0);
  });
});
