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
// Then the peer benchmark (../shared/eval/peer-benchmark, docs-mcp-server's dataset; harness/peer.ts scores it
// as its README says): react.dev, vite and fastapi from ../shared/corpus/realworld, each committed and tagged in
// a git repository and indexed by `docdex add file://…@tag --path <docs>` (harness/realworld.ts), and python from
// the crawled Debian HTML; its 48 queries without Tailwind (no corpus), and the held-out questions over the same
// repositories (bench/queries-realworld-holdout.jsonl), named and mixed, by library and by intent.
//
// Environment: EVAL_QUERIES (query files, comma-separated), EVAL_INGEST=crawl|direct (direct loads the HTML
// files without HTTP: quicker, same extraction and store), EVAL_REBUILD=1 (re-index even if cached),
// EVAL_DATABASE (scratch database name, default docdex_eval), EVAL_VERBOSE=1 (every query's ranked pages),
// EVAL_SPELLING=0 (skip the typo-correction accuracy, the slowest part), EVAL_PEER_SETS (peer-style query sets,
// YAML or JSON lines, comma-separated), EVAL_PEER_LIMIT (results asked for per query; default the search's own),
// EVAL_REALWORLD_DIR (the real-world corpus), EVAL_PART=dev|peer (only the dev sets or only the peer benchmark).
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
import { addLibraries } from '../dist/core/library/add.js';
import { documentStages } from '../dist/core/pipeline/stages.js';
import { startUploadWorkers } from '../dist/core/upload/worker.js';
import { waitForUpload } from '../dist/core/upload/job-rows.js';
import { EVAL_SITES, indexEvalSites, siteFingerprint } from './harness/corpus.ts';
import type { EvalSiteName, IndexedSite, IngestMode } from './harness/corpus.ts';
import { evaluatePeer, groupPeer, loadPeerQueries, PEER_K, summarisePeer } from './harness/peer.ts';
import type { PeerLibrary, PeerQuery, PeerSummary } from './harness/peer.ts';
import { folderFingerprint, indexRealworld, REALWORLD_LIBRARIES, REALWORLD_TAG, repositoryFile } from './harness/realworld.ts';
import { correctionAccuracy, evaluate, loadQueries, pageKey, summarise } from './harness/relevance.ts';
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
  // The dev files together (the issue's dev-set goals are over them); a held-out file stays apart.
  const dev = files.filter((f) => f.name.startsWith('queries-dev'));
  const together = dev.length > 1 ? dev : files.length > 1 ? files : [];
  const joint = dev.length > 1 ? 'dev' : 'all';
  const groups = together.length > 0 ? [...files.map((f) => f.name), joint] : files.map((f) => f.name);
  for (const mode of MODES) {
    results.set(`${joint}/${mode.name}`, summarise(together.flatMap((f) => results.get(`${f.name}/${mode.name}`)!.outcomes)));
  }
  console.log(`\n| queries, mode | MRR@10 (page) | Hit@1 | Hit@5 | Snip@1 | Snip@3 |`);
  console.log('|---|---|---|---|---|---|');
  for (const g of groups) {
    for (const mode of MODES) console.log(row(`${g} (${results.get(`${g}/${mode.name}`)!.queries}), ${mode.name}`, results.get(`${g}/${mode.name}`)!));
    for (const m of ['named', 'mixed']) console.log(keptRow(`${g}, ${m}`, results.get(`${g}/${m}`)!, results.get(`${g}/${m}, typos`)!));
  }
  return results.get(together.length > 0 ? `${joint}/named` : `${files[0]!.name}/named`)!;
}

const PEER_LIBRARIES = ['python', ...REALWORLD_LIBRARIES.map((l) => l.library)];

function peerRow(label: string, s: PeerSummary): string {
  return `| ${label} | ${s.queries} | ${s.rr.toFixed(3)} | ${s.hit1.toFixed(3)} | ${s.hit3.toFixed(3)} | ${s.hit5.toFixed(3)} | ${s.recall5.toFixed(3)} | ${s.ndcg5.toFixed(3)} |`;
}

/** Each peer-style set, named and mixed: all its queries, then by library and by intent. */
async function reportPeer(pool: pg.Pool, sets: Array<{ name: string; queries: PeerQuery[] }>, libraries: Record<string, PeerLibrary>, verbose: boolean): Promise<void> {
  const limit = process.env.EVAL_PEER_LIMIT ? Number(process.env.EVAL_PEER_LIMIT) : undefined;
  for (const set of sets) {
    const lines: string[] = [];
    for (const mode of ['named', 'mixed'] as const) {
      const outcomes = await evaluatePeer({ searchSnippets }, pool, set.queries, libraries, { mixed: mode === 'mixed', ...(limit ? { limit } : {}) });
      const missed = outcomes.filter((o) => verbose || o.rr < 1);
      if (missed.length > 0) console.log(`\n${set.name}, ${mode} (reciprocal rank, first pages):`);
      for (const o of missed) console.log(`  ${o.id} ${o.rr.toFixed(2)} [${o.intent}] ${o.query}  →  ${o.pages.map((p) => p.replace(/^https?:\/\/[^/]+/, '')).join(' ')}`);
      lines.push(peerRow(`${mode}, all`, summarisePeer(outcomes)));
      for (const [lib, s] of groupPeer(outcomes, (o) => o.library)) lines.push(peerRow(`${mode}, ${lib}`, s));
      for (const [intent, s] of groupPeer(outcomes, (o) => o.intent)) lines.push(peerRow(`${mode}, ${intent}`, s));
    }
    console.log(`\n${set.name} (pages deduplicated at their first rank, top ${PEER_K}${limit ? `, ${limit} results asked` : ''})`);
    console.log('| mode, group | queries | MRR | Hit@1 | Hit@3 | Hit@5 | Recall@5 | nDCG@5 |');
    console.log('|---|---|---|---|---|---|---|---|');
    for (const line of lines) console.log(line);
  }
}

// The shared folder sits beside the checkout (or beside the folder of worktrees).
function sharedDir(...parts: string[]): string {
  const candidates = [path.resolve(ROOT, '..', 'shared', ...parts), path.resolve(ROOT, '..', '..', 'shared', ...parts)];
  return candidates.find((d) => existsSync(d)) ?? candidates[0]!;
}

const corpusDir = process.env.DOCDEX_CORPUS_DIR ?? path.join(os.homedir(), '.cache', 'docdex-corpus');
const realworldDir = process.env.EVAL_REALWORLD_DIR ?? sharedDir('corpus', 'realworld');
const sharedEval = sharedDir('eval');
const queryFiles = (
  process.env.EVAL_QUERIES ?? [path.join(sharedEval, 'queries-dev.jsonl'), path.join(sharedEval, 'queries-dev-intent.jsonl'), path.join(ROOT, 'bench', 'queries-holdout.jsonl')].join(',')
)
  .split(',')
  .filter((f) => f !== '');
const peerFiles = (process.env.EVAL_PEER_SETS ?? [path.join(sharedEval, 'peer-benchmark', 'dataset.yaml'), path.join(ROOT, 'bench', 'queries-realworld-holdout.jsonl')].join(','))
  .split(',')
  .filter((f) => f !== '');
const mode: IngestMode = process.env.EVAL_INGEST === 'direct' ? 'direct' : 'crawl';
const verbose = process.env.EVAL_VERBOSE === '1';
const dbName = process.env.EVAL_DATABASE ?? 'docdex_eval';

for (const site of EVAL_SITES) {
  if (!existsSync(path.join(corpusDir, site))) {
    console.error(`The corpus site ${site} is missing under ${corpusDir}: run ../shared/bin/fetch-doc-corpus first.`);
    process.exit(2);
  }
}
for (const lib of REALWORLD_LIBRARIES) {
  if (!existsSync(path.join(realworldDir, lib.folder))) {
    console.error(`The real-world corpus folder ${lib.folder} is missing under ${realworldDir} (set EVAL_REALWORLD_DIR).`);
    process.exit(2);
  }
}
for (const queryFile of [...queryFiles, ...peerFiles]) {
  if (!existsSync(queryFile)) {
    console.error(`No query file at ${queryFile} (set EVAL_QUERIES or EVAL_PEER_SETS).`);
    process.exit(2);
  }
}

const META_TABLE = `CREATE TABLE IF NOT EXISTS eval_meta (
  site text PRIMARY KEY, fingerprint text NOT NULL, mode text NOT NULL, schema_version integer NOT NULL,
  source_id uuid NOT NULL, base_url text NOT NULL, pages integer NOT NULL, snippets integer NOT NULL, seconds float8 NOT NULL)`;

const config = loadConfig({ ...process.env, CRAWL_DELAY: '0' });
const schema = latestMigrationId();

/** What each cached entry must still match: its corpus files and the ingest mode (a git library: 'git'). */
function expected(site: string): { fingerprint: string; mode: string } {
  const lib = REALWORLD_LIBRARIES.find((l) => l.library === site);
  if (lib) return { fingerprint: `${folderFingerprint(path.join(realworldDir, lib.folder))}:${lib.docsPath}`, mode: 'git' };
  return { fingerprint: siteFingerprint(path.join(corpusDir, site), site as EvalSiteName), mode };
}

type Remember = (m: Omit<Meta, 'fingerprint' | 'mode' | 'schema_version'>) => void;

async function indexSites(db: { pool: pg.Pool; info: ConnectionInfo }, sites: readonly EvalSiteName[], remember: Remember): Promise<void> {
  console.log(`Indexing ${sites.join(', ')} from ${corpusDir} by ${mode === 'crawl' ? 'crawling 127.0.0.1 at CRAWL_DELAY=0' : 'loading the HTML files directly'} into ${db.info.display} ...`);
  await indexEvalSites({ startCrawl, startCrawlWorkers, waitForJob, extractDocument, storePage, settleSearchIndexes }, db, config, {
    corpusDir,
    sites,
    mode,
    onSite: (s: IndexedSite) => {
      console.log(`  ${s.site}: ${s.pages} pages, ${s.snippets} snippets in ${s.seconds.toFixed(1)} s`);
      remember({ site: s.site, source_id: s.sourceId, base_url: s.baseUrl, pages: s.pages, snippets: s.snippets, seconds: s.seconds });
    },
  });
}

async function indexRepositories(db: { pool: pg.Pool; info: ConnectionInfo }, remember: Remember): Promise<void> {
  console.log(`Indexing ${REALWORLD_LIBRARIES.map((l) => l.library).join(', ')} from ${realworldDir} by docdex add file://…@${REALWORLD_TAG} --path <docs> into ${db.info.display} ...`);
  await indexRealworld({ addLibraries, startUploadWorkers, waitForUpload, documentStages }, db, config, {
    corpusDir: realworldDir,
    onLibrary: (r) => {
      console.log(`  ${r.library}: ${r.pages} pages, ${r.snippets} snippets in ${r.seconds.toFixed(1)} s`);
      remember({ site: r.library, source_id: r.sourceId, base_url: '', pages: r.pages, snippets: r.snippets, seconds: r.seconds });
    },
  });
}

/**
 * A scratch database holding `sites` (the mixed mode searches all of it), reused while its corpus, schema and
 * ingest mode are unchanged, else indexed again from nothing by `index`.
 */
async function openIndex(name: string, sites: readonly string[], index: (db: { pool: pg.Pool; info: ConnectionInfo }, remember: Remember) => Promise<void>) {
  let info = await ensureDatabase(await resolveConnection(config), name, process.env.EVAL_REBUILD === '1');
  let pool = createPool(info, { max: 8, applicationName: 'docdex-eval' });
  await migrate(pool);
  await installBossSchema(info);
  await pool.query(META_TABLE);
  const cached = new Map((await pool.query<Meta>('SELECT * FROM eval_meta')).rows.map((m) => [m.site, m]));
  const stale = sites.filter((site) => {
    const m = cached.get(site);
    const want = expected(site);
    return !m || m.fingerprint !== want.fingerprint || m.mode !== want.mode || m.schema_version !== schema;
  });
  const extra = [...cached.keys()].filter((site) => !sites.includes(site));
  if (stale.length === 0 && extra.length === 0) {
    console.log(`Reusing the index in ${info.display} (EVAL_REBUILD=1 to re-index):`);
    for (const m of cached.values()) console.log(`  ${m.site}: ${m.pages} pages, ${m.snippets} snippets (indexed in ${m.seconds.toFixed(1)} s)`);
    return { pool, cached };
  }
  // Re-indexing any site means starting the database over: the others' words are in its lexicon.
  await pool.end();
  info = await ensureDatabase(await resolveConnection(config), name, true);
  pool = createPool(info, { max: 8, applicationName: 'docdex-eval' });
  await migrate(pool);
  await installBossSchema(info);
  await pool.query(META_TABLE);
  cached.clear();
  await index({ pool, info }, (m) => cached.set(m.site, { ...m, ...expected(m.site), schema_version: schema }));
  for (const m of cached.values()) {
    await pool.query('INSERT INTO eval_meta VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)', [m.site, m.fingerprint, m.mode, m.schema_version, m.source_id, m.base_url, m.pages, m.snippets, m.seconds]);
  }
  return { pool, cached };
}

/** Every indexed library with its results' live URLs: python's Debian pages under docs.python.org/3, the repositories' files by the shared README's mapping. */
function peerLibrariesOf(cached: Map<string, Meta>): Record<string, PeerLibrary> {
  const out: Record<string, PeerLibrary> = {};
  for (const m of cached.values()) {
    const lib = REALWORLD_LIBRARIES.find((l) => l.library === m.site);
    if (lib) {
      out[m.site] = {
        sourceId: m.source_id,
        liveUrl: (url) => {
          const file = repositoryFile(url);
          return file === null ? null : lib.liveUrl(file);
        },
      };
    } else if (m.site === 'python') {
      out[m.site] = { sourceId: m.source_id, liveUrl: (url) => `https://docs.python.org/3/${pageKey(url, m.base_url)}` };
    } else {
      out[m.site] = { sourceId: m.source_id, liveUrl: () => null };
    }
  }
  return out;
}

async function reportSpelling(pool: pg.Pool, queries: EvalQuery[]): Promise<void> {
  const spelling = await correctionAccuracy({ correctWords }, pool, queries);
  if (verbose) console.log(`\ntypos not corrected to the intended word (${spelling.misses.length}):\n  ${spelling.misses.join('\n  ')}`);
  console.log(`\n| typo correction | value |\n|---|---|`);
  console.log(`| first guess (${spelling.cases} single typos of the query words) | ${pct(spelling.top1)} |`);
  console.log(`| among the words added | ${pct(spelling.found)} |`);
  console.log(
    `| first guess by kind | ${Object.entries(spelling.byKind)
      .map(([k, v]) => `${k} ${pct(v.top1 / Math.max(v.cases, 1))}`)
      .join(', ')} |`,
  );
}

// The dev sets in the index they were always measured in (the three Debian manuals); the peer benchmark in one of
// its own libraries (python and the three repositories), so "mixed" means the same as in each set's history.
const part = process.env.EVAL_PART ?? 'all';
const debian = part === 'peer' ? null : await openIndex(dbName, EVAL_SITES, (db, remember) => indexSites(db, EVAL_SITES, remember));
if (debian)
  try {
    const sites: Record<string, EvalSite> = Object.fromEntries([...debian.cached.values()].map((m) => [m.site as EvalSiteName, { sourceId: m.source_id, baseUrl: m.base_url }]));
    const files = queryFiles.map((f) => ({ name: path.basename(f, '.jsonl'), queries: loadQueries(f) }));
    const clean = await reportRelevance(debian.pool, files, sites, verbose);
    const ms = clean.outcomes.map((o) => o.ms).sort((a, b) => a - b);
    console.log(`\nmedian search time ${ms[Math.floor(ms.length / 2)]?.toFixed(1)} ms`);
    console.log('\n| target (named, the dev files) | value | target | met |');
    console.log('|---|---|---|---|');
    console.log(`| MRR@10 | ${clean.mrr10.toFixed(3)} | ≥ ${TARGETS.mrr10} | ${clean.mrr10 >= TARGETS.mrr10 ? 'yes' : 'no'} |`);
    console.log(`| Hit@5 | ${pct(clean.hit5)} | ≥ ${pct(TARGETS.hit5)} | ${clean.hit5 >= TARGETS.hit5 ? 'yes' : 'no'} |`);
    if (process.env.EVAL_SPELLING !== '0')
      await reportSpelling(
        debian.pool,
        files.flatMap((f) => f.queries),
      );
  } finally {
    await debian.pool.end();
  }

const peer =
  part === 'dev'
    ? null
    : await openIndex(`${dbName}_peer`, PEER_LIBRARIES, async (db, remember) => {
        await indexSites(db, ['python'], remember);
        await indexRepositories(db, remember);
      });
if (peer)
  try {
    const peerSets = peerFiles.map((f) => ({ name: path.basename(f), queries: loadPeerQueries(f, PEER_LIBRARIES) }));
    await reportPeer(peer.pool, peerSets, peerLibrariesOf(peer.cached), verbose);
  } finally {
    await peer.pool.end();
  }
