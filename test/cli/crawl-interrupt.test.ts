import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { execa } from 'execa';
import type { ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveWorkers } from '../../src/core/crawl/jobs.js';
import { BIN } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

/**
 * Ctrl-C while `crawl start --wait` follows a crawl that a `docdex worker` process runs: the crawl is the
 * worker's, so the CLI says once that it goes on there and exits 130, the shell's code for an interrupt.
 */

/**
 * A docs site whose pages answer slowly, so a crawl is still running when the interrupt comes. The first request
 * for each page answers at once: it is the CLI reading the start page for the library's name before it queues
 * the crawl (15 s of waiting per crawl otherwise); the crawl's own fetch of the page is the later one.
 */
function slowSite(): http.Server {
  const seen = new Set<string>();
  const page = '<html><body><h1>Slow</h1></body></html>';
  return http.createServer((req, res) => {
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    if (!seen.has(req.url ?? '')) {
      seen.add(req.url ?? '');
      return void res.writeHead(200, { 'content-type': 'text/html' }).end(page);
    }
    const timer = setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end(page), 20_000);
    res.once('close', () => clearTimeout(timer));
  });
}

function waitFor(child: ResultPromise, pattern: RegExp, timeoutMs = 60_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}; output:\n${seen}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      if (pattern.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
  });
}

describe('Ctrl-C during crawl start --wait with a worker running', () => {
  let db: TestDatabase;
  let site: http.Server;
  let siteUrl: string;
  let worker: ResultPromise | undefined;

  beforeAll(async () => {
    db = await createTestDatabase({ CRAWL_ALLOW_HOSTS: '127.0.0.1' });
    site = slowSite();
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/docs/`;
  });

  afterAll(async () => {
    worker?.kill('SIGKILL');
    await worker?.catch(() => undefined);
    site.closeAllConnections();
    site.close();
    await db.drop();
  });

  it('says once that the crawl continues on the worker, and exits 130', async () => {
    worker = execa(process.execPath, [BIN, 'worker'], { env: db.env, extendEnv: false, reject: false });
    for (let i = 0; i < 200 && (await liveWorkers(db.pool)).length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await liveWorkers(db.pool)).length).toBeGreaterThan(0);

    const follow = execa(process.execPath, [BIN, 'crawl', 'start', siteUrl, '--wait', '--depth', '0'], { env: db.env, extendEnv: false, reject: false, stdin: 'ignore' });
    await waitFor(follow, /^crawl [0-9a-f]{8} /m);
    const { rows } = await db.pool.query<{ status: string }>('SELECT status FROM crawl_jobs');
    expect(rows.map((r) => r.status)).not.toContain('completed');
    follow.kill('SIGINT');
    const result = await follow;
    expect(result.exitCode, String(result.stderr)).toBe(130);
    const said = String(result.stderr).match(/continues on its worker/g) ?? [];
    expect(said).toHaveLength(1);
    expect(`${String(result.stdout)}${String(result.stderr)}`).not.toContain('unknown error');
    // Interrupting the follower left the crawl alone.
    const after = await db.pool.query<{ status: string }>('SELECT status FROM crawl_jobs');
    expect(['queued', 'running']).toContain(after.rows[0]!.status);
  });
});

describe('Ctrl-C during crawl start --wait with the workers in-process', () => {
  let db: TestDatabase;
  let site: http.Server;
  let siteUrl: string;

  beforeAll(async () => {
    db = await createTestDatabase({ CRAWL_ALLOW_HOSTS: '127.0.0.1' });
    site = slowSite();
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/docs/`;
  });

  afterAll(async () => {
    site.closeAllConnections();
    site.close();
    await db.drop();
  });

  it('cancels the crawl resumably and exits 130, not 1', async () => {
    const follow = execa(process.execPath, [BIN, 'crawl', 'start', siteUrl, '--wait', '--depth', '0'], { env: db.env, extendEnv: false, reject: false, stdin: 'ignore' });
    await waitFor(follow, /^crawl [0-9a-f]{8} /m);
    follow.kill('SIGINT');
    const result = await follow;
    expect(result.exitCode, String(result.stderr)).toBe(130);
    expect(String(result.stdout)).toMatch(/cancelled: .*Resume with `docdex crawl resume [0-9a-f-]+`/);
    const after = await db.pool.query<{ status: string }>('SELECT status FROM crawl_jobs');
    expect(after.rows[0]!.status).toBe('cancelled');
  }, 120_000);

  it('add --wait with several crawls: one Ctrl-C stops waiting on all of them and exits 130', async () => {
    // Issue #49: the first crawl was cancelled, then the second one was followed to its end.
    const origin = new URL(siteUrl).origin;
    const specs = [`${origin}/first/`, `${origin}/second/`, `${origin}/third/`];
    const follow = execa(process.execPath, [BIN, 'add', ...specs, '--wait', '--depth', '0'], { env: db.env, extendEnv: false, reject: false, stdin: 'ignore' });
    await waitFor(follow, /^crawl [0-9a-f]{8} /m, 150_000);
    follow.kill('SIGINT');
    const result = await follow;
    expect(result.exitCode, String(result.stderr)).toBe(130);
    const { rows } = await db.pool.query<{ status: string }>(`SELECT status FROM crawl_jobs WHERE start_urls && $1::text[] ORDER BY created_at`, [specs]);
    expect(rows.map((r) => r.status)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    // Each is resumable, as the single crawl's Ctrl-C leaves it; the first one's summary says so on stdout.
    expect(String(result.stderr)).toMatch(/Cancelled 2 more jobs, resumable: `docdex jobs resume [0-9a-f-]+`, /);
  }, 240_000);
});
