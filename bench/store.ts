// Storing pages (issue 52): BENCH_STORE_PAGES (default 400) pages of the real Python docs (DOCDEX_CORPUS_DIR),
// extracted first (extraction has its own bench), then written one at a time through storePage into a scratch
// database, as one crawl writer does. Beside it, in the same run and the same database, two floors:
// - "bare rows": the same page's rows (the document and every snippet and section) written in one transaction
//   by one INSERT per table into tables of the same columns without search vectors, indexes or triggers: what
//   writing the bytes costs;
// - "vectors alone" (the floor in the ratio): the page's search vectors computed by the generated columns' own
//   expressions (read from the catalog), nothing written: what the text search parse costs, which no store can
//   skip.
// Reported: ms per page (wall time of one writer; the client's share is small next to PostgreSQL's) and the
// ratio to each floor.
// Run alone: npm run build && node --experimental-strip-types bench/store.ts
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { loadConfig } from '../dist/core/config.js';
import { createPool, resolveConnection } from '../dist/core/db/connect.js';
import { migrate } from '../dist/core/db/migrate.js';
import { extractDocument } from '../dist/core/extract/index.js';
import { storePage } from '../dist/core/store/pages.js';
import type { PageWrite } from '../dist/core/store/pages.js';
import { siteHtmlFiles } from './harness/corpus.ts';
import { generatedExpression } from './harness/vectors.ts';
import { ensureDatabase } from './search.ts';

type Row = Record<string, string | number>;

const PAGES = Number(process.env.BENCH_STORE_PAGES ?? 400);

function corpusPages(): Omit<PageWrite, 'sourceId' | 'job'>[] {
  const dir = process.env.DOCDEX_CORPUS_DIR;
  if (!dir) throw new Error('DOCDEX_CORPUS_DIR is not set (see /work/shared/bin/fetch-doc-corpus)');
  const root = path.join(dir, 'python');
  return siteHtmlFiles(root, 'python')
    .slice(0, PAGES)
    .map((file) => {
      const url = new URL(file, 'http://python.docs.test/').href;
      const { page, snippets, sections } = extractDocument({ url, contentType: 'text/html', body: readFileSync(path.join(root, file)) });
      return { url, title: page.title, markdown: page.markdown, contentHash: page.contentHash, snippets, sections: sections ?? [] };
    });
}

type Page = ReturnType<typeof corpusPages>[number];

function units(p: Page): { kind: string; title: string; description: string; language: string; code: string }[] {
  return [
    ...p.snippets.map((s) => ({ kind: 'snippet', title: s.title, description: s.description, language: s.language, code: s.code })),
    ...(p.sections ?? []).map((s) => ({ kind: 'section', title: s.title, description: s.description, language: s.language, code: s.text })),
  ];
}

async function timePages(pages: Page[], write: (p: Page) => Promise<void>): Promise<number> {
  const started = performance.now();
  for (const p of pages) await write(p);
  return (performance.now() - started) / pages.length;
}

async function bareRows(pool: pg.Pool, pages: Page[]): Promise<number> {
  // A temporary table lives on one connection: one client for the whole run.
  const client = await pool.connect();
  try {
    await client.query('CREATE TEMP TABLE bare_documents (url text, title text, markdown text, content_hash text)');
    await client.query('CREATE TEMP TABLE bare_units (kind text, title text, description text, language text, code text)');
    return await timePages(pages, async (p) => {
      const u = units(p);
      await client.query('BEGIN');
      await client.query('INSERT INTO bare_documents VALUES ($1, $2, $3, $4)', [p.url, p.title, p.markdown, p.contentHash]);
      await client.query('INSERT INTO bare_units SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])', [
        u.map((x) => x.kind),
        u.map((x) => x.title),
        u.map((x) => x.description),
        u.map((x) => x.language),
        u.map((x) => x.code),
      ]);
      await client.query('COMMIT');
    });
  } finally {
    client.release();
  }
}

async function vectorsOnly(pool: pg.Pool, pages: Page[]): Promise<number> {
  const docExpr = await generatedExpression(pool, 'documents');
  const unitExpr = await generatedExpression(pool, 'snippets');
  return timePages(pages, async (p) => {
    const u = units(p);
    await pool.query(
      `SELECT (SELECT length(${docExpr}) FROM (SELECT $1::text AS title, $2::text AS markdown) d),
              (SELECT sum(length(${unitExpr})) FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) AS t(kind, title, description, code))`,
      [p.title, p.markdown, u.map((x) => x.kind), u.map((x) => x.title), u.map((x) => x.description), u.map((x) => x.code)],
    );
  });
}

export async function benchStore(): Promise<Row[]> {
  const info = await ensureDatabase(await resolveConnection(loadConfig()), 'docdex_bench_store', true);
  const pool = createPool(info, { max: 2, applicationName: 'docdex-bench-store' });
  try {
    await migrate(pool);
    const source = await pool.query<{ id: string }>(`INSERT INTO sources (name, kind) VALUES ('python', 'crawl') RETURNING id`);
    const sourceId = source.rows[0]!.id;
    const job = await pool.query<{ id: string }>(`INSERT INTO crawl_jobs (source_id, name, status, start_urls) VALUES ($1, 'bench', 'completed', ARRAY['http://python.docs.test/']) RETURNING id`, [
      sourceId,
    ]);
    const jobId = job.rows[0]!.id;
    const pages = corpusPages();
    const rows = pages.reduce((n, p) => n + 1 + units(p).length, 0);
    const docdex = await timePages(pages, async (p) => {
      await storePage(pool, { ...p, sourceId, job: { kind: 'crawl', id: jobId } });
    });
    const bare = await bareRows(pool, pages);
    const vectors = await vectorsOnly(pool, pages);
    return [
      {
        row: `store one page (Python docs, ${pages.length} pages, ${(rows / pages.length).toFixed(1)} rows a page), one writer`,
        docdex: `${docdex.toFixed(2)} ms/page`,
        'floor: vectors alone': `${vectors.toFixed(2)} ms/page`,
        ratio: (docdex / vectors).toFixed(2),
        'bare rows': `${bare.toFixed(2)} ms/page`,
        'ratio to bare rows': (docdex / bare).toFixed(1),
        goal: '≤ 5 ms/page',
        met: docdex <= 5 ? 'yes' : 'no',
      },
    ];
  } finally {
    await pool.end();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of await benchStore())
    console.log(
      Object.entries(r)
        .map(([k, v]) => `${k}: ${v}`)
        .join(' | '),
    );
}
