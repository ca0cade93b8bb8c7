import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshSearchTerms } from '../../src/core/search/lexicon.js';
import { buildTsQueries, parseQuery } from '../../src/core/search/query.js';
import { explainSearch, phraseIndexForms, phrasePairs, planRetrieval, searchSnippets } from '../../src/core/search/search.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { addPage, createSource } from './fixtures.js';

/** Which terms a search reads the index for (planRetrieval), and that the answers do not depend on it. */

const queries = (text: string) => buildTsQueries(parseQuery(text));

describe('planRetrieval', () => {
  it('reads the index for the other terms when very common ones are mixed in, and checks those on rows', () => {
    const q = queries('connect timeout retry');
    const plan = planRetrieval(q, [0.6, 0.01, 0.002]);
    expect(plan.find).toBe(`${q.perTerm[1]} & ${q.perTerm[2]}`);
    expect(plan.any).toBe(`${q.perTerm[1]} | ${q.perTerm[2]}`);
    expect(plan.relaxedOnRows).toBe(true);
  });

  it('reads the index for terms that are only fairly common', () => {
    const plan = planRetrieval(queries('connect timeout retry'), [0.1, 0.01, 0.002]);
    expect(plan.find).toBe('');
    expect(plan.relaxedOnRows).toBe(false);
  });

  it('checks the relaxed tier on rows only for three terms (a selective row then meets a pair at the common share)', () => {
    const plan = planRetrieval(queries('connect timeout retry backoff'), [0.6, 0.01, 0.002, 0.003]);
    expect(plan.relaxed).not.toBe('');
    expect(plan.relaxedOnRows).toBe(false);
    expect(plan.find).not.toBe('');
  });

  it('leaves stop words out of it (share 1: they constrain nothing)', () => {
    const plan = planRetrieval(queries('create a view'), [0.01, 1, 0.02]);
    expect(plan.find).toBe('');
  });

  it('reads the index for every term when all are selective', () => {
    const plan = planRetrieval(queries('timeout retry backoff'), [0.01, 0.002, 0.003]);
    expect(plan.find).toBe('');
    expect(plan.relaxedOnRows).toBe(false);
  });

  it('has no selective terms to read when all are common (the share decides about scanning instead)', () => {
    const plan = planRetrieval(queries('read file data'), [0.3, 0.4, 0.5]);
    expect(plan.find).toBe('');
    expect(plan.relaxed).toBe('');
    expect(plan.relaxedOnRows).toBe(false);
  });

  it('reads the index for the narrower form of a term when it has one, and checks the whole term on rows', () => {
    const q = queries('"dorpravel read"');
    expect(planRetrieval(q, [0.02], ["('dorpravel')"]).find).toBe("('dorpravel')");
    expect(planRetrieval(q, [0.02], ['']).find).toBe('');
    expect(planRetrieval(q, [0.02]).find).toBe('');
    // A very common term is still left to the rows, next to another term's narrower form.
    const two = queries('"dorpravel read" connect');
    expect(planRetrieval(two, [0.02, 0.6], ["('dorpravel')", '']).find).toBe("('dorpravel')");
  });

  it("leaves out of a phrase's index read only the words in most snippets, and stop words", () => {
    const counts: Record<string, number> = { dorpravel: 25, read: 940, build: 44, insert: 230 };
    const words = new Map<string, { stem: string | null; count: number; code: number }>(Object.entries(counts).map(([w, count]) => [w, { stem: w, count, code: 0 }]));
    words.set('the', { stem: null, count: 0, code: 0 });
    const stats = { words, total: 1000, queued: false };
    const forms = (text: string) => phraseIndexForms(parseQuery(text), stats, new Map(), null);
    expect(forms('"dorpravel read"')).toEqual(["('dorpravel')"]);
    expect(forms('"read the dorpravel"')).toEqual(["('dorpravel')"]);
    // "insert" is in 23%: without it the phrase would be checked on about four times as many rows.
    expect(forms('"build insert"')).toEqual(['']);
    // Not a phrase: identifiers and words are read whole.
    expect(forms('dorpravel_read read')).toEqual(['', '']);
  });

  it("reads a phrase's word pairs in place of its words, and the other terms as before", () => {
    const q = queries('"dorpravel read" connect');
    const plan = planRetrieval(q, [0.02, 0.01], ["('dorpravel')", ''], [['dorpravel read'], []]);
    expect(plan.pairs).toEqual(['dorpravel read']);
    expect(plan.find).toBe(q.perTerm[1]);
    // A phrase alone: the pairs are all there is to read.
    expect(planRetrieval(queries('"dorpravel read"'), [0.02], [''], [['dorpravel read']]).find).toBe('');
  });

  it('pairs the neighbouring words of a phrase, not across a stop word or a corrected word, and nothing else', () => {
    const words = new Map<string, { stem: string | null; count: number; code: number }>(['time', 'client', 'open', 'file'].map((w) => [w, { stem: w, count: 5, code: 0 }]));
    words.set('the', { stem: null, count: 0, code: 0 });
    const stats = { words, total: 1000, queued: false };
    const pairs = (text: string, corrected = new Map<string, string[]>()) => phrasePairs(parseQuery(text), stats, corrected);
    expect(pairs('"time client open"')).toEqual([['time client', 'client open']]);
    expect(pairs('"open the file" time')).toEqual([[], []]);
    expect(pairs('"time client" "open the file client"')).toEqual([['time client'], ['file client']]);
    expect(pairs('"time client open"', new Map([['client', ['clients']]]))).toEqual([[]]);
    expect(pairs('time_client time')).toEqual([[], []]);
  });

  it('has no relaxed tier to read differently with two terms', () => {
    const plan = planRetrieval(queries('connect timeout'), [0.6, 0.01]);
    expect(plan.relaxed).toBe('');
    expect(plan.relaxedOnRows).toBe(false);
    expect(plan.find).not.toBe('');
  });
});

describe('searches with common and selective terms', () => {
  let db: TestDatabase;
  const code = new Map<string, string>();

  beforeAll(async () => {
    db = await createTestDatabase();
    const source = await createSource(db.pool, 'mixed');
    // "connect" is in every snippet (common); "timeout" in three and "retry" in two of a hundred (selective), one
    // of them with both. The selective ones have a page each: a page matching every term lends its other
    // snippets, which is not what is tested here.
    const entry = (i: number, words: string[]) => {
      const c = `client_${i}.${words.join('_')}(host="db${i}")`;
      code.set(c, words.join(' '));
      return { title: `Opening connection ${i}`, description: `Uses ${words.join(' and ')}.`, code: c };
    };
    const selective = [
      ['connect', 'timeout'],
      ['connect', 'timeout'],
      ['connect', 'timeout', 'retry'],
      ['connect', 'retry'],
    ];
    for (const [i, words] of selective.entries()) await addPage(db.pool, source, `https://mixed.example/p${i}.html`, [entry(i, words)]);
    await addPage(
      db.pool,
      source,
      'https://mixed.example/rest.html',
      Array.from({ length: 96 }, (_, k) => entry(100 + k, ['connect'])),
    );
    // Every word counted, as after a crawl: how common a term is decides how it is searched.
    await refreshSearchTerms(db.pool);
  });
  afterAll(async () => {
    await db.drop();
  });

  it('finds every snippet with all the terms first, then those with all but one', async () => {
    const result = await searchSnippets(db.pool, { query: 'connect timeout retry', limit: 20 });
    const words = result.items.map((r) => code.get(r.code));
    expect(words[0]).toBe('connect timeout retry');
    // All but one: "connect timeout" (two of them) and "connect retry" (one), never "connect" alone.
    expect(words.slice(1).sort()).toEqual(['connect retry', 'connect timeout', 'connect timeout']);
    expect(result.total).toBe(4);
  });

  it('matches the same snippets as the database does for every term', async () => {
    const result = await searchSnippets(db.pool, { query: 'connect timeout', limit: 20 });
    const { rows } = await db.pool.query<{ id: number }>(`SELECT id FROM snippets WHERE search_vector @@ to_tsquery('english', 'connect & timeout') ORDER BY id`);
    expect(result.items.map((r) => r.id).sort((a, b) => a - b)).toEqual(rows.map((r) => r.id));
  });

  it('finds a quoted phrase with a very common word through its selective words, with the same matches', async () => {
    const phrase = 'connect and timeout';
    const result = await searchSnippets(db.pool, { query: `"${phrase}"`, limit: 20 });
    const { rows } = await db.pool.query<{ id: number }>(`SELECT id FROM snippets WHERE search_vector @@ phraseto_tsquery('english', $1) ORDER BY id`, [phrase]);
    expect(rows.length).toBe(3);
    expect(result.items.map((r) => r.id).sort((a, b) => a - b)).toEqual(rows.map((r) => r.id));
    // The index is read for "timeout" alone ("connect" is in every snippet, "and" a stop word).
    const plan = JSON.stringify((await explainSearch(db.pool, { query: `"${phrase}"` })).plan);
    expect(plan).toContain(`search_vector @@ '''timeout'''::tsquery`);
  });

  it('finds a quoted phrase through the pair index (migration 041), with the same matches as the database', async () => {
    const phrase = 'connect timeout';
    const result = await searchSnippets(db.pool, { query: `"${phrase}"`, limit: 20 });
    const { rows } = await db.pool.query<{ id: number }>(`SELECT id FROM snippets WHERE search_vector @@ phraseto_tsquery('english', $1) ORDER BY id`, [phrase]);
    expect(rows.length).toBe(3);
    expect(result.items.map((r) => r.id).sort((a, b) => a - b)).toEqual(rows.map((r) => r.id));
    const plan = JSON.stringify((await explainSearch(db.pool, { query: `"${phrase}"` })).plan);
    expect(plan).toContain('search_pairs(search_vector) @>');
    // The words are not read from the search index: the pairs find the rows, the phrase is checked on them.
    expect(plan).not.toContain(`search_vector @@ '''connect'''`);
  });

  it('lists every row a phrase of two words matches among the rows holding their pair (search_pairs)', async () => {
    // A phrase matches a vector when a position of its first word is followed by one of its second, whatever part
    // of the vector (title, text, code) each is in: every such row must be in the pair's index entry.
    const word = fc.constantFrom('time', 'client', 'times', 'the', 'a', 'open', 'file', 'opened', 'of', 'x1', 'naïve');
    const text = fc.array(word, { maxLength: 12 }).map((w) => w.join(' '));
    await fc.assert(
      fc.asyncProperty(text, text, fc.tuple(word, word), async (title, body, [first, second]) => {
        const { rows } = await db.pool.query<{ matches: boolean; listed: boolean }>(
          `SELECT v @@ phraseto_tsquery('english', $3) AS matches, search_pairs(v) @> search_pair_keys(ARRAY[$3]) AS listed
             FROM (SELECT setweight(to_tsvector('english', $1), 'A') || setweight(to_tsvector('english', $2), 'B') AS v) AS x`,
          [title, body, `${first} ${second}`],
        );
        if (rows[0]!.matches && readsPairs(first, second)) expect(rows[0]!.listed).toBe(true);
      }),
      { numRuns: 150 },
    );
  });
});

const STOP_WORDS = new Set(['the', 'a', 'of']);
/** Whether a phrase of these two words is one the search reads pairs for (phrasePairs: no stop word in it). */
function readsPairs(first: string, second: string): boolean {
  return !STOP_WORDS.has(first) && !STOP_WORDS.has(second);
}

describe('pages matching all terms but one', () => {
  let db: TestDatabase;
  const upsert = 'INSERT INTO totals SELECT id, n FROM staging ON CONFLICT (id) DO UPDATE SET n = EXCLUDED.n;';

  beforeAll(async () => {
    db = await createTestDatabase();
    const source = await createSource(db.pool, 'sqlish');
    // The answer's page names what it does ("upsert") only in its prose, far from the code, and never says
    // "many": no snippet and no page has every word of the question.
    await addPage(db.pool, source, 'https://sqlish.example/insert.html', [{ title: 'Inserting from a query', description: 'Adds the rows a query returns.', code: upsert }], {
      markdown: `# INSERT\n\nAn insert from a select that updates the row it conflicts with is also known as an upsert.\n\n## Inserting from a query\n\nAdds the rows a query returns.\n\n\`\`\`\n${upsert}\n\`\`\``,
    });
    // Pages whose prose has the question's other words, "many" (in a few snippets: selective) among them.
    for (let k = 0; k < 12; k++) {
      await addPage(db.pool, source, `https://sqlish.example/p${k}.html`, [{ title: `Report ${k}`, description: 'Lists rows.', code: `report_${k}()` }], {
        markdown: `# Report ${k}\n\nA select that returns many rows.\n\n## Report ${k}\n\nLists rows.\n\n\`\`\`\nreport_${k}()\n\`\`\``,
      });
    }
    const many = Array.from({ length: 3 }, (_, k) => ({ title: `Batch ${k}`, code: `insert_many_${k}(items)` }));
    const rest = Array.from({ length: 80 }, (_, k) => ({ title: `Other ${k}`, code: `other_${k}.select(value)` }));
    // One snippet elsewhere names the rare word, so the lexicon knows it (an unknown word would be corrected).
    const named = { title: 'Upsert notes', code: 'upsert_notes()' };
    await addPage(db.pool, source, 'https://sqlish.example/rest.html', [...many, named, ...rest]);
    await refreshSearchTerms(db.pool);
  });
  afterAll(async () => {
    await db.drop();
  });

  it("lend their snippets, the page with the question's rarest words first", async () => {
    const result = await searchSnippets(db.pool, { query: 'upsert many rows from a select', limit: 10 });
    const answer = result.items.findIndex((r) => r.code === upsert);
    expect(answer).toBeGreaterThanOrEqual(0);
    // Before every snippet of the pages that lack "upsert" and have the commoner words.
    const reports = result.items.map((r, i) => (r.code.startsWith('report_') ? i : Number.POSITIVE_INFINITY));
    expect(answer).toBeLessThan(Math.min(...reports));
  });
});

describe('the any-term tier with no library named', () => {
  let db: TestDatabase;
  const answer = 'mount_app(root_path="/api")';

  beforeAll(async () => {
    db = await createTestDatabase();
    // The library indexed first has more snippets naming "proxy" than the tier takes (MAX_RELAXED_CANDIDATES),
    // and enough others that "proxy" is still a selective word; the one naming "reverse" comes last.
    const first = await createSource(db.pool, 'first');
    const proxied = Array.from({ length: 240 }, (_, k) => ({ title: `Client ${k}`, description: 'Sends through a proxy.', code: `client_${k}.send()` }));
    await addPage(db.pool, first, 'https://first.example/clients.html', proxied);
    const filler = Array.from({ length: 4800 }, (_, k) => ({ title: `Entry ${k}`, description: `Entry number ${k} with headers.`, code: `entry_${k}()` }));
    await addPage(db.pool, first, 'https://first.example/entries.html', filler);
    const last = await createSource(db.pool, 'last');
    await addPage(db.pool, last, 'https://last.example/behind.html', [{ title: 'Behind a gateway', description: 'When a reverse gateway serves the app under a prefix.', code: answer }]);
    await refreshSearchTerms(db.pool);
  });
  afterAll(async () => {
    await db.drop();
  });

  it("takes the rows of every term, not the first library's rows in table order", async () => {
    // No unit has two of the words: only the any-term tier finds them. Read as one OR cut at its cap in table
    // order, the first library's "proxy" rows filled it and the answer was never a candidate.
    const result = await searchSnippets(db.pool, { query: 'reverse proxy headers', limit: 10 });
    expect(result.items.map((r) => r.code)).toContain(answer);
  });
});
