import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { termCodeness } from '../../src/core/search/codeness.js';
import { parseQuery } from '../../src/core/search/query.js';
import { searchSnippets } from '../../src/core/search/search.js';
import type { WordStats } from '../../src/core/search/typo.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { addPage, createSource } from './fixtures.js';

/** A query's terms weigh in the coverage by how much their words name code (search/codeness.ts). */

function stats(counts: Record<string, [count: number, code: number] | 'stop'>): WordStats {
  const words = new Map(Object.entries(counts).map(([w, c]) => [w, c === 'stop' ? { stem: null, count: 0, code: 0 } : { stem: w, count: c[0], code: c[1] }]));
  return { words, total: 1000, queued: false };
}

describe('term codeness', () => {
  it('weighs a word the code holds above one only the prose around it uses, the known terms averaging 1', () => {
    const weights = termCodeness(parseQuery('handle finally'), stats({ handle: [399, 3], finally: [99, 99] }), new Map(), null);
    expect(weights[1]!).toBeGreaterThan(weights[0]! * 5);
    expect((weights[0]! + weights[1]!) / 2).toBeCloseTo(1, 10);
  });

  it('gives 1 to stop words and to words nothing counts, and leaves them out of the average', () => {
    const weights = termCodeness(parseQuery('the listen qwzx channel'), stats({ the: 'stop', listen: [50, 40], qwzx: [0, 0], channel: [50, 10] }), new Map(), null);
    expect(weights[0]).toBe(1);
    expect(weights[2]).toBe(1);
    expect((weights[1]! + weights[3]!) / 2).toBeCloseTo(1, 10);
    expect(weights[1]!).toBeGreaterThan(weights[3]!);
  });

  it("counts a corrected word by its corrections' counts", () => {
    const typed = stats({ finaly: [0, 0], handle: [399, 3] });
    const weights = termCodeness(parseQuery('handle finaly'), typed, new Map([['finaly', ['finally']]]), stats({ finally: [99, 99] }));
    expect(weights[1]!).toBeGreaterThan(weights[0]! * 5);
  });

  it('is finite and positive for any query and any counts of its words, the known terms averaging 1', () => {
    // Any counts, even ones that disagree (more in code than in all, below zero).
    const count = fc.oneof(fc.constant('stop' as const), fc.tuple(fc.integer({ min: -5, max: 10_000 }), fc.integer({ min: -5, max: 10_000 })));
    const token = fc.oneof(fc.constantFrom('handle', 'finally', 'the', 'json.load', 'read_file', 'readFileSync', '"try the except"', 'a'), fc.string({ maxLength: 12 }));
    fc.assert(
      fc.property(fc.array(token, { maxLength: 8 }), fc.array(count, { minLength: 1, maxLength: 12 }), fc.array(fc.boolean(), { maxLength: 12 }), (tokens, list, corrected) => {
        const parsed = parseQuery(tokens.join(' '));
        const words = [...new Set(parsed.terms.flatMap((t) => t.words))];
        const st = stats(Object.fromEntries(words.map((w, i) => [w, list[i % list.length]!])));
        // Some words corrected to spellings with counts of their own.
        const corrections = new Map(words.filter((_, i) => corrected[i]).map((w) => [w, [`${w}x`]]));
        const correctionStats = stats(Object.fromEntries(words.map((w, i) => [`${w}x`, list[(i + 1) % list.length]!])));
        const weights = termCodeness(parsed, st, corrections, correctionStats);
        expect(weights).toHaveLength(parsed.terms.length);
        for (const w of weights) expect(Number.isFinite(w) && w > 0).toBe(true);
        const weighed = weights.filter((w) => w !== 1);
        if (weighed.length === weights.length && weights.length > 0) expect(weighed.reduce((a, b) => a + b, 0) / weighed.length).toBeCloseTo(1, 6);
      }),
    );
  });
});

describe('ranking by codeness', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    const source = await createSource(db.pool, 'errors');
    // The docs' prose says "handle" and "errors" everywhere, their code seldom; `try` and `finally` are code.
    await addPage(
      db.pool,
      source,
      'https://errors.example/background.html',
      Array.from({ length: 40 }, (_, i) => ({
        title: `Handle errors in stage ${i}`,
        description: 'How errors are handled here.',
        code: i % 2 === 0 ? `try:\n    stage_${i}()\nfinally:\n    close_${i}()` : `stage_${i}(retries=${i})`,
      })),
    );
    await addPage(db.pool, source, 'https://errors.example/tutorial.html', [
      { title: 'Examples', description: 'Handle errors raised by a call with a try statement.', code: 'try:\n    risky()\nexcept ValueError:\n    recover()', anchor: 'handling' },
      { title: 'Examples', description: 'A finally clause runs clean-up code in any event.', code: 'try:\n    work()\nfinally:\n    release()', anchor: 'cleanup' },
    ]);
  });
  afterAll(async () => {
    await db.drop();
  });

  it('puts first the snippet with the asked-for keyword, over one with more of the words the prose uses', async () => {
    const found = await searchSnippets(db.pool, { query: 'handle errors with try finally', limit: 60 });
    const tutorial = found.items.filter((s) => s.source_url.startsWith('https://errors.example/tutorial.html'));
    expect(tutorial.map((s) => s.source_url.split('#')[1])).toEqual(['cleanup', 'handling']);
  });
});
