import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diversify } from '../../src/core/search/diversify.js';
import { WEIGHTS } from '../../src/core/search/rank.js';
import { explainScores, searchSnippets } from '../../src/core/search/search.js';
import { listSourceSnippets } from '../../src/core/store/snippets.js';
import { removePage } from '../../src/core/store/pages.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { addPage, createSource } from './fixtures.js';
import type { FixtureSource } from './fixtures.js';

/**
 * Sections are search units beside snippets (issue 50): a page without code is found, results say their kind,
 * snippet listings and counters stay snippets only, and the first results come from distinct pages.
 */

let db: TestDatabase;
let source: FixtureSource;

const CORS = [
  '# CORS (Cross-Origin Resource Sharing) { #cors }',
  '',
  'CORS refers to a frontend in a browser talking to a backend of another origin.',
  '',
  '## Wildcards { #wildcards }',
  '',
  'It is possible to allow every origin with a wildcard, but then no credentials are sent.',
  '',
  '## Use CORSMiddleware',
  '',
  'Add the middleware to the app with the allowed origins.',
].join('\n');

beforeAll(async () => {
  db = await createTestDatabase();
  source = await createSource(db.pool, 'webkit');
  // A page with no code at all: before sections it could not be found.
  await addPage(db.pool, source, 'https://webkit.example/tutorial/cors', [], { title: 'CORS', markdown: CORS, sections: true });
  // A page with many blocks about one thing, and a smaller page about the same.
  await addPage(
    db.pool,
    source,
    'https://webkit.example/tutorial/routing',
    Array.from({ length: 6 }, (_, i) => ({ title: `Route handler ${i}`, code: `router.route("/items/${i}", handler${i})`, description: 'Match a route to its handler.' })),
    { title: 'Routing', sections: true },
  );
  await addPage(db.pool, source, 'https://webkit.example/guide/router', [{ title: 'Handlers', code: 'app.route("/", handler)', description: 'Route a path to its handler.' }], {
    title: 'Router guide',
    sections: true,
  });
}, 60_000);

afterAll(async () => {
  await db?.drop();
});

describe('sections as search units', () => {
  it('finds a page without code by its prose, as a section with its breadcrumb and anchor', async () => {
    const r = await searchSnippets(db.pool, { query: 'allow every origin wildcard', source: source.id });
    expect(r.items[0]).toMatchObject({ kind: 'section', title: 'CORS (Cross-Origin Resource Sharing) › Wildcards', source_url: 'https://webkit.example/tutorial/cors#wildcards' });
    expect(r.items[0]!.code).toContain('no credentials are sent');
  });

  it('keeps snippet listings and the source counters to snippets, and counts sections apart', async () => {
    const listed = await listSourceSnippets(db.pool, source.id, { limit: 100, offset: 0 });
    expect(listed.items.every((s) => s.kind === 'snippet')).toBe(true);
    expect(listed.total).toBe(7);
    const { rows } = await db.pool.query<{ snippet_count: number; section_count: number; sections: number }>(
      "SELECT snippet_count, section_count, (SELECT count(*)::int FROM snippets WHERE source_id = $1 AND kind = 'section') AS sections FROM sources WHERE id = $1",
      [source.id],
    );
    expect(rows[0]!.snippet_count).toBe(7);
    expect(rows[0]!.section_count).toBe(rows[0]!.sections);
    expect(rows[0]!.sections).toBeGreaterThan(3);
  });

  it('takes a removed page and its sections out of the counters', async () => {
    const other = await createSource(db.pool, 'gone');
    await addPage(db.pool, other, 'https://gone.example/a', [], { title: 'A', markdown: '# A\n\nSome prose.\n\n## B\n\nMore prose.', sections: true });
    await removePage(db.pool, other.id, 'https://gone.example/a');
    const { rows } = await db.pool.query<{ section_count: number; n: number }>('SELECT section_count, (SELECT count(*)::int FROM snippets WHERE source_id = $1) AS n FROM sources WHERE id = $1', [
      other.id,
    ]);
    expect(rows[0]).toEqual({ section_count: 0, n: 0 });
  });

  it("finds snippets in a pool of their own: sections matching every term do not stop the snippets' relaxed search", async () => {
    // Sections hold prose and code, so they match every term of a question far more often than a snippet. Counted
    // in one pool, these 31 sections filled the every-term tier past the count below which the search looks
    // further (the pages whose text has every term lend their snippets): the snippet answering on a page that
    // names the rest of the question in its prose was never a candidate.
    const pools = await createSource(db.pool, 'pools');
    for (let i = 0; i < 30; i++) {
      await addPage(db.pool, pools, `https://pools.example/notes/${i}`, [], {
        title: `Field note ${i}`,
        markdown: `# Field note ${i}\n\nThe glacier feeds the delta. ${'Notes on weather and rock. '.repeat(20)}`,
        sections: true,
      });
    }
    await addPage(db.pool, pools, 'https://pools.example/glacier', [{ title: 'Glacier', code: 'glacier.move()', description: 'How a glacier moves.' }], {
      title: 'Glacier',
      markdown: '# Glacier\n\nHow a glacier moves.\n\n```\nglacier.move()\n```\n\nIts meltwater builds a delta.',
      sections: true,
    });
    const r = await searchSnippets(db.pool, { query: 'glacier delta', source: pools.id });
    const found = r.items.filter((i) => i.source_url.startsWith('https://pools.example/glacier'));
    expect(found.find((i) => i.kind === 'snippet')).toMatchObject({ code: 'glacier.move()' });
  });

  it("ranks the snippet whose code answers above a section that only mentions the query's words in its prose and parent headings", async () => {
    // The section below names "listen" in a parent heading and "notifications" in its prose, and a channel in
    // its code; the snippet runs LISTEN on a channel, its page saying the rest. Counted as if its code did, the section's prose and its
    // breadcrumb's parent headings put the section first; they are context, as a page's text is to a snippet.
    const units = await createSource(db.pool, 'units');
    await addPage(db.pool, units, 'https://units.example/client', [], {
      title: 'Client library',
      markdown: [
        '# Client library',
        '',
        '## Listen and wait',
        '',
        'How a client waits for events.',
        '',
        '### Channels',
        '',
        'A session may wait on a channel for the notifications other sessions send; each one arrives once.',
        '',
        '```',
        'session.wait(channel)',
        '```',
      ].join('\n'),
      sections: true,
    });
    await addPage(db.pool, units, 'https://units.example/listen', [{ title: 'Synopsis | LISTEN', code: 'LISTEN channel', description: 'Register the session.' }], {
      title: 'LISTEN',
      markdown: '# LISTEN\n\nListen for notifications.\n\n## Synopsis\n\nRegister the session.\n\n```\nLISTEN channel\n```',
      sections: true,
    });
    const r = await searchSnippets(db.pool, { query: 'listen for notifications on a channel', source: units.id });
    const rank = (url: string, kind: string) => r.items.findIndex((i) => i.source_url.startsWith(url) && i.kind === kind);
    expect(r.items[0]!.source_url).toMatch(/^https:\/\/units\.example\/listen/);
    expect(rank('https://units.example/listen', 'snippet')).toBeLessThan(rank('https://units.example/client', 'section'));
  });

  it('shows distinct pages first and folds the rest of a page under its first result', async () => {
    // By score alone the routing page's twelve units (six snippets, six sections) fill the first results: each
    // beats the router page's best, though by less than one query term's share, so that page is not clearly
    // the only answer.
    const all = await searchSnippets(db.pool, { query: 'route handler', source: source.id, limit: 20 });
    const routing = all.items.filter((i) => i.source_url.startsWith('https://webkit.example/tutorial/routing'));
    const best = Math.max(...all.items.filter((i) => !routing.includes(i)).map((i) => i.score));
    expect(routing.filter((i) => i.score > best)).toHaveLength(12);
    const r = await searchSnippets(db.pool, { query: 'route handler', source: source.id, limit: 3 });
    expect(r.items.map((i) => i.source_url.split('#')[0])).toEqual(['https://webkit.example/tutorial/routing', 'https://webkit.example/guide/router', 'https://webkit.example/tutorial/routing']);
    const more = r.items[0]!.more ?? [];
    expect(more).toHaveLength(3);
    for (const m of more) expect(m.source_url.startsWith('https://webkit.example/tutorial/routing')).toBe(true);
    expect(r.items[1]!.more?.map((m) => m.source_url)).toEqual(['https://webkit.example/guide/router#handlers']);
    // Only a page's first result carries its folded units.
    expect(r.items[2]!.more).toBeUndefined();
  });
});

describe('explainScores', () => {
  it("splits each ranked unit's score into its weighted signals, which add up to the score the search ranks by", async () => {
    const units = await explainScores(db.pool, { query: 'route handler', source: source.id, limit: 5 });
    expect(units.length).toBeGreaterThan(3);
    for (const u of units) {
      expect(Object.keys(u.parts).sort()).toEqual(Object.keys(WEIGHTS).sort());
      expect(Object.values(u.parts).reduce((a, b) => a + b, 0)).toBeCloseTo(u.score, 9);
    }
    // Best first, and the scores the search's results carry.
    expect(units.map((u) => u.score)).toEqual([...units.map((u) => u.score)].sort((a, b) => b - a));
    const scoreOf = new Map(units.map((u) => [u.id, u.score]));
    const r = await searchSnippets(db.pool, { query: 'route handler', source: source.id, limit: 5 });
    for (const item of r.items) expect(item.score).toBeCloseTo(scoreOf.get(item.id)!, 4);
  });
});

describe('reading a page of results', () => {
  it('reads the results shown and the units folded under them in one statement after the ranking', async () => {
    // The statements the search's connection sends, by name or text (pg's own client, not docdex's code).
    const sent: string[] = [];
    const wrapped = new WeakSet<object>();
    const record = (client: pg.PoolClient) => {
      if (wrapped.has(client)) return;
      wrapped.add(client);
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        const config = args[0] as string | { name?: string; text: string };
        sent.push(typeof config === 'string' ? config : (config.name ?? config.text));
        return query(...args);
      };
    };
    db.pool.on('acquire', record);
    try {
      const r = await searchSnippets(db.pool, { query: 'route handler', source: source.id, limit: 3 });
      expect(r.items[0]!.more?.length).toBeGreaterThan(0);
    } finally {
      db.pool.off('acquire', record);
    }
    const ranking = sent.findIndex((s) => /^docdex-search-[0-9a-f]{16}$/.test(s) || /^\s*WITH q AS MATERIALIZED/.test(s));
    expect(ranking).toBeGreaterThanOrEqual(0);
    expect(sent.slice(ranking + 1)).toHaveLength(1);
  });
});

describe('variants of one example', () => {
  it("folds a page's units of one title under the page's first result, variants first (issue #49)", async () => {
    const node = await createSource(db.pool, 'fsnode');
    // A CommonJS and an ESM copy of one example under one title, as Node's docs give them; another page's answer.
    await addPage(
      db.pool,
      node,
      'https://fsnode.example/api/fs',
      [
        { title: 'Read a whole file', code: "const { readFileSync } = require('node:fs');\nreadFileSync('notes.txt', 'utf8');", description: 'Read a whole file at once.' },
        { title: 'Read a whole file', code: "import { readFileSync } from 'node:fs';\nreadFileSync('notes.txt', 'utf8');", description: 'Read a whole file at once.' },
        { title: 'Read a file in chunks', code: "import { createReadStream } from 'node:fs';\ncreateReadStream('notes.txt');", description: 'Read a whole file in chunks.' },
      ],
      { title: 'File system' },
    );
    await addPage(db.pool, node, 'https://fsnode.example/guide/files', [{ title: 'Files', code: "await readFile('notes.txt', 'utf8');", description: 'Read a whole file with promises.' }], {
      title: 'Working with files',
    });
    const r = await searchSnippets(db.pool, { query: 'read whole file', source: node.id, limit: 10 });
    const titles = r.items.map((i) => i.title);
    // One of the two copies is a result; the other is folded under it, before the page's other units.
    expect(titles.filter((t) => t === 'Read a whole file')).toHaveLength(1);
    const first = r.items.find((i) => i.title === 'Read a whole file')!;
    expect(first.more?.[0]).toMatchObject({ title: 'Read a whole file', kind: 'snippet' });
    expect(first.more!.map((m) => m.id)).not.toContain(first.id);
    // Nothing is lost: every unit is a result or folded under one.
    const ids = new Set([...r.items.map((i) => i.id), ...r.items.flatMap((i) => (i.more ?? []).map((m) => m.id))]);
    const { rows } = await db.pool.query<{ id: string }>("SELECT id FROM snippets WHERE source_id = $1 AND kind = 'snippet'", [node.id]);
    for (const row of rows) expect(ids.has(Number(row.id))).toBe(true);
  });
});

describe('diversify', () => {
  const u = (id: number, page: string, score: number) => ({ id, page, score });

  it("puts each page's best unit first, in score order, then the rest", () => {
    expect(diversify([u(1, 'a', 9), u(2, 'a', 8), u(3, 'b', 7), u(4, 'c', 6), u(5, 'a', 5)], 3).map((x) => x.id)).toEqual([1, 3, 4, 2, 5]);
  });

  it("keeps a page's unit ahead when it beats the next page's best by the margin: that page is clearly the answer", () => {
    expect(diversify([u(1, 'a', 9), u(2, 'a', 8.5), u(3, 'b', 4)], 2).map((x) => x.id)).toEqual([1, 2, 3]);
  });

  it('keeps every unit once, whatever the order and ties (property-like sweep)', () => {
    for (let n = 0; n < 40; n++) {
      const units = Array.from({ length: n }, (_, i) => u(i, `p${(i * 7) % 5}`, (i * 13) % 11));
      const out = diversify(units, 1);
      expect(out.map((x) => x.id).sort((a, b) => a - b)).toEqual(units.map((x) => x.id));
      // A page's units keep their order among themselves.
      for (const page of new Set(units.map((x) => x.page))) {
        const scores = out.filter((x) => x.page === page).map((x) => x.score);
        expect(scores).toEqual([...scores].sort((a, b) => b - a));
      }
    }
  });
});
