// `npm run eval`: relevance of docdex search on the real documentation corpus.
//
// Serves the python, postgres and node sites of DOCDEX_CORPUS_DIR (default ~/.cache/docdex-corpus) on
// 127.0.0.1, crawls them with the real crawler at CRAWL_DELAY=0 into a scratch database (kept and reused while
// the corpus and the schema are unchanged), runs every query of ../shared/eval/queries-dev.jsonl through
// searchSnippets filtered to the query's source, and prints MRR@10, Hit@1, Hit@5 and nDCG@10 by page, clean
// and with 1-2 deterministic typos per query.
//
// Environment: EVAL_QUERIES (query file), EVAL_INGEST=crawl|direct (direct loads the HTML files without
// HTTP: quicker, same extraction and store), EVAL_REBUILD=1 (re-index even if cached), EVAL_DATABASE
// (scratch database name, default docdex_eval), EVAL_VERBOSE=1 (every query's ranked pages).
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
import { correctionAccuracy, evaluate, loadQueries } from './harness/relevance.ts';
import type { EvalSite, EvalSummary } from './harness/relevance.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const TARGETS = { mrr10: 0.8, hit5: 0.9, typoKept: 0.9 };

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

function printSummary(label: string, s: EvalSummary, verbose: boolean): void {
  console.log(`\n${label}: MRR@10 ${s.mrr10.toFixed(3)}  Hit@1 ${pct(s.hit1)}  Hit@5 ${pct(s.hit5)}  nDCG@10 ${s.ndcg10.toFixed(3)}  (${s.queries} queries)`);
  for (const o of s.outcomes) {
    if (!verbose && o.firstRelevant === 1) continue;
    const fixes = o.corrected.length > 0 ? `  [${o.corrected.map((c) => `${c.from}→${c.to}`).join(', ')}]` : '';
    console.log(`  ${o.id} ${String(o.firstRelevant ?? '-').padStart(2)}  ${o.query}${fixes}  →  ${o.pages.slice(0, 5).join(' ')}`);
  }
}

const corpusDir = process.env.DOCDEX_CORPUS_DIR ?? path.join(os.homedir(), '.cache', 'docdex-corpus');
const queryFile = process.env.EVAL_QUERIES ?? path.resolve(ROOT, '..', 'shared', 'eval', 'queries-dev.jsonl');
const mode: IngestMode = process.env.EVAL_INGEST === 'direct' ? 'direct' : 'crawl';
const verbose = process.env.EVAL_VERBOSE === '1';
const dbName = process.env.EVAL_DATABASE ?? 'docdex_eval';

for (const site of EVAL_SITES) {
  if (!existsSync(path.join(corpusDir, site))) {
    console.error(`The corpus site ${site} is missing under ${corpusDir}: run ../shared/bin/fetch-doc-corpus first.`);
    process.exit(2);
  }
}
if (!existsSync(queryFile)) {
  console.error(`No query file at ${queryFile} (set EVAL_QUERIES).`);
  process.exit(2);
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
  const queries = loadQueries(queryFile);
  const clean = await evaluate({ searchSnippets }, db.pool, queries, sites);
  const typos = await evaluate({ searchSnippets }, db.pool, queries, sites, { typos: true });
  printSummary('clean', clean, verbose);
  printSummary('typos', typos, verbose);
  const kept = clean.hit5 === 0 ? 0 : typos.hit5 / clean.hit5;
  const spelling = await correctionAccuracy({ correctWords }, db.pool, queries);
  if (verbose) console.log(`\ntypos not corrected to the intended word (${spelling.misses.length}):\n  ${spelling.misses.join('\n  ')}`);
  const ms = clean.outcomes.map((o) => o.ms).sort((a, b) => a - b);
  console.log(`\nmedian search time ${ms[Math.floor(ms.length / 2)]?.toFixed(1)} ms`);
  console.log('\n| metric | value | target | met |');
  console.log('|---|---|---|---|');
  console.log(`| MRR@10 (clean) | ${clean.mrr10.toFixed(3)} | ≥ ${TARGETS.mrr10} | ${clean.mrr10 >= TARGETS.mrr10 ? 'yes' : 'no'} |`);
  console.log(`| Hit@1 (clean) | ${pct(clean.hit1)} | | |`);
  console.log(`| Hit@5 (clean) | ${pct(clean.hit5)} | ≥ ${pct(TARGETS.hit5)} | ${clean.hit5 >= TARGETS.hit5 ? 'yes' : 'no'} |`);
  console.log(`| nDCG@10 (clean) | ${clean.ndcg10.toFixed(3)} | | |`);
  console.log(`| MRR@10 (typos) | ${typos.mrr10.toFixed(3)} | | |`);
  console.log(`| Hit@5 (typos) | ${pct(typos.hit5)} | | |`);
  console.log(`| typo Hit@5 kept | ${pct(kept)} | ≥ ${pct(TARGETS.typoKept)} | ${kept >= TARGETS.typoKept ? 'yes' : 'no'} |`);
  console.log(`| typo correction, first guess (${spelling.cases} single typos of the query words) | ${pct(spelling.top1)} | | |`);
  console.log(`| typo correction, among the words added | ${pct(spelling.found)} | | |`);
  console.log(
    `| first guess by kind | ${Object.entries(spelling.byKind)
      .map(([k, v]) => `${k} ${pct(v.top1 / Math.max(v.cases, 1))}`)
      .join(', ')} | | |`,
  );
} finally {
  await db.pool.end();
}
