// Crawler benchmarks (issue 4), against generated documentation sites served on 127.0.0.1 by a server on its
// own thread, with a scratch database (created and dropped here):
// 1. loopback throughput at CRAWL_DELAY=0: crawl pages/s next to a raw undici fetch loop over the same URLs
//    at the same concurrency against the same server in the same run, warmed up by a first run (goal >= 0.7 of
//    the raw loop); once with an instant server (pure crawler overhead: fetch + extract + one transaction per
//    page), once with 20 ms per response, a fast real documentation host, and once with 100 ms, a typical one;
//    beside them, the crawler's fetcher and extractor alone over the same URLs (no database), the part of the
//    gap that is not storage;
// 2. politeness: CRAWL_DELAY=1, N=10 pages on one host; wall time from start to completed, which includes the
//    robots.txt request (goal <= 1.05 x N x delay);
// 3. memory: peak RSS (VmHWM) of a real `docdex worker --only crawl` process crawling 5,000 pages (goal
//    <= 250 MB), started as users start it (bin/run.js picks its heap settings).
// Run alone: npm run build && node --experimental-strip-types bench/crawl.ts
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import { Agent, request } from 'undici';
import { loadConfig } from '../dist/core/config.js';
import type { Config } from '../dist/core/config.js';
import { createPool, resolveConnection } from '../dist/core/db/connect.js';
import type { ConnectionInfo } from '../dist/core/db/connect.js';
import { migrate } from '../dist/core/db/migrate.js';
import { installBossSchema } from '../dist/core/queue/boss.js';
import { startCrawl, startCrawlWorkers, waitForJob } from '../dist/core/crawl/index.js';
import { PageFetcher } from '../dist/core/crawl/fetch.js';
import { extractDocument } from '../dist/core/extract/index.js';
import type { CrawlJob } from '../dist/core/crawl/index.js';

type Row = Record<string, string | number>;
const BIN = path.resolve(import.meta.dirname, '..', 'bin', 'run.js');

// --- generated site ----------------------------------------------------------------------------------------
// / links `sections` section pages; each section links `leaves` leaf pages; every page is ~5 KB of HTML with
// two code blocks unique to it and a navigation block, like a documentation page.
const SITE_SERVER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { sections, leaves, latencyMs } = workerData;
const filler = 'The function accepts an optional configuration object and returns a promise that resolves once the operation completes. ';
function page(title, links, seed) {
  const nav = links.map((l) => '<li><a href="' + l + '">' + l + '</a></li>').join('');
  const code1 = 'import lib\\n\\nclient = lib.Client(timeout=' + seed + ')\\nresult = client.fetch("item-' + seed + '")\\nprint(result.status)';
  const code2 = 'const c = new Client({ id: ' + seed + ' });\\nawait c.connect();\\nconsole.log(await c.get("key-' + seed + '"));';
  return '<!doctype html><html><head><meta charset="utf-8"><title>' + title + ' — Bench Docs</title></head><body>'
    + '<nav><ul>' + nav + '</ul></nav><main><h1>' + title + '</h1><p>' + filler.repeat(12) + '</p>'
    + '<h2>Example</h2><pre><code class="language-python">' + code1 + '</code></pre><p>' + filler.repeat(6) + '</p>'
    + '<h2>In JavaScript</h2><pre><code class="language-js">' + code2 + '</code></pre></main></body></html>';
}
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const p = url.pathname;
  let body = null;
  let m;
  if (p === '/') body = page('Home', Array.from({ length: sections }, (_, i) => '/s' + i + '/'), 0);
  else if ((m = /^\\/s(\\d+)\\/$/.exec(p)) && +m[1] < sections) body = page('Section ' + m[1], ['/', ...Array.from({ length: leaves }, (_, j) => '/s' + m[1] + '/p' + j)], 1000 + +m[1]);
  else if ((m = /^\\/s(\\d+)\\/p(\\d+)$/.exec(p)) && +m[1] < sections && +m[2] < leaves) {
    const s = +m[1], j = +m[2];
    body = page('Page ' + s + '.' + j, ['/', '/s' + s + '/', ...[1, 2, 3, 4, 5].map((k) => '/s' + s + '/p' + ((j + k) % leaves))], 100000 + s * 1000 + j);
  }
  const send = () => {
    if (body === null) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body);
  };
  if (latencyMs > 0) setTimeout(send, latencyMs); else send();
});
server.keepAliveTimeout = 10000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
parentPort.on('message', () => { server.closeAllConnections(); server.close(() => parentPort.postMessage('closed')); });
`;

interface Site {
  origin: string;
  urls: string[];
  close(): Promise<void>;
}

export async function startSite(sections: number, leaves: number, latencyMs: number): Promise<Site> {
  const worker = new Worker(SITE_SERVER, { eval: true, workerData: { sections, leaves, latencyMs } });
  const port = await new Promise<number>((resolve) => worker.once('message', resolve));
  const origin = `http://127.0.0.1:${port}`;
  const urls = [`${origin}/`];
  for (let s = 0; s < sections; s++) {
    urls.push(`${origin}/s${s}/`);
    for (let j = 0; j < leaves; j++) urls.push(`${origin}/s${s}/p${j}`);
  }
  return {
    origin,
    urls,
    async close() {
      await new Promise<void>((resolve) => {
        worker.once('message', () => resolve());
        worker.postMessage('close');
      });
      await worker.terminate();
    },
  };
}

// --- scratch database --------------------------------------------------------------------------------------
function withDatabase(info: ConnectionInfo, name: string): ConnectionInfo {
  const c = { ...info.config };
  if (typeof c.connectionString === 'string') {
    const url = new URL(c.connectionString);
    url.pathname = `/${name}`;
    c.connectionString = url.toString();
  } else c.database = name;
  return { mode: 'external', config: c, display: name };
}

function connectionUrl(info: ConnectionInfo): string {
  const c = info.config;
  if (typeof c.connectionString === 'string') return c.connectionString;
  const auth = c.user ? `${encodeURIComponent(String(c.user))}${c.password ? `:${encodeURIComponent(String(c.password))}` : ''}@` : '';
  return `postgres://${auth}${encodeURIComponent(String(c.host ?? '127.0.0.1'))}:${String(c.port ?? 5432)}/${String(c.database)}`;
}

interface BenchDb {
  pool: pg.Pool;
  info: ConnectionInfo;
  url: string;
  drop(): Promise<void>;
}

export async function scratchDatabase(base: ConnectionInfo): Promise<BenchDb> {
  const name = `docdex_bench_crawl_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client(withDatabase(base, 'postgres').config);
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const info = withDatabase(base, name);
  const pool = createPool(info, { max: 30 });
  await migrate(pool);
  await installBossSchema(info);
  return {
    pool,
    info,
    url: connectionUrl(info),
    async drop() {
      await pool.end().catch(() => undefined);
      const a = new pg.Client(withDatabase(base, 'postgres').config);
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.end();
    },
  };
}

// --- measurements ------------------------------------------------------------------------------------------
async function rawLoop(urls: string[], concurrency: number): Promise<number> {
  const agent = new Agent({ connections: 64 });
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < urls.length) {
        const url = urls[next++]!;
        const res = await request(url, { dispatcher: agent, headers: { 'accept-encoding': 'identity' } });
        await res.body.arrayBuffer();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await agent.close();
  return urls.length / seconds;
}

/**
 * The crawler's own fetcher and extractor over the same URLs at the same concurrency, storing nothing: what
 * fetching and extracting alone leave of the raw loop, so the table shows how much of the gap is the database.
 */
async function fetchAndExtractLoop(urls: string[], concurrency: number): Promise<number> {
  const fetcher = new PageFetcher();
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < urls.length) {
        // The bench serves its site on loopback and is run by the local user, like a CLI crawl.
        const result = await fetcher.fetch(urls[next++]!, { allowLoopback: true });
        if (result.kind !== 'ok') throw new Error(`fetch-and-extract loop: ${result.kind}`);
        extractDocument({ url: result.url, contentType: result.contentType, body: result.body });
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await fetcher.close();
  return urls.length / seconds;
}

async function crawlOnce(db: BenchDb, config: Config, origin: string, name: string, concurrency: number, depth = 2): Promise<{ job: CrawlJob; seconds: number }> {
  const started = performance.now();
  const job = await startCrawl(db, config, { name, start_urls: [`${origin}/`], max_depth: depth, max_concurrent_crawls: concurrency }, { provenance: 'user' });
  const final = await waitForJob(db, job.job_id, () => undefined, { pollMs: 500 });
  return { job: final, seconds: (performance.now() - started) / 1000 };
}

async function throughput(db: BenchDb, latencyMs: number, concurrency: number): Promise<Row> {
  const site = await startSite(20, 49, latencyMs); // 1 + 20 + 980 = 1,001 pages
  const config = loadConfig({ ...process.env, CRAWL_DELAY: '0', DATABASE_URL: db.url });
  const workers = await startCrawlWorkers(db, config, { concurrency, supervise: false });
  try {
    // The raw loop runs twice and the second, warm run counts. Run once, with undici and the loop not yet
    // compiled, it took about twice as long at 0 ms a response, which flattered the crawler, whose crawl runs
    // long enough to warm up.
    const rawCold = await rawLoop(site.urls, concurrency);
    const raw = await rawLoop(site.urls, concurrency);
    const { job, seconds } = await crawlOnce(db, config, site.origin, `throughput-${latencyMs}-${concurrency}`, concurrency);
    const crawled = job.pages_crawled / seconds;
    const unstored = await fetchAndExtractLoop(site.urls, concurrency);
    return {
      bench: `loopback, ${latencyMs} ms/response, concurrency ${concurrency}`,
      pages: job.pages_crawled,
      'raw pages/s': `${raw.toFixed(0)} (cold ${rawCold.toFixed(0)})`,
      'fetch + extract, no db': `${unstored.toFixed(0)} (${(unstored / raw).toFixed(2)})`,
      'crawl pages/s': crawled.toFixed(0),
      ratio: (crawled / raw).toFixed(2),
      goal: '>= 0.70',
      met: crawled / raw >= 0.7 ? 'yes' : 'no',
      notes: `${job.snippets_stored} snippets, status ${job.status}`,
    };
  } finally {
    await workers.stop();
    await site.close();
  }
}

async function politeness(db: BenchDb): Promise<Row> {
  const site = await startSite(9, 0, 0); // 1 + 9 = 10 pages on one host
  const config = loadConfig({ ...process.env, CRAWL_DELAY: '1', DATABASE_URL: db.url });
  const workers = await startCrawlWorkers(db, config, { concurrency: 5, supervise: false, tickMs: 250 });
  try {
    const { job, seconds } = await crawlOnce(db, config, site.origin, 'politeness', 5, 1);
    const n = job.pages_crawled;
    return {
      bench: 'politeness, CRAWL_DELAY=1 s, one host',
      pages: n,
      'raw pages/s': '-',
      'crawl pages/s': (n / seconds).toFixed(2),
      ratio: `${seconds.toFixed(2)} s total`,
      goal: `<= ${(1.05 * n).toFixed(2)} s (1.05 x N x delay)`,
      met: seconds <= 1.05 * n ? 'yes' : 'no',
      notes: `${n + 1} requests incl. robots.txt; floor ${n} x 1.03 s spacing`,
    };
  } finally {
    await workers.stop();
    await site.close();
  }
}

function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

async function memory(db: BenchDb, base: Config, nodeOptions: string): Promise<Row> {
  const site = await startSite(100, 49, 0); // 1 + 100 + 4,900 = 5,001 pages
  const env = { ...process.env, DATABASE_URL: db.url, CRAWL_DELAY: '0', LOG_LEVEL: 'warn', NO_COLOR: '1', DOCDEX_HOME: base.home, NODE_OPTIONS: nodeOptions };
  const child = spawn(process.execPath, [BIN, 'worker', '--only', 'crawl', '--concurrency', '20'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  try {
    const started = Date.now();
    while ((await db.pool.query("SELECT 1 FROM pg_stat_activity WHERE application_name LIKE 'docdex-worker:%'")).rowCount === 0) {
      if (Date.now() - started > 60_000) throw new Error('worker did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    const config = loadConfig({ ...process.env, CRAWL_DELAY: '0', DATABASE_URL: db.url });
    const { job, seconds } = await crawlOnce(db, config, site.origin, `memory ${nodeOptions || 'default'}`, 20);
    const peak = peakRssMb(child.pid!);
    return {
      bench: `memory, \`docdex worker --only crawl --concurrency 20\`${nodeOptions ? `, NODE_OPTIONS=${nodeOptions}` : ''}`,
      pages: job.pages_crawled,
      'raw pages/s': '-',
      'crawl pages/s': (job.pages_crawled / seconds).toFixed(0),
      ratio: `peak RSS ${peak.toFixed(0)} MB`,
      goal: '<= 250 MB',
      met: peak <= 250 ? 'yes' : 'no',
      notes: `VmHWM of the worker process; ${job.snippets_stored} snippets, status ${job.status}`,
    };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await site.close();
  }
}

export async function benchCrawl(): Promise<Row[]> {
  const base = loadConfig(process.env);
  if (base.database.mode === 'embedded') {
    // Make sure the embedded server is up (the same way `docdex db start` does).
    await new Promise<void>((resolve, reject) => execFile(process.execPath, [BIN, 'db', 'start'], (error) => (error ? reject(error) : resolve())));
  }
  const info = await resolveConnection(base);
  const rows: Row[] = [];
  const db = await scratchDatabase(info);
  try {
    rows.push(await throughput(db, 0, 10));
    rows.push(await throughput(db, 20, 10));
    rows.push(await throughput(db, 100, 10));
    rows.push(await politeness(db));
    rows.push(await memory(db, base, ''));
  } finally {
    await db.drop();
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await benchCrawl();
  console.table(rows);
}
