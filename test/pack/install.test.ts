import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnqueue, ensurePageQueue } from '../../src/core/crawl/queue.js';
import { installLibrary } from '../../src/core/pack/install.js';
import { readPack } from '../../src/core/pack/reader.js';
import { createBoss } from '../../src/core/queue/boss.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { addPage, createSource } from '../search/fixtures.js';
import { exportToBuffer, forge, importBuffer, refusal } from './pack-helpers.js';

// What the reader cannot see (a pack whose every hash and count agrees, written by a hostile or buggy exporter)
// the install refuses: the database's own rules, checked set-wise after the COPY, roll the version back.

type Row = Record<string, unknown>;

async function seed(pool: TestDatabase['pool']): Promise<void> {
  for (const name of ['alpha', 'beta']) {
    const source = await createSource(pool, name, '1.0.0');
    await addPage(pool, source, `https://${name}.example/one`, [
      { title: 'First', code: `${name}.first()`, language: 'javascript' },
      { title: 'Second', code: `${name}.second()`, language: 'javascript' },
    ]);
    await addPage(pool, source, `https://${name}.example/two`, [
      { title: 'Third', code: `${name}.third()`, language: 'javascript' },
      { title: 'Second', code: `${name}.second()`, language: 'javascript' },
    ]);
  }
  await pool.query(
    `INSERT INTO snippet_relationships (source_snippet_id, target_snippet_id, relationship_type, description)
     SELECT a.id, b.id, 'followed_by', 'Then the second.' FROM snippets a JOIN snippets b ON a.source_id = b.source_id WHERE a.title = 'First' AND b.title = 'Second'`,
  );
}

async function counts(db: TestDatabase): Promise<Row> {
  const { rows } = await db.pool.query<Row>(
    `SELECT (SELECT count(*)::int FROM sources) AS sources, (SELECT count(*)::int FROM documents) AS documents, (SELECT count(*)::int FROM snippets) AS snippets,
            (SELECT count(*)::int FROM snippet_occurrences) AS occurrences, (SELECT count(*)::int FROM snippet_relationships) AS relationships,
            (SELECT count(*)::int FROM crawl_jobs) AS crawl_jobs, (SELECT count(*)::int FROM upload_jobs) AS upload_jobs, (SELECT count(*)::int FROM search_terms_queue) AS queued`,
  );
  return rows[0]!;
}

describe('installing a pack', () => {
  let from: TestDatabase;
  let to: TestDatabase;
  let alpha: Buffer;
  let both: Buffer;

  beforeAll(async () => {
    [from, to] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    await seed(from.pool);
    alpha = await exportToBuffer(from.pool, ['alpha@1.0.0']);
    both = await exportToBuffer(from.pool, 'all');
  }, 120_000);
  afterAll(async () => {
    await from?.drop();
    await to?.drop();
  });

  it('refuses duplicate hashes and URLs, occurrences and snippets on pages the pack lacks, and dangling relationships, writing nothing', async () => {
    const cases: Array<[string, (l: { documents: Row[]; snippets: Row[] }) => void, RegExp]> = [
      ['duplicate code hash', (l) => (l.snippets[1]!.codeHash = l.snippets[0]!.codeHash), /code hash twice/],
      ['duplicate page URL', (l) => (l.documents[1]!.url = l.documents[0]!.url), /page URL twice/],
      ['snippet on a missing page', (l) => (l.snippets[0]!.documentUrl = 'https://alpha.example/gone'), /page the pack does not have/],
      ['occurrence on a missing page', (l) => (l.snippets[0]!.occurrences = [{ url: 'https://alpha.example/gone', position: 0 }]), /occurrence twice, or on a page/],
      ['dangling relationship', (l) => (l.snippets[0]!.relationships = [{ target: 'f'.repeat(32), type: 'followed_by', description: '' }]), /relationship to a snippet/],
    ];
    const before = await counts(to);
    for (const [name, mutate, message] of cases) {
      const error = await refusal(to, await forge(alpha, (libraries) => mutate(libraries[0]!)));
      expect(error.code, name).toBe('pack_invalid');
      expect(error.message, name).toMatch(message);
      expect(await counts(to), name).toEqual(before);
    }
  }, 120_000);

  it('refuses a NUL character before writing anything, and stores backslashes, tabs, newlines and other control characters as they are', async () => {
    const nul = await refusal(to, await forge(alpha, ([l]) => (l!.snippets[0]!.code = 'a\u0000b')));
    expect(nul.code).toBe('pack_invalid');
    expect(nul.message).toMatch(/code: no NUL characters/);
    const awkward = 'back\\slash \\N \\. tab\there\nnew line\r\ncr \u0001\u001f\u007f \u2028 \u{1F600} end\\';
    const odd = await forge(alpha, ([l]) => {
      l!.documents[0]!.markdown = `# ${awkward}`;
      l!.documents[0]!.title = awkward;
      l!.snippets[0]!.code = awkward;
      l!.snippets[0]!.description = awkward;
      l!.snippets[0]!.relationships = [{ target: l!.snippets[1]!.codeHash, type: 'followed_by', description: awkward }];
    });
    await importBuffer(to, odd, { as: 'odd@1' });
    const { rows } = await to.pool.query<Row>(
      `SELECT d.title, d.markdown, s.code, s.description, r.description AS rel FROM snippets s JOIN documents d ON d.id = s.document_id
         JOIN sources so ON so.id = s.source_id LEFT JOIN snippet_relationships r ON r.source_snippet_id = s.id WHERE so.name = 'odd' AND s.code = $1`,
      [awkward],
    );
    expect(rows).toEqual([{ title: awkward, markdown: `# ${awkward}`, code: awkward, description: awkward, rel: awkward }]);
  }, 120_000);

  it("gives the snippets new ids in the pack's order", async () => {
    const reversed = await forge(alpha, ([l]) => l!.snippets.reverse());
    const packOrder: string[] = [];
    await forge(reversed, ([l]) => packOrder.push(...l!.snippets.map((s) => String(s.codeHash))));
    await importBuffer(to, reversed, { as: 'ordered@1' });
    const { rows } = await to.pool.query<{ code_hash: string }>(`SELECT s.code_hash FROM snippets s JOIN sources so ON so.id = s.source_id WHERE so.name = 'ordered' ORDER BY s.id`);
    expect(rows.map((r) => r.code_hash)).toEqual(packOrder);
  }, 120_000);

  it('checks every library for a conflict before writing any: a conflict on the second writes nothing of the first', async () => {
    const db = await createTestDatabase();
    try {
      const changedBeta = await forge(await exportToBuffer(from.pool, ['beta@1.0.0']), ([l]) => (l!.snippets[0]!.description = 'Changed.'));
      await importBuffer(db, changedBeta);
      const before = await counts(db);
      expect((await refusal(db, both)).code).toBe('pack_conflict');
      expect(await counts(db)).toEqual(before);
      const { rows } = await db.pool.query(`SELECT 1 FROM sources WHERE name = 'alpha'`);
      expect(rows).toEqual([]);
    } finally {
      await db.drop();
    }
  }, 120_000);

  it("--replace takes the replaced source's queued page jobs out of the queue", async () => {
    const db = await createTestDatabase();
    const boss = createBoss(db.info, { max: 2 });
    boss.on('error', () => undefined);
    await boss.start();
    try {
      await importBuffer(db, alpha);
      // A recrawl of the installed version was under way, its pages queued.
      const job = await db.pool.query<{ id: string }>(
        `INSERT INTO crawl_jobs (source_id, name, version, status, start_urls) SELECT id, name, version, 'running', '{https://alpha.example/}' FROM sources WHERE name = 'alpha' RETURNING id`,
      );
      const crawl = job.rows[0]!.id;
      await ensurePageQueue(boss);
      await createEnqueue(boss)(db.pool, crawl, [{ url: 'https://alpha.example/three', depth: 1 }]);
      const queued = async () =>
        (await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'docdex-crawl-page' AND group_id = $1 AND state IN ('created', 'retry')`, [crawl])).rows[0]!.n;
      expect(await queued()).toBe(1);
      const changed = await forge(alpha, ([l]) => (l!.snippets[0]!.description = 'Changed.'));
      const summary = await importBuffer(db, changed, { replace: true });
      expect(summary.libraries[0]!.status).toBe('replaced');
      expect(await queued()).toBe(0);
    } finally {
      await boss.stop({ graceful: false, close: true });
      await db.drop();
    }
  }, 120_000);
});

describe('the search index entries of an installed library', () => {
  let from: TestDatabase;
  let to: TestDatabase;
  beforeAll(async () => {
    [from, to] = await Promise.all([createTestDatabase(), createTestDatabase()]);
  }, 120_000);
  afterAll(async () => {
    await from?.drop();
    await to?.drop();
  });

  it('every writer merges its pending entries at 512 kB, and an import holds a whole library for one larger merge (issue 52)', async () => {
    // Every docdex connection carries the limit; the indexes carry none, so the session's word counts.
    expect((await to.pool.query<{ gin_pending_list_limit: string }>('SHOW gin_pending_list_limit')).rows[0]!.gin_pending_list_limit).toBe('512kB');
    const options = await to.pool.query<{ relname: string; reloptions: string[] | null }>(
      `SELECT relname, reloptions FROM pg_class WHERE relname IN ('snippets_search', 'documents_search') ORDER BY relname`,
    );
    expect(options.rows).toEqual([
      { relname: 'documents_search', reloptions: null },
      { relname: 'snippets_search', reloptions: null },
    ]);
    // A library of 1,500 snippets of 40 distinct words each: about 60,000 index entries, well over 512 kB.
    const source = await createSource(from.pool, 'bulky', '1');
    await addPage(from.pool, source, 'https://bulky.example/one', [{ title: 'Seed', code: 'bulky.seed()', language: 'python' }]);
    await from.pool.query(
      `INSERT INTO snippets (source_id, document_id, title, description, language, code, code_hash, source_url, position)
       SELECT $1, d.id, 'Bulk ' || i, '', 'python', (SELECT string_agg('w' || left(md5(i || '-' || j), 10), ' ') FROM generate_series(1, 40) j), md5('bulk' || i), d.url, i
         FROM generate_series(1, 1500) i, documents d WHERE d.source_id = $1`,
      [source.id],
    );
    await from.pool.query(`INSERT INTO snippet_occurrences (snippet_id, document_id, position) SELECT id, document_id, position FROM snippets WHERE source_id = $1 ON CONFLICT DO NOTHING`, [
      source.id,
    ]);
    const pack = await exportToBuffer(from.pool, ['bulky@1']);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'docdex-pack-held-'));
    try {
      const { libraries } = await readPack(Readable.from([pack]), dir, { maxBytes: 64 * 1024 * 1024 });
      await to.pool.query(`SELECT gin_clean_pending_list('snippets_search'::regclass)`);
      await installLibrary(to.pool, libraries[0]!, { name: 'bulky', version: '1' }, false);
      // Still pending after the install's commit: more than 512 kB (64 pages of 8 kB) of them, merged in one pass.
      const held = await to.pool.query<{ pages: number }>(`SELECT gin_clean_pending_list('snippets_search'::regclass)::int AS pages`);
      expect(held.rows[0]!.pages).toBeGreaterThan(64);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const found = await to.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM snippets WHERE search_vector @@ to_tsquery('english', 'bulk')`);
    expect(found.rows[0]!.n).toBe(1500);
  }, 120_000);
});
