import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshSearchTerms, refreshSearchTermsNow } from '../../src/core/search/lexicon.js';
import { searchSnippets } from '../../src/core/search/search.js';
import { deleteSource } from '../../src/core/sources/manage.js';
import { clearWordStatsCache, rebuildSearchTerms, wordStats } from '../../src/core/search/typo.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { addPage, createSource } from './fixtures.js';
import type { FixtureSource } from './fixtures.js';

/** The typo lexicon is fed through a queue (migrations/010): nothing written may be missed or counted twice. */

let db: TestDatabase;
let source: FixtureSource;

const queued = async () => Number((await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM search_terms_queue')).rows[0]!.n);
const lexicon = async () => new Map((await db.pool.query<{ term: string; doc_count: number }>('SELECT term, doc_count FROM search_terms')).rows.map((r) => [r.term, r.doc_count]));

/** The lexicon as counted row by row from the stored vectors: snippets holding each word (an oracle for ts_stat). */
const countedFromVectors = async () =>
  new Map(
    (await db.pool.query<{ term: string; doc_count: number }>('SELECT w AS term, count(*)::int AS doc_count FROM snippets s, LATERAL search_vector_terms(s.search_vector) AS w GROUP BY w')).rows.map(
      (r) => [r.term, r.doc_count],
    ),
  );

/** Words with a code count, and that count: snippets holding the word in their code (migrations/030). */
const codeLexicon = async () =>
  new Map((await db.pool.query<{ term: string; code_count: number }>('SELECT term, code_count FROM search_terms WHERE code_count <> 0')).rows.map((r) => [r.term, r.code_count]));

/** The code counts as counted row by row from the code part (weight C) of the stored vectors. */
const codeCountedFromVectors = async () =>
  new Map(
    (await db.pool.query<{ term: string; n: number }>("SELECT w AS term, count(*)::int AS n FROM snippets s, LATERAL search_vector_terms(ts_filter(s.search_vector, '{c}')) AS w GROUP BY w")).rows.map(
      (r) => [r.term, r.n],
    ),
  );

/** Snippets written straight into the table, bypassing the page store (as a bulk load would). */
async function insertBypassingStore(page: string, snippets: Array<{ title: string; code: string }>): Promise<void> {
  const url = `https://lexicon.example/${page}.html`;
  const doc = await db.pool.query<{ id: string }>(
    `INSERT INTO documents (source_id, url, title, markdown, content_hash, source_type, crawl_job_id)
     VALUES ($1, $2, $3, $3, md5($2), 'crawled', $4) RETURNING id`,
    [source.id, url, page, source.jobId],
  );
  await db.pool.query(
    `INSERT INTO snippets (source_id, document_id, title, code, code_hash, source_url)
     SELECT $1, $2, t.title, t.code, md5(t.code), $3 FROM unnest($4::text[], $5::text[]) AS t(title, code)`,
    [source.id, doc.rows[0]!.id, url, snippets.map((x) => x.title), snippets.map((x) => x.code)],
  );
}

beforeAll(async () => {
  db = await createTestDatabase();
  source = await createSource(db.pool, 'lexicon');
});
afterAll(async () => {
  await db.drop();
});

describe('search lexicon upkeep', () => {
  it('folds a stored page into the lexicon right after its commit', async () => {
    await addPage(db.pool, source, 'https://lexicon.example/a.html', [{ title: 'Gathering results', code: 'results = await asyncio.gather(first(), second())' }]);
    expect(await queued()).toBe(0);
    const terms = await lexicon();
    expect(terms.get('gather')).toBe(1);
    expect(terms.get('asyncio')).toBe(1);
    // In the code, not only in the title: "gathering" is in both (one snippet), "result" in both.
    const code = await codeLexicon();
    expect(code.get('asyncio')).toBe(1);
    expect(code.get('gather')).toBe(1);
  });

  it('corrects a typo against snippets written without the page store, by folding the queue in first', async () => {
    await insertBypassingStore(
      'bulk',
      [1, 2, 3].map((i) => ({ title: `Quaternion rotation ${i}`, code: `rotate_quaternion(q${i})` })),
    );
    await db.pool.query('UPDATE sources SET snippet_count = snippet_count + 3 WHERE id = $1', [source.id]);
    expect(await queued()).toBe(3);
    expect((await lexicon()).has('quaternion')).toBe(false);

    const found = await searchSnippets(db.pool, { query: 'quaternoin' });
    expect(found.corrected).toEqual([{ from: 'quaternoin', to: 'quaternion' }]);
    expect(found.items.length).toBe(3);
    expect(await queued()).toBe(0);
    expect((await lexicon()).get('quaternion')).toBe(3);
  });

  it('counts every snippet exactly once when pages are stored concurrently', async () => {
    const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'];
    await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        addPage(db.pool, source, `https://lexicon.example/c${i}.html`, [
          { title: `Concurrent ${words[i % words.length]}`, code: `handle_${words[i % words.length]}(${i}) # widget` },
          { title: 'Concurrent shared', code: `shared_widget(${i})` },
        ]),
      ),
    );
    await refreshSearchTerms(db.pool);
    expect(await queued()).toBe(0);
    const incremental = await lexicon();
    expect(incremental.get('widget')).toBe(48);
    // The same lexicon as the words counted row by row, and as one rebuilt from scratch: nothing missed, nothing
    // counted twice. (Earlier tests' snippets are in both.)
    expect(incremental).toEqual(await countedFromVectors());
    const incrementalCode = await codeLexicon();
    expect(incrementalCode).toEqual(await codeCountedFromVectors());
    await rebuildSearchTerms(db.pool);
    expect(await lexicon()).toEqual(incremental);
    expect(await codeLexicon()).toEqual(incrementalCode);
  });

  it('lets one session refresh at a time and leaves the rest queued for the next', async () => {
    await insertBypassingStore('locked', [{ title: 'Zeppelin mooring', code: 'moor(zeppelin)' }]);
    await db.pool.query('UPDATE sources SET snippet_count = snippet_count + 1 WHERE id = $1', [source.id]);
    const holder = await db.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query("SELECT pg_advisory_xact_lock(hashtext('docdex.search_terms_queue'))");
      expect(await refreshSearchTerms(db.pool)).toBe(0);
      expect(await queued()).toBe(1);
      await holder.query('COMMIT');
    } finally {
      holder.release();
    }
    // Page writes of the test before may have left a trailing refresh that takes the row first: either way
    // it is folded in exactly once.
    await refreshSearchTerms(db.pool);
    expect(await queued()).toBe(0);
    expect((await lexicon()).get('zeppelin')).toBe(1);
  });

  it('folds pages written in quick succession in about a second later, without another write', async () => {
    await addPage(db.pool, source, 'https://lexicon.example/t1.html', [{ title: 'Trailing one', code: 'albatross_one()' }]);
    await addPage(db.pool, source, 'https://lexicon.example/t2.html', [{ title: 'Trailing two', code: 'cormorant_two()' }]);
    const deadline = Date.now() + 10_000;
    while ((await queued()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await queued()).toBe(0);
    const terms = await lexicon();
    expect(terms.get('albatross')).toBe(1);
    expect(terms.get('cormor')).toBe(1);
  });

  it('keeps the counts of known words briefly, but looks unknown words up every time', async () => {
    await addPage(db.pool, source, 'https://lexicon.example/k1.html', [{ title: 'Kept pelican', code: 'pelican_feed()' }]);
    await refreshSearchTerms(db.pool);
    expect((await wordStats(db.pool, ['pelican'])).words.get('pelican')?.count).toBe(1);
    const unknown = await wordStats(db.pool, ['flamingo']);
    expect(unknown.words.get('flamingo')?.count).toBe(0);

    await addPage(db.pool, source, 'https://lexicon.example/k2.html', [{ title: 'Pelican and flamingo', code: 'pelican_flamingo()' }]);
    await refreshSearchTerms(db.pool);
    // A known word's count only steers the plan: the kept answer stands until it expires or is cleared.
    expect((await wordStats(db.pool, ['pelican'])).words.get('pelican')?.count).toBe(1);
    expect((await wordStats(db.pool, ['pelican'], { fresh: true })).words.get('pelican')?.count).toBe(2);
    // A word the lexicon lacked is never kept: it may be new, or a typo to correct.
    expect((await wordStats(db.pool, ['flamingo'])).words.get('flamingo')?.count).toBe(1);
    // A query mixing kept and unseen words is looked up whole.
    expect((await wordStats(db.pool, ['pelican', 'ibis'])).words.get('pelican')?.count).toBe(2);
    clearWordStatsCache(db.pool);
    expect((await wordStats(db.pool, ['flamingo', 'pelican'])).words.get('pelican')?.count).toBe(2);
  });
});

describe('search lexicon counts when snippets leave or change', () => {
  /** After folding the queue in, every word counts exactly the snippets that hold it, and no word counts none. */
  async function expectExactCounts(): Promise<void> {
    await refreshSearchTermsNow(db.pool);
    expect(await queued()).toBe(0);
    expect(await lexicon()).toEqual(await countedFromVectors());
    expect(await codeLexicon()).toEqual(await codeCountedFromVectors());
    const drift = await db.pool.query('SELECT s.id FROM sources s WHERE s.snippet_count <> (SELECT count(*) FROM snippets WHERE source_id = s.id)');
    expect(drift.rows).toEqual([]);
  }

  it('subtracts the words of snippets a recrawl replaces, a moved snippet drops and a deleted source held', async () => {
    const other = await createSource(db.pool, 'drift');
    const base = 'https://drift.example';
    await addPage(db.pool, other, `${base}/all.html`, [
      { title: 'Chaining iterables', code: 'itertools.chain(first, second)' },
      { title: 'Everything about manifolds', code: 'manifold_common(x)\n' + '# padding\n'.repeat(40) },
    ]);
    await addPage(db.pool, other, `${base}/chain.html`, [{ title: 'Chain usage', code: 'chained = chain(a, b)' }]);
    await expectExactCounts();

    // A recrawl of a changed page: its old code goes, new code comes.
    await addPage(db.pool, other, `${base}/chain.html`, [{ title: 'Chain rewritten', code: 'combined = concatenate(a, b)' }]);
    await expectExactCounts();

    // A smaller page with an anchor shows the manifold code: the snippet moves there and takes its title.
    await addPage(db.pool, other, `${base}/manifold.html`, [{ title: 'Tesseract projection', code: 'manifold_common(x)\n' + '# padding\n'.repeat(40), anchor: 'proj' }]);
    await expectExactCounts();
    expect((await lexicon()).has('tesseract')).toBe(true);
    expect((await lexicon()).has('everyth')).toBe(false);

    // An LLM rewrite of a title and description.
    await db.pool.query("UPDATE snippets SET title = 'Gyroscope precession', description = 'Spinning tops', llm_enhanced = true WHERE source_id = $1", [other.id]);
    await expectExactCounts();

    // The page disappears, then the whole source.
    await addPage(db.pool, other, `${base}/chain.html`, []);
    await expectExactCounts();
    expect((await lexicon()).get('gyroscop')).toBe(2);
    await deleteSource(db.pool, other.id);
    await expectExactCounts();
    expect((await lexicon()).has('gyroscop')).toBe(false);
  });

  it('stays exact when pages are recrawled concurrently while refreshes run', async () => {
    const busy = await createSource(db.pool, 'busy');
    const animals = ['ocelot', 'margay', 'serval', 'caracal', 'jaguarundi', 'kodkod'];
    let writing = true;
    const refresher = (async () => {
      while (writing) {
        await refreshSearchTerms(db.pool);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await Promise.all(
      Array.from({ length: 8 }, async (_, page) => {
        for (let round = 0; round < 4; round++) {
          const animal = animals[(page + round) % animals.length]!;
          await addPage(db.pool, busy, `https://busy.example/p${page}.html`, [
            { title: `Feeding the ${animal}`, code: `feed_${animal}(${page}, ${round})` },
            { title: `Shared ${animals[round % animals.length]!} pen`, code: `open_pen(${round})` },
          ]);
        }
      }),
    );
    writing = false;
    await refresher;
    await expectExactCounts();
  });

  it('counts nothing for snippets deleted or changed before their words were folded in', async () => {
    await insertBypassingStore('transient', [
      { title: 'Ephemeral narwhal', code: 'narwhal_swim()' },
      { title: 'Lasting walrus', code: 'walrus_swim()' },
    ]);
    await db.pool.query("UPDATE snippets SET title = 'Lasting walrus tusk' WHERE title = 'Lasting walrus'");
    await db.pool.query("DELETE FROM snippets WHERE title = 'Ephemeral narwhal'");
    await db.pool.query('UPDATE sources SET snippet_count = snippet_count + 1 WHERE id = $1', [source.id]);
    await expectExactCounts();
    const terms = await lexicon();
    expect(terms.has('narwhal')).toBe(false);
    expect(terms.get('tusk')).toBe(1);
    expect(terms.get('walrus')).toBe(1);

    // Changed again and deleted after being counted: each change counts once.
    await db.pool.query("UPDATE snippets SET title = 'Lasting walrus ivory' WHERE title = 'Lasting walrus tusk'");
    await db.pool.query("UPDATE snippets SET title = 'Lasting walrus blubber' WHERE title = 'Lasting walrus ivory'");
    await expectExactCounts();
    expect((await lexicon()).has('tusk')).toBe(false);
    await db.pool.query("DELETE FROM snippets WHERE title = 'Lasting walrus blubber'");
    await db.pool.query('UPDATE sources SET snippet_count = snippet_count - 1 WHERE id = $1', [source.id]);
    await expectExactCounts();
    expect((await lexicon()).has('walrus')).toBe(false);
  });
});
