import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchSnippets } from '../../src/core/search/search.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { addPage, createSource } from './fixtures.js';
import type { FixtureSource } from './fixtures.js';

/**
 * What a snippet's title adds to its search vector (migrations/032): the title, then the words of the members
 * and compound names it documents (`url.searchParams` → search, params), never the object before the member.
 */

let db: TestDatabase;
let source: FixtureSource;

beforeAll(async () => {
  db = await createTestDatabase();
  source = await createSource(db.pool, 'titlewords');
});
afterAll(async () => {
  await db.drop();
});

async function titleLexemes(title: string): Promise<string[]> {
  const { rows } = await db.pool.query<{ lexemes: string[] }>("SELECT tsvector_to_array(ts_filter(search_vector, '{a}')) AS lexemes FROM snippets WHERE source_id = $1 AND title = $2", [
    source.id,
    title,
  ]);
  return rows[0]!.lexemes;
}

describe('snippet title words', () => {
  it('adds the words of the member a title names, and keeps the whole identifier', async () => {
    const titles = ['url.searchParams | URL', 'loop.run_in_executor(executor, func) | Event loop', 'tokio::task::spawn_blocking', 'new URLSearchParams(string)'];
    await addPage(
      db.pool,
      source,
      'https://titlewords.example/api.html',
      titles.map((title, i) => ({ title, code: `step${i}()` })),
    );
    expect(await titleLexemes(titles[0]!)).toEqual(expect.arrayContaining(['url.searchparams', 'search', 'param', 'url']));
    expect(await titleLexemes(titles[1]!)).toEqual(expect.arrayContaining(['loop.run', 'run', 'executor', 'loop']));
    expect(await titleLexemes(titles[2]!)).toEqual(expect.arrayContaining(['spawn', 'block']));
    expect(await titleLexemes(titles[3]!)).toEqual(expect.arrayContaining(['urlsearchparam', 'search', 'param']));
  });

  it('leaves out the object before a member, and plain words', async () => {
    const title = 'request.reusedSocket | Handling Exceptions';
    await addPage(db.pool, source, 'https://titlewords.example/request.html', [{ title, code: 'agent.keepAlive = true' }], { title: 'HTTP' });
    const words = await titleLexemes(title);
    expect(words).toEqual(expect.arrayContaining(['request.reusedsocket', 'reus', 'socket', 'handl', 'except']));
    expect(words).not.toContain('request');
    const counts = await db.pool.query<{ n: number }>("SELECT length(to_tsvector('english', snippet_title_words($1))) - length(to_tsvector('english', $1)) AS n", [title]);
    // Only "reused" and "socket" are new lexemes.
    expect(counts.rows[0]!.n).toBe(2);
  });

  it('ranks the section whose title names the asked-for member first', async () => {
    await addPage(db.pool, source, 'https://titlewords.example/address.html', [
      { title: 'Parsing an address | Address', description: 'Parse the address and read its parts.', code: "const a = parse('http://h/p?q=1');\nconsole.log(a.host);" },
      { title: 'address.searchParams | Address', description: 'The query of the address.', code: "const q = parse('http://h/p?page=2').query;\nq.get('page');" },
    ]);
    const result = await searchSnippets(db.pool, { query: 'parse an address and read its search params', source: source.id });
    expect(result.items[0]!.title).toBe('address.searchParams | Address');
  });
});

// The pattern and cut of snippet_title_words (migrations/032), written again in JS.
const TITLE_NAME = /((?:[A-Za-z_$][A-Za-z0-9_$]*(?:\.|::))*)([A-Za-z_$][A-Za-z0-9_$]*)/g;

function titlePartsOracle(title: string): string[] {
  return [...title.matchAll(TITLE_NAME)]
    .filter((m) => m[1] !== '' || /[a-z0-9][A-Z]|[A-Za-z0-9]_[A-Za-z0-9]/.test(m[2]!))
    .flatMap((m) =>
      m[2]!
        .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
        .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
        .split(/[_$ ]+/)
        .filter((p) => p.length > 0),
    );
}

describe('snippet title words, any title', () => {
  const fragments = [
    'url',
    'search',
    'Params',
    '.',
    '..',
    '::',
    ':',
    '_',
    '__',
    '$',
    'readFileSync',
    'HTTPServer',
    'run_in',
    'x1',
    'eX',
    ' ',
    '|',
    '(',
    ')',
    '[, ',
    'é',
    'Ünï',
    '日本',
    '3.11',
    'e.g.',
  ];
  const titles = fc.oneof(
    fc.array(fc.constantFrom(...fragments), { maxLength: 30 }).map((parts) => parts.join('')),
    fc.string({ unit: 'grapheme', maxLength: 200 }),
  );

  it('adds exactly the parts the JS pattern cuts', async () => {
    await fc.assert(
      fc.asyncProperty(titles, async (title) => {
        const { rows } = await db.pool.query<{ words: string }>('SELECT snippet_title_words($1) AS words', [title]);
        expect(rows[0]!.words.startsWith(`${title} `)).toBe(true);
        const parts = rows[0]!.words
          .slice(title.length + 1)
          .split(' ')
          .filter((p) => p.length > 0);
        expect(parts).toEqual(titlePartsOracle(title));
      }),
      { numRuns: 300 },
    );
  });

  it('gives every title a vector', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 300 }), async (text) => {
        const clean = text.replace(/\0/g, '');
        const { rows } = await db.pool.query<{ n: number }>("SELECT length(to_tsvector('english', snippet_title_words($1)))::int AS n", [clean]);
        expect(rows[0]!.n).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 200 },
    );
  });
});
