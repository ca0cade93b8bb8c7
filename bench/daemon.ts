// Daemon load (issue 6): 200 concurrent clients search for 30 s against the real daemon (`docdex serve`, its
// own process, started as users start it: bin/run.js picks its heap settings) over loopback while a crawl of a
// local site runs in the same daemon, on the generated corpus of BENCH_DAEMON_SNIPPETS (default
// 100,000) snippets. Reports requests/s, p50/p99 latency and errors, with two rows of the fixed load before the
// crawl starts: a bare Fastify server answering from memory (the floor of this machine and load generator), then
// the daemon (its own baseline). Each row names its floor and the ratio to it: the fixed rows against bare
// Fastify, the varied row (issue 52) against the same daemon in the same crawl with the fixed queries.
// BENCH_DAEMON_SECONDS sets the length of each run. Bounded: four 30 s runs, loopback only.
// The daemon's crawl gives way to its searches (src/core/crawl/courtesy.ts): the 'pages crawled meanwhile'
// column shows what that costs the crawl (before it gave way, it ran at about 95 pages/s under the same load).
// Run alone: npm run build && node --experimental-strip-types bench/daemon.ts
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { deleteSource } from '../dist/core/sources/manage.js';
import { openBenchCorpus } from './search.ts';

type Row = Record<string, string | number>;

const QUERIES = ['read file', 'json parse', 'connect socket', 'async await', 'transaction commit', 'http request', 'log level', 'parse date', 'cache memory', 'retry timeout'];

const WORDS = [
  'read',
  'write',
  'file',
  'json',
  'parse',
  'socket',
  'connect',
  'async',
  'await',
  'transaction',
  'commit',
  'http',
  'request',
  'log',
  'level',
  'date',
  'cache',
  'memory',
  'retry',
  'timeout',
  'stream',
  'buffer',
  'query',
  'table',
  'index',
  'column',
  'thread',
  'process',
  'worker',
  'queue',
  'event',
  'listener',
  'callback',
  'promise',
  'error',
  'exception',
  'handler',
  'signal',
  'config',
  'option',
  'path',
  'directory',
  'module',
  'package',
  'import',
  'export',
  'function',
  'method',
  'class',
  'object',
  'string',
  'number',
  'array',
  'list',
  'map',
  'set',
  'key',
  'encode',
  'decode',
  'yaml',
  'xml',
  'html',
  'template',
  'render',
  'route',
  'session',
  'cookie',
  'token',
  'auth',
  'user',
  'password',
  'hash',
  'encrypt',
  'certificate',
  'debug',
  'test',
  'assert',
  'mock',
  'fixture',
  'profile',
  'metric',
  'trace',
  'deploy',
  'build',
  'compile',
  'bundle',
  'install',
  'version',
  'time',
  'zone',
  'interval',
  'schedule',
  'job',
  'task',
  'batch',
  'filter',
  'sort',
  'merge',
  'join',
  'split',
];

function variedQueries(): string[] {
  const out: string[] = [];
  for (const a of WORDS) for (const b of WORDS) if (a !== b) out.push(`${a} ${b}`);
  return out;
}

// 20 links a page reach all 5,000 pages by depth 3: enough that the crawl is still running when both load runs
// end (it crawls well under 100 pages/s while the searches take the CPU).
const LINKS = 20;

const BIN = path.resolve(import.meta.dirname, '..', 'bin', 'run.js');

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** `docdex serve` as a child process, once its health route answers. */
export async function startServe(env: NodeJS.ProcessEnv): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [BIN, 'serve', '--host', '127.0.0.1', '--port', String(port)], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<number | null>((r) => child.once('exit', r));
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`docdex serve exited with ${child.exitCode}`);
    const ok = await fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() - started > 60_000) {
      child.kill('SIGKILL');
      throw new Error('docdex serve did not become healthy within 60 s');
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    child,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function serveSite(pages: number, delayMs: number): Promise<{ base: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const m = /^\/p(\d+)\.html$/.exec(req.url ?? '');
    const i = m ? Number(m[1]) : 0;
    const links = Array.from({ length: LINKS }, (_, k) => `<a href="/p${(i * LINKS + k + 1) % pages}.html">next</a>`).join(' ');
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<html><head><title>Page ${i} - Bench</title></head><body><main><h1>Page ${i}</h1><h2 id="a">Usage ${i}</h2><p>Call the helper.</p><pre><code class="language-python">helper_${i}(value=${i})\nprint(helper_${i})</code></pre>${links}</main></body></html>`,
      );
    }, delayMs);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

// The load generator runs in its own process, as a load tool would: in the daemon's process it shared one
// event loop with the server, and every request's latency included the client's own work.
const LOAD_CHILD = `
const autocannon = require('autocannon');
let input = '';
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', async () => {
  const { queries, random, ...options } = JSON.parse(input);
  const path = (q) => '/api/search?q=' + encodeURIComponent(q) + '&limit=10';
  const requests = random
    ? [{ method: 'GET', setupRequest: (req) => ({ ...req, path: path(queries[Math.floor(Math.random() * queries.length)]) }) }]
    : queries.map((q) => ({ method: 'GET', path: path(q) }));
  const r = await autocannon({ ...options, requests });
  process.stdout.write(JSON.stringify({ requests: r.requests, latency: r.latency, errors: r.errors, timeouts: r.timeouts, non2xx: r.non2xx }));
});
`;

// The floor: the same load against a bare Fastify server in its own process, answering each of the fixed
// queries with the daemon's own answer held in memory: no auth, validation, search or database. What any server
// on this framework reaches on this machine beside this load generator, so the table shows how much of the
// daemon's latency is its own work.
const FLOOR_CHILD = `
const fastify = require('fastify')({ logger: false });
let input = '';
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', () => {
  const answers = new Map(Object.entries(JSON.parse(input)));
  fastify.get('/api/search', async (request, reply) => {
    const body = answers.get(request.query.q);
    return body === undefined ? reply.code(404).send() : reply.type('application/json; charset=utf-8').send(body);
  });
  fastify.listen({ port: 0, host: '127.0.0.1' }).then(() => process.stdout.write(String(fastify.server.address().port) + '\\n'));
});
`;

async function startFloor(answers: Record<string, string>): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['-e', FLOOR_CHILD], { cwd: path.resolve(import.meta.dirname, '..'), stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.stdin!.end(JSON.stringify(answers));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(Number(out.trim()));
    });
    child.once('exit', (code) => reject(new Error(`floor server exited with ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

interface LoadResult {
  requests: { average: number };
  latency: { p50: number; p99: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}

function loadFromChild(options: object): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', LOAD_CHILD], { cwd: path.resolve(import.meta.dirname, '..'), stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as LoadResult) : reject(new Error(`load generator exited with ${code}`))));
    child.stdin.end(JSON.stringify(options));
  });
}

export async function benchDaemon(): Promise<Row[]> {
  const total = Number(process.env.BENCH_DAEMON_SNIPPETS ?? 100_000);
  const durationSeconds = Number(process.env.BENCH_DAEMON_SECONDS ?? 30);
  const { info, pool } = await openBenchCorpus(total);
  const crawlName = `bench-crawl-${Date.now()}`;
  const connectionString = typeof info.config.connectionString === 'string' ? info.config.connectionString : undefined;
  // Its own home and agent workspace: the daemon must not touch the user's.
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'docdex-bench-daemon-'));
  // The crawled site is on loopback, which a crawl started over REST may reach only when the operator lists it
  // (without it the crawl was refused and the "while crawling" rows measured no crawl).
  const common = { CRAWL_DELAY: '0', CRAWL_ALLOW_HOSTS: '127.0.0.1', LOG_LEVEL: 'warn', NO_COLOR: '1', DOCDEX_HOME: scratch, WORKSPACE_PATH: path.join(scratch, 'workspace') };
  const env = connectionString
    ? { ...process.env, ...common, DATABASE_URL: connectionString }
    : {
        ...process.env,
        ...common,
        DB_HOST: String(info.config.host),
        DB_PORT: String(info.config.port),
        DB_NAME: String(info.config.database),
        DB_USER: String(info.config.user),
        DB_PASSWORD: String(info.config.password),
      };
  const site = await serveSite(5000, 5);
  const daemon = await startServe(env).catch(async (error: unknown) => {
    await site.close();
    rmSync(scratch, { recursive: true, force: true });
    await pool.end();
    throw error;
  });
  try {
    const base = daemon.url;
    const answers: Record<string, string> = {};
    for (const q of QUERIES) answers[q] = await (await fetch(`${base}/api/search?q=${encodeURIComponent(q)}&limit=10`)).text();
    const floorServer = await startFloor(answers);
    const floor = await loadFromChild({ url: floorServer.url, connections: 200, duration: durationSeconds, queries: QUERIES, random: false }).finally(() => floorServer.stop());
    // The same fixed load before the crawl starts: what the machine gives without one, so the table shows how
    // much of the p99 below is the crawl's.
    const idle = await loadFromChild({ url: base, connections: 200, duration: durationSeconds, queries: QUERIES, random: false });
    const start = await fetch(`${base}/api/crawl-jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ start_urls: [`${site.base}/p0.html`], name: crawlName, max_depth: 3, max_concurrent_crawls: 4 }),
    });
    // A refused or failed crawl stops the bench: rows "while crawling" without a crawl would measure nothing.
    if (!start.ok) throw new Error(`the crawl was not started: ${start.status} ${await start.text()}`);
    const job = (await start.json()) as { job_id: string };
    const crawledSoFar = async () => {
      const r = await fetch(`${base}/api/crawl-jobs/${job.job_id}`);
      if (!r.ok) throw new Error(`crawl job ${job.job_id}: ${r.status} ${await r.text()}`);
      return (await r.json()) as { pages_crawled: number; status: string };
    };
    const before = await crawledSoFar();
    const fixed = await loadFromChild({ url: base, connections: 200, duration: durationSeconds, queries: QUERIES, random: false });
    const afterFixed = await crawledSoFar();
    // The same load with each request drawn at random from 9,900 different two-word queries: identical
    // searches in flight at once are rare, so every request costs a search of its own.
    const varied = await loadFromChild({ url: base, connections: 200, duration: durationSeconds, queries: variedQueries(), random: true });
    const afterVaried = await crawledSoFar();
    await fetch(`${base}/api/crawl-jobs/${job.job_id}/cancel`, { method: 'POST' });
    type Crawled = { pages_crawled: number; status: string };
    type RowSpec = { mix: string; result: LoadResult; crawl?: [Crawled, Crawled]; floor?: [string, LoadResult]; goal?: [string, (r: LoadResult) => boolean] };
    const reqs = (r: LoadResult) => r.requests.average;
    const errors = (r: LoadResult) => r.errors + r.timeouts + r.non2xx;
    const row = ({ mix, result, crawl, floor: against, goal }: RowSpec): Row => ({
      snippets: total,
      clients: 200,
      seconds: durationSeconds,
      queries: mix,
      'req/s': reqs(result).toFixed(0),
      'p50 ms': result.latency.p50,
      'p99 ms': result.latency.p99,
      errors: result.errors + result.timeouts,
      non2xx: result.non2xx,
      'pages crawled meanwhile': crawl ? `${crawl[1].pages_crawled - crawl[0].pages_crawled} (crawl ${crawl[1].status})` : 'no crawl',
      floor: against ? `${against[0]}: ${reqs(against[1]).toFixed(0)} req/s` : '',
      ratio: against ? (reqs(result) / reqs(against[1])).toFixed(3) : '',
      goal: goal?.[0] ?? '',
      met: goal ? (goal[1](result) ? 'yes' : 'no') : '',
    });
    const fixedMix = `${QUERIES.length} fixed, in turn`;
    // Issue 6: a crawl may not cost the searches errors or a p99 over 50 ms.
    const issue6: [string, (r: LoadResult) => boolean] = ['0 errors, p99 <= 50 ms', (r) => errors(r) === 0 && r.latency.p99 <= 50];
    // Issue 52: many different questions at once, during a crawl. Its floor is the same daemon in the same
    // crawl asked the ten fixed questions over and over, which its caches answer: the ratio is what a search
    // of its own costs against an answer the daemon already holds.
    const issue52: [string, (r: LoadResult) => boolean] = ['>= 400 req/s, p99 <= 100 ms, 0 errors', (r) => reqs(r) >= 400 && r.latency.p99 <= 100 && errors(r) === 0];
    return [
      row({ mix: `${fixedMix}; bare Fastify answering from memory`, result: floor }),
      row({ mix: fixedMix, result: idle, floor: ['bare Fastify', floor] }),
      row({ mix: fixedMix, result: fixed, crawl: [before, afterFixed], floor: ['bare Fastify', floor], goal: issue6 }),
      row({ mix: '9,900 varied, at random', result: varied, crawl: [afterFixed, afterVaried], floor: ['same daemon and crawl, fixed queries', fixed], goal: issue52 }),
    ];
  } finally {
    await daemon.stop();
    await site.close();
    rmSync(scratch, { recursive: true, force: true });
    // The crawl's pages would otherwise stay in the kept corpus and grow it by thousands of snippets a run.
    await deleteSource(pool, crawlName).catch((error: unknown) => console.warn(`bench: could not delete ${crawlName}: ${(error as Error).message}`));
    await pool.end();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await benchDaemon();
  console.table(rows);
}
