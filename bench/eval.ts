// `npm run eval`: relevance of docdex search on the real documentation corpus.
//
// Serves the python, postgres and node sites of DOCDEX_CORPUS_DIR (default ~/.cache/docdex-corpus) on
// 127.0.0.1, crawls them with the real crawler at CRAWL_DELAY=0 into a scratch database (kept and reused while
// the corpus and the schema are unchanged), runs every query of the dev files (../shared/eval/queries-dev.jsonl,
// the API-style queries, and queries-dev-intent.jsonl, phrased as people ask) through searchSnippets, and prints
// for each file and both together MRR@10, Hit@1 and Hit@5 by page and Snip@1 and Snip@3 (a snippet of a relevant
// page whose code matches the query's pattern), with the query's library named (`--source`) and with all
// libraries mixed, clean and with 1-2 deterministic typos per query.
//
// Environment: EVAL_QUERIES (query files, comma-separated), EVAL_INGEST=crawl|direct (direct loads the HTML
// files without HTTP: quicker, same extraction and store), EVAL_REBUILD=1 (re-index even if cached),
// EVAL_DATABASE (scratch database name, default docdex_eval), EVAL_VERBOSE=1 (every query's ranked pages),
// EVAL_SPELLING=0 (skip the typo-correction accuracy, the slowest part).
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../dist/core/config.js';
import { createPool, resolveConnection } from '../dist/core/db/connect.js';
import type { ConnectionInfo } from '../dist/core/db/connect.js';
import { latestMigrationId, migrate } from '../dist/core/db/migrate.js';
import { installBossSchema } from '../dist/core/queue/boss.js';
import { startCrawl, startCrawlWorkers, waitForJob } from '../dist/core/crawl/index.js';
import { extractDocument } from '../dist/core/extract/index.js';
import { searchSnippets } from '../dist/core/search/search.js';
import { correctWords } from '../dist/core/search/typo.js';
import { storePage } from '../dist/core/store/pages.js';
import { settleSearchIndexes } from '../dist/core/search/settle.js';
import { EVAL_SITES, indexEvalSites, siteFingerprint } from './harness/corpus.ts';
import type { EvalSiteName, IndexedSite, IngestMode } from './harness/corpus.ts';
import { correctionAccuracy, evaluate, loadQueries, summarise } from './harness/relevance.ts';
import type { EvalQuery, EvalSite, EvalSummary, EvaluateOptions } from './harness/relevance.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const TARGETS = { mrr10: 0.8, hit5: 0.9 };

function withDatabase(info: ConnectionInfo, database: string): ConnectionInfo {
  const config = { ...info.config };
  if (typeof config.connectionString === 'string') {
    const url = new URL(config.connectionString);
    url.pathname = `/${database}`;
    config.connectionString = url.toString();
  } else {
    config.database = database;
  }
  return { ...info, config, display: `${info.display.replace(/\/[^/]*$/, '')}/${database}` };
}

async function ensureDatabase(info: ConnectionInfo, name: string, fresh: boolean): Promise<ConnectionInfo> {
  const admin = new pg.Client({ ...withDatabase(info, 'postgres').config });
  await admin.connect();
  try {
    if (fresh) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return withDatabase(info, name);
}

interface Meta {
  site: string;
  fingerprint: string;
  mode: string;
  schema_version: number;
  source_id: string;
  base_url: string;
  pages: number;
  snippets: number;
  seconds: number;
}

function pct(n: number): string {
  return `${(n * 100).toFixed(1)}%`;
}

function printFailures(label: string, s: EvalSummary, verbose: boolean): void {
  const shown = s.outcomes.filter((o) => verbose || o.firstRelevant !== 1 || o.firstAnswer !== 1);
  if (shown.length === 0) return;
  console.log(`\n${label} (page rank, answering snippet rank):`);
  for (const o of shown) {
    const fixes = o.corrected.length > 0 ? `  [${o.corrected.map((c) => `${c.from}→${c.to}`).join(', ')}]` : '';
    console.log(`  ${o.id} ${String(o.firstRelevant ?? '-').padStart(2)} ${String(o.firstAnswer ?? '-').padStart(2)}  ${o.query}${fixes}  →  ${o.pages.slice(0, 4).join(' ')}`);
  }
}

function row(label: string, s: EvalSummary): string {
  return `| ${label} | ${s.mrr10.toFixed(3)} | ${s.hit1.toFixed(3)} | ${s.hit5.toFixed(3)} | ${s.snip1.toFixed(3)} | ${s.snip3.toFixed(3)} |`;
}

function keptRow(label: string, clean: EvalSummary, typos: EvalSummary): string {
  const kept = (a: number, b: number) => (a === 0 ? '-' : pct(b / a));
  return `| ${label}: typos kept | ${kept(clean.mrr10, typos.mrr10)} | ${kept(clean.hit1, typos.hit1)} | ${kept(clean.hit5, typos.hit5)} | ${kept(clean.snip1, typos.snip1)} | ${kept(clean.snip3, typos.snip3)} |`;
}

const MODES: Array<{ name: string; options: EvaluateOptions }> = [
  { name: 'named', options: {} },
  { name: 'named, typos', options: { typos: true } },
  { name: 'mixed', options: { mixed: true } },
  { name: 'mixed, typos', options: { mixed: true, typos: true } },
];

/** Every query file in every mode, then the table: each file and all files together. */
async function reportRelevance(pool: pg.Pool, files: Array<{ name: string; queries: EvalQuery[] }>, sites: Record<string, EvalSite>, verbose: boolean): Promise<EvalSummary> {
  const results = new Map<string, EvalSummary>();
  for (const file of files) {
    for (const mode of MODES) {
      const summary = await evaluate({ searchSnippets }, pool, file.queries, sites, mode.options);
      results.set(`${file.name}/${mode.name}`, summary);
      printFailures(`${file.name}, ${mode.name}`, summary, verbose);
    }
  }
  const groups = files.length > 1 ? [...files.map((f) => f.name), 'all'] : files.map((f) => f.name);
  for (const mode of MODES) {
    results.set(`all/${mode.name}`, summarise(files.flatMap((f) => results.get(`${f.name}/${mode.name}`)!.outcomes)));
  }
  console.log(`\n| queries, mode | MRR@10 (page) | Hit@1 | Hit@5 | Snip@1 | Snip@3 |`);
  console.log('|---|---|---|---|---|---|');
  for (const g of groups) {
    for (const mode of MODES) console.log(row(`${g} (${results.get(`${g}/${mode.name}`)!.queries}), ${mode.name}`, results.get(`${g}/${mode.name}`)!));
    for (const m of ['named', 'mixed']) console.log(keptRow(`${g}, ${m}`, results.get(`${g}/${m}`)!, results.get(`${g}/${m}, typos`)!));
  }
  return results.get(`all/named`)!;
}

const corpusDir = process.env.DOCDEX_CORPUS_DIR ?? path.join(os.homedir(), '.cache', 'docdex-corpus');
// The shared folder sits beside the checkout (or beside the folder of worktrees).
const sharedEval = [path.resolve(ROOT, '..', 'shared', 'eval'), path.resolve(ROOT, '..', '..', 'shared', 'eval')].find((d) => existsSync(d)) ?? path.resolve(ROOT, '..', 'shared', 'eval');
const queryFiles = (process.env.EVAL_QUERIES ?? `${path.join(sharedEval, 'queries-dev.jsonl')},${path.join(sharedEval, 'queries-dev-intent.jsonl')}`).split(',').filter((f) => f !== '');
const mode: IngestMode = process.env.EVAL_INGEST === 'direct' ? 'direct' : 'crawl';
const verbose = process.env.EVAL_VERBOSE === '1';
const dbName = process.env.EVAL_DATABASE ?? 'docdex_eval';

for (const site of EVAL_SITES) {
  if (!existsSync(path.join(corpusDir, site))) {
    console.error(`The corpus site ${site} is missing under ${corpusDir}: run ../shared/bin/fetch-doc-corpus first.`);
    process.exit(2);
  }
}
for (const queryFile of queryFiles) {
  if (!existsSync(queryFile)) {
    console.error(`No query file at ${queryFile} (set EVAL_QUERIES).`);
    process.exit(2);
  }
}

const config = loadConfig({ ...process.env, CRAWL_DELAY: '0' });
const info = await ensureDatabase(await resolveConnection(config), dbName, process.env.EVAL_REBUILD === '1');
const pool = createPool(info, { max: 8, applicationName: 'docdex-eval' });
const db = { pool, info };
try {
  await migrate(pool);
  await installBossSchema(info);
  await pool.query(`CREATE TABLE IF NOT EXISTS eval_meta (
    site text PRIMARY KEY, fingerprint text NOT NULL, mode text NOT NULL, schema_version integer NOT NULL,
    source_id uuid NOT NULL, base_url text NOT NULL, pages integer NOT NULL, snippets integer NOT NULL, seconds float8 NOT NULL)`);

  // A cached index is reused only if it is of the same corpus, schema and ingest mode.
  const schema = latestMigrationId();
  const cached = new Map((await pool.query<Meta>('SELECT * FROM eval_meta')).rows.map((m) => [m.site, m]));
  const stale = EVAL_SITES.filter((site) => {
    const m = cached.get(site);
    return !m || m.fingerprint !== siteFingerprint(path.join(corpusDir, site), site) || m.mode !== mode || m.schema_version !== schema;
  });
  if (stale.length > 0) {
    // Sites are indexed into one database; re-indexing any means starting it over.
    await pool.end();
    const freshInfo = await ensureDatabase(await resolveConnection(config), dbName, true);
    Object.assign(db, { info: freshInfo, pool: createPool(freshInfo, { max: 8, applicationName: 'docdex-eval' }) });
    await migrate(db.pool);
    await installBossSchema(db.info);
    await db.pool.query(`CREATE TABLE eval_meta (
      site text PRIMARY KEY, fingerprint text NOT NULL, mode text NOT NULL, schema_version integer NOT NULL,
      source_id uuid NOT NULL, base_url text NOT NULL, pages integer NOT NULL, snippets integer NOT NULL, seconds float8 NOT NULL)`);
    cached.clear();
    console.log(`Indexing ${EVAL_SITES.join(', ')} from ${corpusDir} by ${mode === 'crawl' ? 'crawling 127.0.0.1 at CRAWL_DELAY=0' : 'loading the HTML files directly'} into ${db.info.display} ...`);
    await indexEvalSites({ startCrawl, startCrawlWorkers, waitForJob, extractDocument, storePage, settleSearchIndexes }, db, config, {
      corpusDir,
      sites: EVAL_SITES,
      mode,
      onSite: (s: IndexedSite) => {
        console.log(`  ${s.site}: ${s.pages} pages, ${s.snippets} snippets in ${s.seconds.toFixed(1)} s`);
        cached.set(s.site, {
          site: s.site,
          fingerprint: siteFingerprint(path.join(corpusDir, s.site), s.site),
          mode: s.mode,
          schema_version: schema,
          source_id: s.sourceId,
          base_url: s.baseUrl,
          pages: s.pages,
          snippets: s.snippets,
          seconds: s.seconds,
        });
      },
    });
    for (const m of cached.values()) {
      await db.pool.query('INSERT INTO eval_meta VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)', [
        m.site,
        m.fingerprint,
        m.mode,
        m.schema_version,
        m.source_id,
        m.base_url,
        m.pages,
        m.snippets,
        m.seconds,
      ]);
    }
  } else {
    console.log(`Reusing the ${mode} index in ${db.info.display} (EVAL_REBUILD=1 to re-index):`);
    for (const m of cached.values()) console.log(`  ${m.site}: ${m.pages} pages, ${m.snippets} snippets (indexed in ${m.seconds.toFixed(1)} s)`);
  }

  const sites: Record<string, EvalSite> = Object.fromEntries([...cached.values()].map((m) => [m.site as EvalSiteName, { sourceId: m.source_id, baseUrl: m.base_url }]));
  const files = queryFiles.map((f) => ({ name: path.basename(f, '.jsonl'), queries: loadQueries(f) }));
  const clean = await reportRelevance(db.pool, files, sites, verbose);
  const ms = clean.outcomes.map((o) => o.ms).sort((a, b) => a - b);
  console.log(`\nmedian search time ${ms[Math.floor(ms.length / 2)]?.toFixed(1)} ms`);
  console.log('\n| target (named, all files) | value | target | met |');
  console.log('|---|---|---|---|');
  console.log(`| MRR@10 | ${clean.mrr10.toFixed(3)} | ≥ ${TARGETS.mrr10} | ${clean.mrr10 >= TARGETS.mrr10 ? 'yes' : 'no'} |`);
  console.log(`| Hit@5 | ${pct(clean.hit5)} | ≥ ${pct(TARGETS.hit5)} | ${clean.hit5 >= TARGETS.hit5 ? 'yes' : 'no'} |`);
  if (process.env.EVAL_SPELLING !== '0') {
    const spelling = await correctionAccuracy(
      { correctWords },
      db.pool,
      files.flatMap((f) => f.queries),
    );
    if (verbose) console.log(`\ntypos not corrected to the intended word (${spelling.misses.length}):\n  ${spelling.misses.join('\n  ')}`);
    console.log(`| typo correction, first guess (${spelling.cases} single typos of the query words) | ${pct(spelling.top1)} | | |`);
    console.log(`| typo correction, among the words added | ${pct(spelling.found)} | | |`);
    console.log(
      `| first guess by kind | ${Object.entries(spelling.byKind)
        .map(([k, v]) => `${k} ${pct(v.top1 / Math.max(v.cases, 1))}`)
        .join(', ')} | | |`,
    );
  }
} finally {
  await db.pool.end();
}
