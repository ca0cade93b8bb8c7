import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchSnippets } from '../../src/core/search/search.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { addPage, createSource } from './fixtures.js';
import type { FixtureSource } from './fixtures.js';

/**
 * What the page-text vector holds (migrations/014, 015, 031): the prose and link texts, not code blocks or link
 * targets, and the words of the identifiers in the prose.
 */

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

  it('splits the identifiers in the prose into their words, and keeps them whole', async () => {
    const url = 'https://pagetext.example/signals.html';
    const markdown = [
      '# Timers',
      'AbortSignal.timeout(delay) returns a signal; see import.meta.url and loop.run_in_executor().',
      'Spawn with tokio::spawn, read with readFileSync, and catch UnicodeDecodeError.',
    ].join('\n\n');
    await addPage(db.pool, source, url, [{ title: 'Timers', code: 'setTimeout(f, 10)' }], { markdown });
    const words = await lexemes(url);
    expect(words).toEqual(
      expect.arrayContaining([
        'abortsignal.timeout',
        'timeout',
        'abort',
        'signal',
        'import.meta.url',
        'meta',
        'url',
        'executor',
        'tokio',
        'spawn',
        'readfilesync',
        'read',
        'file',
        'sync',
        'unicod',
        'decod',
        'error',
      ]),
    );
  });

  it('finds a page by words its prose only has inside an identifier', async () => {
    // Neither the snippet nor the page's plain words say abort, signal or timeout: only the identifier does.
    await addPage(db.pool, source, 'https://pagetext.example/cancel.html', [{ title: 'Cancelling', code: 'controller.cancel()' }], {
      markdown: '# Cancelling\n\nStatic method AbortSignal.timeout(ms) fires later.\n\n```js\ncontroller.cancel()\n```',
    });
    const result = await searchSnippets(db.pool, { query: 'abort signal timeout', source: source.id });
    expect(result.items.map((r) => r.code)).toContain('controller.cancel()');
  });
});

// The identifier pattern and cut of prose_identifier_parts (migrations/031), written again in JS.
const PROSE_IDENTIFIER = /[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::)[A-Za-z_$][A-Za-z0-9_$]*)+|[a-z]+[A-Z][A-Za-z0-9_$]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9_$]*/g;

function identifierPartsOracle(prose: string): string[] {
  return (prose.match(PROSE_IDENTIFIER) ?? []).flatMap((id) =>
    id
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
      .split(/[._:$ ]+/)
      .filter((p) => p.length > 0),
  );
}

describe('prose identifier parts', () => {
  const fragments = ['os', 'path', 'join', '.', '..', '::', ':', '_', '$', 'readFileSync', 'HTTPServer', 'Ab', 'x1', 'eX', ' ', '\n', '(', ')', 'é', 'Ünï', '日本', '\\', "'", '3.11', 'e.g.'];
  const prose = fc.oneof(
    fc.array(fc.constantFrom(...fragments), { maxLength: 30 }).map((parts) => parts.join('')),
    fc.string({ unit: 'grapheme', maxLength: 200 }),
  );

  it('cuts exactly the identifiers of any text, as the JS pattern does', async () => {
    await fc.assert(
      fc.asyncProperty(prose, async (text) => {
        const { rows } = await db.pool.query<{ parts: string }>('SELECT prose_identifier_parts($1) AS parts', [text]);
        expect(rows[0]!.parts.split(' ').filter((p) => p.length > 0)).toEqual(identifierPartsOracle(text));
      }),
      { numRuns: 300 },
    );
  });

  it('gives every text a page vector', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 300 }), async (text) => {
        const clean = text.replace(/\0/g, '');
        const { rows } = await db.pool.query<{ n: number }>("SELECT length(to_tsvector('english', page_search_words($1)))::int AS n", [clean]);
        expect(rows[0]!.n).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 200 },
    );
  });
});
