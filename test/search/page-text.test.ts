import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchSnippets } from '../../src/core/search/search.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { addPage, createSource } from './fixtures.js';
import type { FixtureSource } from './fixtures.js';

/** What the page-text vector holds (migrations/014, 015): the prose and link texts, not code blocks or link targets. */

let db: TestDatabase;
let source: FixtureSource;

beforeAll(async () => {
  db = await createTestDatabase();
  source = await createSource(db.pool, 'pagetext');
});
afterAll(async () => {
  await db.drop();
});

async function lexemes(url: string): Promise<string[]> {
  const { rows } = await db.pool.query<{ lexemes: string[] }>('SELECT tsvector_to_array(search_vector) AS lexemes FROM documents WHERE url = $1', [url]);
  return rows[0]!.lexemes;
}

describe('page text vector', () => {
  it('indexes prose and link texts, and leaves out fenced code and link destinations', async () => {
    const url = 'https://pagetext.example/rotate.html';
    const markdown = [
      '# Rotating credentials',
      'Rotate the keys with the [vault helper](https://tools.example/hostonlyword/pathonlyword.html) every month.',
      '```python\nsecret = fencedonlyword(rotate=True)\n```',
      'Between the blocks: quarterly audits.',
      '~~~\ntildeonlyword --now\n~~~',
      // A fence closes only at its own kind: the inner ``` lines are part of the ~~~ block.
      '~~~markdown\n```\ninnerbacktickword\n```\nstilltildeword\n~~~',
      'Between more blocks: rotation schedule.',
      '````\nlongerfence()\n```',
      'After a fence that never closes, the text stays: unclosedtail.',
    ].join('\n\n');
    await addPage(db.pool, source, url, [{ title: 'Rotating credentials', code: 'rotate_keys()' }], { markdown });
    const words = await lexemes(url);
    expect(words).toEqual(expect.arrayContaining(['rotat', 'credenti', 'vault', 'helper', 'month', 'quarter', 'audit', 'schedul', 'unclosedtail']));
    for (const gone of ['fencedonlyword', 'tildeonlyword', 'innerbacktickword', 'stilltildeword', 'tools.example', 'hostonlyword', 'pathonlyword']) {
      expect(words.some((w) => w.includes(gone))).toBe(false);
    }
  });

  it('still finds a page through its prose when no snippet has the words', async () => {
    const result = await searchSnippets(db.pool, { query: 'quarterly audits' });
    expect(result.fallback).toBe(true);
    expect(result.items.map((r) => r.code)).toContain('rotate_keys()');
    expect(result.items[0]!.match).toBe('page');
  });
});
