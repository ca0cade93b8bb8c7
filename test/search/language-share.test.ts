import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clearLanguageShares, languageShares } from '../../src/core/search/language-share.js';
import { languageOnRows, MAX_CANDIDATES, searchSnippets } from '../../src/core/search/search.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { addPage, createSource } from './fixtures.js';

/** How a language filter without a source is applied: src/core/search/language-share.ts and languageOnRows. */

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  const source = await createSource(db.pool, 'langs');
  // 6 python, 3 shell, 1 sql snippets.
  const languages = ['python', 'python', 'python', 'python', 'python', 'python', 'shell', 'shell', 'shell', 'sql'];
  await addPage(
    db.pool,
    source,
    'https://langs.example/all.html',
    languages.map((language, i) => ({ title: `Reading a config file ${i}`, code: `read_config_${i}("app.conf")`, language })),
  );
});
afterAll(async () => {
  await db.drop();
});

describe('language shares', () => {
  it('has none before the table is analysed, then reads them from the statistics and keeps them', async () => {
    const owner = {};
    expect((await languageShares(db.pool, owner)).size).toBe(0);
    clearLanguageShares(owner);
    await db.pool.query('ANALYZE snippets');
    const shares = await languageShares(db.pool, owner);
    expect(shares.get('python')).toBeCloseTo(0.6, 5);
    expect(shares.get('shell')).toBeCloseTo(0.3, 5);
    // Kept: a second read does not see a change until the handle's shares are forgotten.
    await db.pool.query(`UPDATE snippets SET language = 'shell' WHERE language = 'python'`);
    await db.pool.query('ANALYZE snippets');
    expect((await languageShares(db.pool, owner)).get('python')).toBeCloseTo(0.6, 5);
    clearLanguageShares(owner);
    expect((await languageShares(db.pool, owner)).get('python')).toBeUndefined();
    await db.pool.query(`UPDATE snippets SET language = 'python' WHERE code ~ '_[0-5]\\('`);
    await db.pool.query('ANALYZE snippets');
  });

  it('filters by language the same whichever way the filter is applied', async () => {
    const shell = await searchSnippets(db.pool, { query: 'read config', language: 'sh' });
    expect(shell.total).toBe(3);
    expect(shell.items.every((r) => r.language === 'shell')).toBe(true);
  });
});

describe('languageOnRows', () => {
  const noSource = { sourceIds: null, language: 'shell' };
  const million = 1_000_000;

  it('checks the language on the rows when the terms match few of them', () => {
    expect(languageOnRows(0.01, million, null, noSource)).toBe(true);
  });

  it('checks it on the rows of a common language even when the terms match many', () => {
    // cap / 0.125 = 4,000 rows visited against a bitmap of 125,000 entries.
    expect(languageOnRows(0.1, million, 0.125, noSource)).toBe(true);
  });

  it("uses the language's index for a rare language, or when the share is not known", () => {
    // A language in 1% of the snippets: about 50,000 rows visited against a bitmap of 10,000.
    expect(languageOnRows(0.1, million, 0.01, noSource)).toBe(false);
    expect(languageOnRows(0.1, million, null, noSource)).toBe(false);
    expect(languageOnRows(0.1, million, 0, noSource)).toBe(false);
  });

  it('leaves a smaller index to its bitmap: the rows only win once the language holds many times the cap', () => {
    expect(languageOnRows(0.6, 100_000, 0.125, noSource)).toBe(false);
    expect(MAX_CANDIDATES / 0.125).toBeLessThan(0.125 * million);
  });

  it('has nothing to decide without a language, or with a source', () => {
    expect(languageOnRows(0.001, million, 0.5, { sourceIds: null, language: null })).toBe(false);
    expect(languageOnRows(0.001, million, 0.5, { sourceIds: ['x'], language: 'shell' })).toBe(false);
  });
});
