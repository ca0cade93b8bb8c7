import fc from 'fast-check';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isUserError } from '../../src/core/errors.js';
import { copyField, copyLine, copyLines } from '../../src/core/pack/copy-text.js';
import type { CopyValue } from '../../src/core/pack/copy-text.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

// COPY's text format has its own escaping; a value that came out different from what went in would be stored
// silently wrong. Every generated row goes through a real COPY into a temporary table and is read back.

// The characters COPY's text format treats specially, and its markers (\N, \.), mixed into arbitrary text.
const awkward = fc.constantFrom('\\', '\t', '\n', '\r', '\\N', '\\.', 'N', '.', '\u0001', '\u001f', '\u007f', '\u2028', '\u{1F600}', '\u00e9');
const anyChar = fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).filter((c) => !c.includes('\0'));
const text = fc.string({ unit: fc.oneof(awkward, anyChar), maxLength: 40 });
const row = fc.tuple(fc.option(text, { nil: null }), text, fc.option(fc.integer({ min: -2_147_483_648, max: 2_147_483_647 }), { nil: null }), fc.option(fc.boolean(), { nil: null }));

// What UTF-8 encoding makes of a lone surrogate, on the wire as in any text parameter.
const stored = (s: string | null) => (s === null ? null : s.replace(/\p{Cs}/gu, '\uFFFD'));

describe('COPY text-format escaping', () => {
  let db: TestDatabase;
  let client: pg.PoolClient;

  beforeAll(async () => {
    db = await createTestDatabase();
    client = await db.pool.connect();
    await client.query('CREATE TEMP TABLE copied (n int, a text, b text, i int, f boolean)');
  }, 120_000);
  afterAll(async () => {
    client?.release();
    await db?.drop();
  });

  it('round-trips any text without NUL, and NULLs, numbers and booleans, through a real COPY', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(row, { maxLength: 20 }), async (rows) => {
        await client.query('TRUNCATE copied');
        async function* lines(): AsyncGenerator<string> {
          for (const [n, r] of rows.entries()) yield copyLine([n, ...r]);
        }
        await copyLines(client, 'COPY copied (n, a, b, i, f) FROM STDIN', lines());
        const { rows: back } = await client.query<{ a: string | null; b: string; i: number | null; f: boolean | null }>('SELECT a, b, i, f FROM copied ORDER BY n');
        expect(back).toEqual(rows.map(([a, b, i, f]) => ({ a: stored(a), b: stored(b), i, f })));
      }),
      { numRuns: 200 },
    );
  }, 120_000);

  it('refuses a NUL character anywhere in a value as pack_invalid', () => {
    fc.assert(
      fc.property(text, text, (before, after) => {
        let error: unknown;
        try {
          copyField(`${before}\0${after}`);
        } catch (e) {
          error = e;
        }
        expect(isUserError(error) && (error as { code: string }).code === 'pack_invalid').toBe(true);
      }),
    );
  });

  it('leaves the connection usable after a COPY whose rows fail midway', async () => {
    async function* failing(): AsyncGenerator<string> {
      yield copyLine([1, 'a', 'b', 1, true] satisfies CopyValue[]);
      throw new Error('the source of rows failed');
    }
    await client.query('BEGIN');
    await expect(copyLines(client, 'COPY copied (n, a, b, i, f) FROM STDIN', failing())).rejects.toThrow(/failed/);
    await client.query('ROLLBACK');
    expect((await client.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
  });
});
