import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError, ValidationError } from '../../src/core/errors.js';
import { createPool } from '../../src/core/db/connect.js';
import { searchSnippets } from '../../src/core/search/search.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { addPage, createSource } from './fixtures.js';
import type { FixtureSource } from './fixtures.js';

let db: TestDatabase;
let py: FixtureSource;
let js: FixtureSource;
let fastapi: FixtureSource;

beforeAll(async () => {
  db = await createTestDatabase();
  py = await createSource(db.pool, 'python', '3.13');
  js = await createSource(db.pool, 'node', '22');
  fastapi = await createSource(db.pool, 'FastAPI');

  await addPage(db.pool, py, 'https://python.example/library/json.html', [
    { title: 'Encoding JSON | json', description: 'Serialize obj to a JSON formatted str.', code: 'import json\ntext = json.dumps({"a": 1})', anchor: 'encoding' },
    { title: 'Decoding | json', description: 'Deserialize a document.', code: 'value = json.loads(text)', anchor: 'decoding' },
  ]);
  await addPage(db.pool, py, 'https://python.example/library/asyncio-task.html', [
    { title: 'Running tasks concurrently | asyncio', description: 'Run awaitable objects concurrently.', code: 'results = await asyncio.gather(fetch(a), fetch(b))', anchor: 'gather' },
    { title: 'Sleeping | asyncio', description: 'Block for delay seconds.', code: 'await asyncio.sleep(1)' },
  ]);
  // Title over code: the same words, in the title of one and in the code of the other (pages titled alike).
  await addPage(
    db.pool,
    py,
    'https://python.example/library/scratch-a.html',
    [{ title: 'Scratch directories', description: 'Helpers.', code: 'path = mkdtemp(prefix="tmp", suffix=".d", dir=None)\ncleanup_later(path, retries=3)' }],
    {
      title: 'Helpers A',
    },
  );
  await addPage(db.pool, py, 'https://python.example/library/scratch-b.html', [{ title: 'Build helpers', description: 'Helpers.', code: '# scratch directories\nbuild()' }], {
    title: 'Helpers B',
  });
  // Proximity: the same words and titles, adjacent and in order in one, scattered in the other.
  await addPage(db.pool, py, 'https://python.example/library/proximity.html', [
    { title: 'Messaging', description: 'The message queue is read by a thread; the worker then reads it.', code: 'pool.start()' },
    { title: 'Messaging', description: 'Each worker thread reads the message queue in order.', code: 'worker.run()' },
  ]);
  await addPage(db.pool, js, 'https://node.example/api/fs.html', [
    {
      title: 'Reading a file synchronously | fs',
      description: 'Returns the contents of the path.',
      code: "const data = fs.readFileSync('/etc/hosts', 'utf8');",
      language: 'javascript',
      anchor: 'readfilesync',
    },
    { title: 'Writing JSON | fs', description: 'Write JSON text.', code: "fs.writeFileSync('x.json', JSON.stringify(obj));", language: 'javascript' },
  ]);
  await addPage(db.pool, fastapi, 'https://fastapi.example/tutorial/', [
    { title: 'First steps | FastAPI', description: 'Create an app and declare a path operation.', code: 'app = FastAPI()\n\n@app.get("/")\nasync def root():\n    return {"message": "Hello World"}' },
  ]);
  // Compound names: two snippets alike but for the function they call; the query's words name one of them.
  await addPage(db.pool, py, 'https://python.example/library/settings.html', [
    { title: 'Reading settings | settings', description: 'Read the settings.', code: 'conf = yaml.loads(text)' },
    { title: 'Reading settings | settings', description: 'Read the settings.', code: 'conf = yaml.load(open_text(path))' },
  ]);
  // Abbreviations: code names "truncate" `trunc`.
  await addPage(db.pool, py, 'https://python.example/sql/timestamps.html', [
    { title: 'Rounding timestamps | sql', description: 'Timestamps to the hour.', code: 'SELECT extract(hour FROM ts)', language: 'sql' },
    { title: 'Rounding timestamps | sql', description: 'Timestamps to the hour.', code: "SELECT date_trunc('hour', created_ts)", language: 'sql' },
  ]);
  // Pagination: 25 snippets with one shared rare word.
  for (let page = 0; page < 5; page++) {
    await addPage(
      db.pool,
      py,
      `https://python.example/paging/${page}.html`,
      Array.from({ length: 5 }, (_, i) => ({ title: `Zebrafish example ${page}.${i}`, code: `zebrafish_${page}_${i} = ${page * 5 + i}` })),
    );
  }
  // Page fallback: the word is only in the page text, not in any snippet.
  await addPage(db.pool, py, 'https://python.example/howto/quux.html', [{ title: 'Setup', code: 'configure()' }], {
    title: 'Setting things up',
    markdown: '# Setting things up\n\nThe flibbertigibbet option controls the setup.\n\n```\nconfigure()\n```',
  });
});

afterAll(async () => {
  await db?.drop();
});

const titles = (r: { items: Array<{ title: string }> }) => r.items.map((i) => i.title);

describe('searchSnippets', () => {
  it('ranks a title match above the same words in code', async () => {
    const r = await searchSnippets(db.pool, { query: 'scratch directories' });
    expect(titles(r).slice(0, 2)).toEqual(['Scratch directories', 'Build helpers']);
    expect(r.items[0]!.score).toBeGreaterThan(r.items[1]!.score);
  });

  it('splits identifiers and keeps them whole', async () => {
    for (const query of ['dumps', 'json.dumps', 'json dumps']) {
      const r = await searchSnippets(db.pool, { query });
      expect(r.items[0]?.code, query).toContain('json.dumps');
    }
    for (const query of ['readFileSync', 'read file sync', 'fs.readFileSync']) {
      const r = await searchSnippets(db.pool, { query });
      expect(r.items[0]?.code, query).toContain('readFileSync');
    }
    // The exact identifier beats a snippet that only shares its parts.
    const r = await searchSnippets(db.pool, { query: 'json.loads' });
    expect(r.items[0]?.code).toContain('json.loads');
  });

  it('returns the result fields with the anchored URL, source name and version', async () => {
    const r = await searchSnippets(db.pool, { query: 'readFileSync' });
    expect(r.items[0]).toMatchObject({
      title: 'Reading a file synchronously | fs',
      language: 'javascript',
      source_url: 'https://node.example/api/fs.html#readfilesync',
      source_id: js.id,
      source_name: 'node',
      version: '22',
      match: 'snippet',
    });
    expect(typeof r.items[0]!.id).toBe('number');
    expect(r.fallback).toBe(false);
  });

  it('corrects typos against the index vocabulary', async () => {
    const r = await searchSnippets(db.pool, { query: 'asyncio gahter' });
    expect(r.items[0]?.code).toContain('asyncio.gather');
    expect(r.corrected).toEqual([{ from: 'gahter', to: 'gather' }]);
    const clean = await searchSnippets(db.pool, { query: 'asyncio gather' });
    expect(clean.corrected).toBeUndefined();
    const ident = await searchSnippets(db.pool, { query: 'asyncio.gahter' });
    expect(ident.items[0]?.code).toContain('asyncio.gather');
  });

  it('prefers the terms next to each other', async () => {
    const r = await searchSnippets(db.pool, { query: 'worker thread reads the message' });
    expect(r.items.slice(0, 2).map((i) => i.code)).toEqual(['worker.run()', 'pool.start()']);
    expect(r.items[0]!.score).toBeGreaterThan(r.items[1]!.score);
  });

  it('ranks up the code that names an identifier made of two query words (`yaml.load` for "load yaml"), not a longer one', async () => {
    const r = await searchSnippets(db.pool, { query: 'load yaml settings' });
    expect(r.items[0]?.code).toContain('yaml.load(');
    expect(r.items[1]?.code).toContain('yaml.loads(');
  });

  it('matches a word in code by the cut code names it by (`date_trunc` for "truncate")', async () => {
    const r = await searchSnippets(db.pool, { query: 'truncate timestamps to the hour' });
    expect(r.items[0]?.code).toContain('date_trunc');
  });

  it('filters by normalised language', async () => {
    const py3 = await searchSnippets(db.pool, { query: 'json', language: 'py' });
    expect(py3.items.length).toBeGreaterThan(0);
    expect(py3.items.every((i) => i.language === 'python')).toBe(true);
    const node = await searchSnippets(db.pool, { query: 'json', language: 'JS' });
    expect(node.items.every((i) => i.language === 'javascript')).toBe(true);
    expect(node.items.filter((i) => i.match === 'snippet').map((i) => i.title)).toEqual(['Writing JSON | fs']);
  });

  it('keeps the language in the search index, so an index read can answer a language filter', async () => {
    // On a table this small the planner reads the b-tree instead, so the index itself is what is checked: a query
    // with a common word and a common language relies on the index intersecting both (migration 016).
    const { rows } = await db.pool.query<{ def: string }>(`SELECT pg_get_indexdef('snippets_search'::regclass) AS def`);
    expect(rows[0]!.def).toMatch(/USING gin \(language, search_vector\)/);
  });

  it("keeps a search index per unit kind, so each kind's candidates are read from its own rows (migration 040)", async () => {
    // Each tier reads snippets and sections apart; over one index each read visited the other kind's rows too.
    const { rows } = await db.pool.query<{ name: string; def: string }>(
      `SELECT c.relname AS name, pg_get_indexdef(c.oid) AS def FROM pg_class c WHERE c.relname IN ('snippets_search', 'snippets_search_sections') ORDER BY c.relname`,
    );
    expect(rows.map((r) => r.name)).toEqual(['snippets_search', 'snippets_search_sections']);
    expect(rows[0]!.def).toMatch(/USING gin \(language, search_vector\) WHERE \(kind = 'snippet'::text\)$/);
    expect(rows[1]!.def).toMatch(/USING gin \(language, search_vector\) WHERE \(kind = 'section'::text\)$/);
  });

  it('keeps an index of the word pairs side by side in each unit, one per kind, for quoted phrases (migration 041)', async () => {
    // The search index has no word positions: a phrase read from it fetched every row holding its words anywhere.
    const { rows } = await db.pool.query<{ name: string; def: string }>(
      `SELECT c.relname AS name, pg_get_indexdef(c.oid) AS def FROM pg_class c WHERE c.relname LIKE 'snippets_search_pairs%' ORDER BY c.relname`,
    );
    expect(rows.map((r) => r.name)).toEqual(['snippets_search_pairs', 'snippets_search_pairs_sections']);
    expect(rows[0]!.def).toMatch(/USING gin \(search_pairs\(search_vector\)\) WHERE \(kind = 'snippet'::text\)$/);
    expect(rows[1]!.def).toMatch(/USING gin \(search_pairs\(search_vector\)\) WHERE \(kind = 'section'::text\)$/);
  });

  it('filters by source id, exact name, fuzzy name and version', async () => {
    const byId = await searchSnippets(db.pool, { query: 'json', source: js.id });
    expect(byId.items.every((i) => i.source_id === js.id)).toBe(true);
    const byName = await searchSnippets(db.pool, { query: 'json', source: 'Python' });
    expect(byName.items.length).toBeGreaterThan(0);
    expect(byName.items.every((i) => i.source_id === py.id)).toBe(true);
    const fuzzy = await searchSnippets(db.pool, { query: 'app', source: 'fast api' });
    expect(fuzzy.items.map((i) => i.source_name)).toEqual(['FastAPI']);
    const versioned = await searchSnippets(db.pool, { query: 'json', source: 'node', version: '22' });
    expect(versioned.items.filter((i) => i.match === 'snippet').map((i) => i.title)).toEqual(['Writing JSON | fs']);
    const noVersion = await searchSnippets(db.pool, { query: 'json', version: '1.0' });
    expect(noVersion.items).toEqual([]);
    await expect(searchSnippets(db.pool, { query: 'json', source: 'haskell' })).rejects.toBeInstanceOf(NotFoundError);
  });

  it('searches a set of sources ranked together, alone or narrowed by source and version', async () => {
    const both = await searchSnippets(db.pool, { query: 'json', sourceIds: [py.id, js.id] });
    expect(new Set(both.items.map((i) => i.source_id))).toEqual(new Set([py.id, js.id]));
    expect(both.items.every((i) => (i.source_id === py.id ? i.source_name === 'python' && i.version === '3.13' : i.version === '22'))).toBe(true);
    const one = await searchSnippets(db.pool, { query: 'json', sourceIds: [js.id.toUpperCase()] });
    expect(one.items.length).toBeGreaterThan(0);
    expect(one.items.every((i) => i.source_id === js.id)).toBe(true);
    // With `source` too, only the sources both select.
    const narrowed = await searchSnippets(db.pool, { query: 'json', sourceIds: [py.id, js.id], source: 'node' });
    expect(narrowed.items.every((i) => i.source_id === js.id)).toBe(true);
    const disjoint = await searchSnippets(db.pool, { query: 'json', sourceIds: [py.id], source: 'node' });
    expect(disjoint).toMatchObject({ items: [], total: 0 });
    expect(await searchSnippets(db.pool, { query: 'json', sourceIds: [] })).toMatchObject({ items: [], total: 0 });
    await expect(searchSnippets(db.pool, { query: 'json', sourceIds: ['not-a-uuid'] })).rejects.toBeInstanceOf(ValidationError);
  });

  it('gives the same answer to the same search: sessions plan per values and scan from the first block', async () => {
    // Named search statements are planned for each search's values, and a scan capped at N rows reads the same
    // N rows every time instead of starting where another scan of the table had got to.
    const { rows } = await db.pool.query<{ plan: string; sync: string }>("SELECT current_setting('plan_cache_mode') AS plan, current_setting('synchronize_seqscans') AS sync");
    expect(rows[0]).toEqual({ plan: 'force_custom_plan', sync: 'off' });
    const runs = [];
    for (let i = 0; i < 7; i++) runs.push(await searchSnippets(db.pool, { query: 'zebrafish', language: i % 2 === 0 ? 'py' : undefined, limit: 5 }));
    expect(new Set(runs.filter((_, i) => i % 2 === 0).map((r) => JSON.stringify(r))).size).toBe(1);
    expect(new Set(runs.filter((_, i) => i % 2 === 1).map((r) => JSON.stringify(r))).size).toBe(1);
  });

  it('never waits for a second connection while holding one: a full pool of filtered searches finishes', async () => {
    // Each search holds one connection; resolving a source name on another one deadlocked a pool whose every
    // connection was held by a search (the pool's 10 s connection timeout then failed them all).
    const small = createPool(db.info, { max: 2 });
    try {
      const results = await Promise.allSettled(['python', 'node', 'FastAPI', 'python', 'node', 'fast api'].map((source, i) => searchSnippets(small, { query: i % 2 ? 'json' : 'read file', source })));
      expect(results.map((r) => (r.status === 'fulfilled' ? 'ok' : String(r.reason)))).toEqual(Array(6).fill('ok'));
    } finally {
      await small.end();
    }
  });

  it('pages through results without overlap and reports the total', async () => {
    const pages = await Promise.all([0, 10, 20, 30].map((offset) => searchSnippets(db.pool, { query: 'zebrafish', limit: 10, offset })));
    expect(pages.map((p) => p.items.length)).toEqual([10, 10, 5, 0]);
    expect(pages.every((p) => p.total === 25)).toBe(true);
    const ids = pages.flatMap((p) => p.items.map((i) => i.id));
    expect(new Set(ids).size).toBe(25);
    const scores = pages.flatMap((p) => p.items.map((i) => i.score));
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it('ranks snippets matching every term above those matching some', async () => {
    const r = await searchSnippets(db.pool, { query: 'decoding json document' });
    expect(titles(r)[0]).toBe('Decoding | json');
    expect(r.items.length).toBeGreaterThan(1);
  });

  it('falls back to page text when no snippet matches', async () => {
    const r = await searchSnippets(db.pool, { query: 'flibbertigibbet' });
    expect(r.fallback).toBe(true);
    expect(r.items[0]).toMatchObject({ code: 'configure()', match: 'page' });
  });

  it('rejects bad paging and empty queries', async () => {
    await expect(searchSnippets(db.pool, { query: 'json', limit: 0 })).rejects.toBeInstanceOf(ValidationError);
    await expect(searchSnippets(db.pool, { query: 'json', limit: 101 })).rejects.toBeInstanceOf(ValidationError);
    await expect(searchSnippets(db.pool, { query: 'json', offset: -1 })).rejects.toBeInstanceOf(ValidationError);
    await expect(searchSnippets(db.pool, { query: '  ?! ' })).rejects.toBeInstanceOf(ValidationError);
  });
});
