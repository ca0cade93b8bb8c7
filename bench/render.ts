// Rendered pages (issue 34), on one generated documentation site served on 127.0.0.1 in two forms: every page
// as plain HTML under /, and the same pages as a client-rendered app under /app/ (an empty shell and one
// script that draws the page from its path). Each is crawled by a real `docdex worker --only crawl`
// process, started as users start it: the plain form with render never (fetched pages/s), the app with render
// auto (rendered pages/s, every page needs it). Peak RSS is the worker's VmHWM, and for worker plus browser the
// highest sum of PSS over the worker's whole process tree (Chromium and its renderers; PSS counts the pages
// they share once, where summed VmRSS would count them in every process), sampled while it runs.
// Then /health of `docdex serve` (issue 48) while its crawl worker loads and launches the browser for its first
// rendered page: polled every 25 ms, each latency from when the poll was due (a stalled event loop delays the
// poll itself), a poll that waited L ms standing also for the polls due meanwhile.
// Run alone: npm run build && node --experimental-strip-types bench/render.ts (BENCH_RENDER_HEALTH_ONLY=1: the
// /health row only)
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { loadConfig } from '../dist/core/config.js';
import { resolveConnection } from '../dist/core/db/connect.js';
import { startCrawl, waitForJob } from '../dist/core/crawl/index.js';
import { findChromium } from '../dist/core/render/browser.js';
import { scratchDatabase } from './crawl.ts';
import { startServe } from './daemon.ts';

type Row = Record<string, string | number>;
const BIN = path.resolve(import.meta.dirname, '..', 'bin', 'run.js');
/** Worker plus browser over the 500-page rendered crawl must stay under this. */
const RSS_GOAL_MB = 1024;

// / links `sections` section pages, each links `leaves` leaf pages; /app/… is the same tree drawn by app.js.
const SITE_SERVER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { sections, leaves } = workerData;
const PAGE = function (p, prefix) {
  const filler = 'The function accepts an optional configuration object and returns a promise that resolves once the operation completes. ';
  let m, title, links, seed;
  if (p === '/') { title = 'Home'; seed = 0; links = Array.from({ length: SECTIONS }, (_, i) => '/s' + i + '/'); }
  else if ((m = /^\\/s(\\d+)\\/$/.exec(p)) && +m[1] < SECTIONS) { title = 'Section ' + m[1]; seed = 1000 + +m[1]; links = ['/', ...Array.from({ length: LEAVES }, (_, j) => '/s' + m[1] + '/p' + j)]; }
  else if ((m = /^\\/s(\\d+)\\/p(\\d+)$/.exec(p)) && +m[1] < SECTIONS && +m[2] < LEAVES) { const s = +m[1], j = +m[2]; title = 'Page ' + s + '.' + j; seed = 100000 + s * 1000 + j; links = ['/', '/s' + s + '/']; }
  else return null;
  const nav = links.map((l) => '<li><a href="' + prefix + l + '">' + l + '</a></li>').join('');
  const code = 'import lib\\nclient = lib.Client(timeout=' + seed + ')\\nprint(client.fetch("item-' + seed + '"))';
  return { title: title, html: '<nav><ul>' + nav + '</ul></nav><main><h1>' + title + '</h1><p>' + filler.repeat(8) + '</p><pre><code class="language-python">' + code + '</code></pre></main>' };
};
const constants = 'const SECTIONS = ' + sections + ', LEAVES = ' + leaves + ';';
const SECTIONS = sections, LEAVES = leaves;
const APP = constants + 'const PAGE = ' + PAGE.toString() + ';'
  + 'setTimeout(() => { const page = PAGE(location.pathname.replace(/^\\\\/app/, "") || "/", "/app") || { title: "Not found", html: "" }; document.title = page.title; document.getElementById("root").innerHTML = page.html; }, 20);';
const SHELL = '<!doctype html><html><head><meta charset="utf-8"><title>Loading</title></head><body><div id="root"></div><script src="/app.js"></script></body></html>';
const server = http.createServer((req, res) => {
  const p = new URL(req.url, 'http://x').pathname;
  if (p === '/app.js') return res.writeHead(200, { 'content-type': 'application/javascript' }).end(APP);
  const app = p === '/app' || p.startsWith('/app/');
  const page = PAGE(app ? p.slice(4) || '/' : p, app ? '/app' : '');
  if (page === null) return res.writeHead(404).end();
  const body = app ? SHELL : '<!doctype html><html><head><meta charset="utf-8"><title>' + page.title + '</title></head><body><div id="root">' + page.html + '</div></body></html>';
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
parentPort.on('message', () => { server.closeAllConnections(); server.close(() => parentPort.postMessage('closed')); });
`;

async function startSite(sections: number, leaves: number): Promise<{ origin: string; close(): Promise<void> }> {
  const worker = new Worker(SITE_SERVER, { eval: true, workerData: { sections, leaves } });
  const port = await new Promise<number>((resolve) => worker.once('message', resolve));
  return {
    origin: `http://127.0.0.1:${port}`,
    async close() {
      await new Promise<void>((resolve) => {
        worker.once('message', () => resolve());
        worker.postMessage('close');
      });
      await worker.terminate();
    },
  };
}

function statusKb(pid: number, field: string): number {
  try {
    return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** A process's proportional set size: shared pages counted once across the processes sharing them. */
function pssKb(pid: number): number {
  try {
    return Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** The sum of PSS over `root` and every process below it, in MB. */
function treeRssMb(root: number): number {
  const parents = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  const tree = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, ppid] of parents) {
      if (tree.has(pid) || !tree.has(ppid)) continue;
      tree.add(pid);
      grew = true;
    }
  }
  return [...tree].reduce((sum, pid) => sum + pssKb(pid), 0) / 1024;
}

async function crawlWithWorker(db: Awaited<ReturnType<typeof scratchDatabase>>, home: string, startUrl: string, render: 'never' | 'auto'): Promise<Row> {
  const env = { ...process.env, DATABASE_URL: db.url, CRAWL_DELAY: '0', LOG_LEVEL: 'warn', NO_COLOR: '1', DOCDEX_HOME: home };
  const child: ChildProcess = spawn(process.execPath, [BIN, 'worker', '--only', 'crawl', '--concurrency', '10'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  let peakTree = 0;
  const sampler = setInterval(() => (peakTree = Math.max(peakTree, treeRssMb(child.pid!))), 250);
  try {
    const waitStart = Date.now();
    while ((await db.pool.query("SELECT 1 FROM pg_stat_activity WHERE application_name LIKE 'docdex-worker:%'")).rowCount === 0) {
      if (Date.now() - waitStart > 60_000) throw new Error('worker did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    const config = loadConfig({ ...process.env, CRAWL_DELAY: '0', DATABASE_URL: db.url });
    const started = performance.now();
    const job = await startCrawl(db, config, { name: `render-${render}`, start_urls: [startUrl], max_depth: 2, max_concurrent_crawls: 10, render }, { provenance: 'user' });
    const final = await waitForJob(db, job.job_id, (j) => process.env.BENCH_VERBOSE && console.error(render, j.status, j.pages_crawled, j.pages_found, j.pages_rendered), { pollMs: 500 });
    const seconds = (performance.now() - started) / 1000;
    peakTree = Math.max(peakTree, treeRssMb(child.pid!));
    const worker = statusKb(child.pid!, 'VmHWM') / 1024;
    return {
      bench: render === 'never' ? 'fetched (plain HTML, render never)' : 'rendered (client-rendered app, render auto)',
      pages: final.pages_crawled,
      rendered: final.pages_rendered,
      'pages/s': (final.pages_crawled / seconds).toFixed(1),
      'peak RSS worker': `${worker.toFixed(0)} MB`,
      'peak RSS worker + browser': `${peakTree.toFixed(0)} MB`,
      goal: render === 'never' ? '-' : `<= ${RSS_GOAL_MB} MB`,
      met: render === 'never' ? '-' : peakTree <= RSS_GOAL_MB ? 'yes' : 'no',
      notes: `${final.snippets_stored} snippets, status ${final.status}`,
    };
  } finally {
    clearInterval(sampler);
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

/** /health latencies (ms) polled every 25 ms until `done()`, corrected for polls a stall kept from being sent. */
async function pollHealth(base: string, done: () => Promise<boolean>): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; ; i++) {
    const due = performance.now() + 25;
    await new Promise((r) => setTimeout(r, 25));
    await (await fetch(`${base}/health`)).arrayBuffer();
    const latency = performance.now() - due;
    for (let missed = latency; missed > 0; missed -= 25) latencies.push(missed);
    if (i % 5 === 4 && (await done())) return latencies;
  }
}

function latencyRow(bench: string, latencies: number[], notes: string): Row {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * q) - 1)]!.toFixed(1);
  return { bench, '/health p50 / p99 / max': `${at(0.5)} / ${at(0.99)} / ${sorted.at(-1)!.toFixed(1)} ms`, notes: `${sorted.length} samples; ${notes}` };
}

/** Two rows: /health of an idle `docdex serve` for 10 s (the floor of this machine's load), then while it renders its first page. */
async function healthWhileBrowserStarts(db: Awaited<ReturnType<typeof scratchDatabase>>, startUrl: string): Promise<Row[]> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'docdex-bench-render-'));
  const env = { ...process.env, DATABASE_URL: db.url, CRAWL_DELAY: '0', LOG_LEVEL: 'warn', NO_COLOR: '1', DOCDEX_HOME: scratch, WORKSPACE_PATH: path.join(scratch, 'workspace') };
  const daemon = await startServe(env);
  try {
    const idleUntil = performance.now() + 10_000;
    const idle = await pollHealth(daemon.url, async () => performance.now() > idleUntil);
    const config = loadConfig(env);
    const job = await startCrawl(db, config, { name: 'render-health', start_urls: [startUrl], max_depth: 0, render: 'always' }, { provenance: 'user' });
    const status = async () => (await db.pool.query<{ status: string }>('SELECT status FROM crawl_jobs WHERE id = $1', [job.job_id])).rows[0]!.status;
    const launch = await pollHealth(daemon.url, async () => ['completed', 'failed', 'cancelled'].includes(await status()));
    return [
      latencyRow('/health of docdex serve, idle (10 s)', idle, "the floor under this machine's load"),
      latencyRow('/health while docdex serve starts the browser (first rendered page)', launch, `crawl ${await status()}; before the render thread (issue 48) one stall of 0.5-2.6 s`),
    ];
  } finally {
    await daemon.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

export async function benchRender(): Promise<Row[]> {
  const base = loadConfig(process.env);
  if (!findChromium(base.render.chromium)) return [{ result: 'skipped: no Chromium (install the chromium package or set DOCDEX_CHROMIUM)' }];
  if (base.database.mode === 'embedded') {
    await new Promise<void>((resolve, reject) => execFile(process.execPath, [BIN, 'db', 'start'], (error) => (error ? reject(error) : resolve())));
  }
  const db = await scratchDatabase(await resolveConnection(base));
  const site = await startSite(Number(process.env.BENCH_SECTIONS ?? 10), 49); // 1 + 10 + 490 = 501 pages in each form
  try {
    if (process.env.BENCH_RENDER_HEALTH_ONLY === '1') return await healthWhileBrowserStarts(db, `${site.origin}/app/`);
    return [
      await crawlWithWorker(db, base.home, `${site.origin}/`, 'never'),
      await crawlWithWorker(db, base.home, `${site.origin}/app/`, 'auto'),
      ...(await healthWhileBrowserStarts(db, `${site.origin}/app/`)),
    ];
  } finally {
    await site.close();
    await db.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.table(await benchRender());
}
