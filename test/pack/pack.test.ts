import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshSearchTermsNow } from '../../src/core/search/lexicon.js';
import { searchSnippets } from '../../src/core/search/search.js';
import { storePage } from '../../src/core/store/pages.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { addPage, createSource, snippet } from '../search/fixtures.js';
import { exportToBuffer, forge, importBuffer, refusal, repack } from './pack-helpers.js';

const QUERIES = ['read file', 'zebra stripes', 'parse json', 'http server', 'readFileSync', 'connect database', 'stripe', 'async iterator', 'upload guide', 'gallop'];

async function seed(pool: TestDatabase['pool']): Promise<void> {
  for (const version of ['1.0.0', '2.0.0']) {
    const source = await createSource(pool, 'zebra', version);
    // With its sections (issue 50): packs carry them as snippet rows of kind section.
    await addPage(
      pool,
      source,
      `https://zebra.example/${version}/io`,
      [
        { title: 'Read a file', code: `const data = fs.readFileSync("stripes-${version}.txt");`, language: 'javascript', anchor: 'read', description: 'Read the stripes.' },
        { title: 'Parse JSON', code: `JSON.parse(data) // ${version}`, language: 'javascript', description: 'Parse what was read.' },
      ],
      { sections: true },
    );
    await addPage(pool, source, `https://zebra.example/${version}/net`, [
      { title: 'HTTP server', code: `http.createServer((req, res) => res.end("gallop ${version}"));`, language: 'javascript' },
      { title: 'Parse JSON', code: `JSON.parse(data) // ${version}`, language: 'javascript' },
    ]);
  }
  // What the model writes, set directly: descriptions, language confidence and a relationship.
  await pool.query(`UPDATE snippets SET description = 'Reads the zebra stripes file synchronously.', llm_enhanced = true, language_confidence = 'llm' WHERE title = 'Read a file'`);
  await pool.query(
    `INSERT INTO snippet_relationships (source_snippet_id, target_snippet_id, relationship_type, description)
     SELECT a.id, b.id, 'followed_by', 'Parse what was read.' FROM snippets a JOIN snippets b ON a.source_id = b.source_id
      WHERE a.title = 'Read a file' AND b.title = 'Parse JSON'`,
  );
  // A git-indexed library: its pages are an upload job's, its origin in crawl_config.git.
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO sources (name, version, kind, crawl_config, metadata, aliases) VALUES ('handbook', '', 'git', $1, '{"origin": "npm:handbook@1"}', '{hb}') RETURNING id`,
    [JSON.stringify({ git: { remote: 'https://git.example/acme/handbook.git', commit: 'a'.repeat(40), files: { 'guide.md': { blob: 'b'.repeat(40) } } } })],
  );
  const job = await pool.query<{ id: string }>(`INSERT INTO upload_jobs (name, source_id, status) VALUES ('handbook', $1, 'completed') RETURNING id`, [rows[0]!.id]);
  const url = 'upload://handbook/guide.md';
  await storePage(pool, {
    sourceId: rows[0]!.id,
    url,
    title: 'Upload guide',
    markdown: '# Upload guide\n\nConnect the database.',
    contentHash: 'abc',
    job: { kind: 'upload', id: job.rows[0]!.id },
    snippets: [snippet({ title: 'Connect database', code: 'pg.connect(url) // async iterator', language: 'javascript' }, url, 0)],
  });
}

async function searches(db: TestDatabase): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const query of QUERIES) {
    const r = await searchSnippets(db.pool, { query, limit: 20 });
    // A result's folded results from the same page (`more`) name their ids too: set aside like the result's own.
    const items = r.items.map(({ id: _id, source_id: _s, more, ...rest }) => ({
      ...rest,
      ...(more ? { more: more.map(({ id: _m, ...m }) => m).sort((a, b) => b.score - a.score || JSON.stringify(a).localeCompare(JSON.stringify(b))) } : {}),
    }));
    // Equal scores are ordered by snippet id, and ids are new on import: two library versions install side by
    // side, so which gets the lower ids varies. Within a tie, compare as a set ("ids aside").
    const canonical = [...items].sort((a, b) => b.score - a.score || JSON.stringify(a).localeCompare(JSON.stringify(b)));
    out.push({ query, total: r.total, corrected: r.corrected, items: canonical });
  }
  return out;
}

async function pages(db: TestDatabase): Promise<unknown[]> {
  const { rows } = await db.pool.query(
    `SELECT s.name, s.version, s.kind, s.aliases, d.url, d.title, d.markdown, d.content_hash, d.source_type FROM documents d JOIN sources s ON s.id = d.source_id ORDER BY s.name, s.version, d.url`,
  );
  return rows;
}

async function snippetRows(db: TestDatabase): Promise<unknown[]> {
  const { rows } = await db.pool.query(
    `SELECT so.name, so.version, s.kind, s.code_hash, s.title, s.description, s.language, s.language_confidence, s.code, s.source_url, s.position, s.page_count, s.llm_enhanced, d.url,
            (SELECT array_agg(t.code_hash || ':' || r.relationship_type || ':' || r.description) FROM snippet_relationships r JOIN snippets t ON t.id = r.target_snippet_id WHERE r.source_snippet_id = s.id) AS rel,
            (SELECT array_agg(od.url || '#' || o.position ORDER BY od.url) FROM snippet_occurrences o JOIN documents od ON od.id = o.document_id WHERE o.snippet_id = s.id) AS occ
       FROM snippets s JOIN sources so ON so.id = s.source_id JOIN documents d ON d.id = s.document_id ORDER BY so.name, so.version, s.code_hash`,
  );
  return rows;
}

async function vectors(db: TestDatabase): Promise<unknown[]> {
  const { rows } = await db.pool.query(
    `SELECT so.name, so.version, s.code_hash, s.search_vector::text AS snippet_vector, d.url, d.search_vector::text AS page_vector, d.title_vector::text AS title_vector
       FROM snippets s JOIN sources so ON so.id = s.source_id JOIN documents d ON d.id = s.document_id ORDER BY so.name, so.version, s.code_hash`,
  );
  return rows;
}

async function counts(db: TestDatabase): Promise<Record<string, number>> {
  const { rows } = await db.pool.query<Record<string, number>>(
    `SELECT (SELECT count(*)::int FROM sources) AS sources, (SELECT count(*)::int FROM documents) AS documents, (SELECT count(*)::int FROM snippets) AS snippets,
            (SELECT count(*)::int FROM crawl_jobs) AS crawl_jobs, (SELECT count(*)::int FROM upload_jobs) AS upload_jobs`,
  );
  return rows[0]!;
}

describe('index packs', () => {
  let from: TestDatabase;
  let to: TestDatabase;
  let pack: Buffer;

  beforeAll(async () => {
    from = await createTestDatabase();
    to = await createTestDatabase();
    await seed(from.pool);
    // The lexicon as an import leaves it, every queued word folded in: a search reads its shares, so a
    // half-folded one on this side would rank and fall back differently.
    await refreshSearchTermsNow(from.pool);
    pack = await exportToBuffer(from.pool, 'all');
  }, 120_000);
  afterAll(async () => {
    await from?.drop();
    await to?.drop();
  });

  it('refuses a tampered pack with a clear message and writes nothing', async () => {
    const flip = (name: string) => (files: Array<{ name: string; data: Buffer }>) => {
      const f = files.find((x) => x.name === name)!;
      f.data = Buffer.from(f.data);
      const at = Math.floor(f.data.length / 2);
      f.data[at] = f.data[at]! ^ 0x01;
    };
    const before = await counts(to);
    for (const part of ['libraries/0/source.json', 'libraries/1/documents.ndjson', 'libraries/2/snippets.ndjson']) {
      // The manifest keeps the original sizes and hashes: a flipped byte in any part fails its SHA-256.
      const tampered = await repack(pack, flip(part));
      expect((await refusal(to, tampered)).message).toMatch(/does not match its SHA-256/);
    }
    expect((await refusal(to, pack.subarray(0, Math.floor(pack.length * 0.7)))).code).toBe('pack_invalid');
    const lying = await repack(pack, (files) => {
      const m = files[0]!;
      const manifest = JSON.parse(m.data.toString()) as { libraries: Array<{ snippets: number }> };
      manifest.libraries[0]!.snippets += 1;
      m.data = Buffer.from(JSON.stringify(manifest));
    });
    expect((await refusal(to, lying)).message).toMatch(/has \d+ rows; the manifest says/);
    const newer = await repack(pack, (files) => {
      files[0]!.data = Buffer.from(files[0]!.data.toString().replace(/"formatVersion": "1\.\d+"/, '"formatVersion": "2.0"'));
    });
    const unsupported = await refusal(to, newer);
    expect(unsupported.code).toBe('pack_version_unsupported');
    expect(unsupported.message).toMatch(/format 2\.0; this docdex reads format 1\.x/);
    expect(await counts(to)).toEqual(before);
  }, 120_000);

  it('round-trips every library: same searches (ids aside), pages, snippets, LLM fields and relationships', async () => {
    const summary = await importBuffer(to, pack);
    expect(summary.libraries.map((l) => `${l.name}@${l.version}:${l.status}`)).toEqual(['handbook@:installed', 'zebra@1.0.0:installed', 'zebra@2.0.0:installed']);
    expect(await pages(to)).toEqual(await pages(from));
    const sourcesOf = async (db: TestDatabase) =>
      (await db.pool.query('SELECT name, version, kind, base_url, crawl_config, metadata, aliases, document_count, snippet_count, section_count FROM sources ORDER BY name, version')).rows;
    expect(await sourcesOf(to)).toEqual(await sourcesOf(from));
    expect(await snippetRows(to)).toEqual(await snippetRows(from));
    expect(await searches(to)).toEqual(await searches(from));
    const lexicon = await to.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM search_terms_queue`);
    expect(lexicon.rows[0]!.n).toBe(0);
    // The generated search vectors as the store computed them, and the typo lexicon holding exactly the
    // imported snippets' terms (the queue trigger fired for every snippet, the settle step folded them in).
    expect(await vectors(to)).toEqual(await vectors(from));
    const terms = await to.pool.query('SELECT term, doc_count FROM search_terms ORDER BY term');
    const expected = await to.pool.query('SELECT w AS term, count(*)::int AS doc_count FROM snippets, LATERAL search_vector_terms(search_vector) AS w GROUP BY w ORDER BY w');
    expect(terms.rows.length).toBeGreaterThan(0);
    expect(terms.rows).toEqual(expected.rows);
  }, 120_000);

  it('carries sections, and imports a 1.0 pack (no kind, no sections) as the snippets it holds', async () => {
    const { rows } = await to.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM snippets s JOIN sources so ON so.id = s.source_id WHERE so.name = 'zebra' AND s.kind = 'section'");
    expect(rows[0]!.n).toBeGreaterThan(0);
    const old = await forge(await exportToBuffer(from.pool, ['zebra@1.0.0']), (libraries) => {
      for (const l of libraries) l.snippets = l.snippets.filter((s) => s.kind !== 'section').map(({ kind: _kind, ...rest }) => rest);
    });
    const oldFormat = await repack(old, (files) => {
      files[0]!.data = Buffer.from(files[0]!.data.toString().replace(/"formatVersion": "1\.\d+"/, '"formatVersion": "1.0"'));
    });
    const summary = await importBuffer(to, oldFormat, { as: 'zebra-old@1.0.0' });
    expect(summary.libraries[0]).toMatchObject({ name: 'zebra-old', status: 'installed', snippets: 3 });
    const counts = await to.pool.query("SELECT snippet_count, section_count FROM sources WHERE name = 'zebra-old'");
    expect(counts.rows[0]).toEqual({ snippet_count: 3, section_count: 0 });
    const hit = await searchSnippets(to.pool, { query: 'readFileSync', source: 'zebra-old@1.0.0' });
    expect(hit.items[0]).toMatchObject({ kind: 'snippet', title: 'Read a file' });
  }, 120_000);

  it('leaves an identical version alone, refuses a different one without replace, and renames with as', async () => {
    const again = await importBuffer(to, pack);
    expect(again.libraries.every((l) => l.status === 'unchanged')).toBe(true);
    await from.pool.query(`UPDATE snippets SET description = 'Changed by a newer model.' WHERE title = 'HTTP server'`);
    const changed = await exportToBuffer(from.pool, ['zebra@2.0.0']);
    const before = await counts(to);
    expect((await refusal(to, changed)).code).toBe('pack_conflict');
    expect(await counts(to)).toEqual(before);
    const replaced = await importBuffer(to, changed, { replace: true });
    expect(replaced.libraries[0]).toMatchObject({ name: 'zebra', version: '2.0.0', status: 'replaced' });
    const renamed = await importBuffer(to, changed, { as: 'zebra-fork@9.9' });
    expect(renamed.libraries[0]).toMatchObject({ name: 'zebra-fork', version: '9.9', status: 'installed', snippets: 3 });
    const hit = await searchSnippets(to.pool, { query: 'http server', source: 'zebra-fork@9.9' });
    expect(hit.items[0]).toMatchObject({ description: 'Changed by a newer model.', source_name: 'zebra-fork' });
  }, 120_000);
});
