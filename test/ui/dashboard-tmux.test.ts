import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCrawl, startCrawlWorkers } from '../../src/core/crawl/index.js';
import type { CrawlWorkers } from '../../src/core/crawl/index.js';
import { BIN, ROOT } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

/**
 * The real built binary in a real terminal: tmux gives `docdex dashboard` a 120×40 pty, the test types
 * into it and reads the screen back, while a real crawl of a local site runs in this process's workers
 * (so every update the dashboard shows crossed PostgreSQL's NOTIFY). One screen capture per screen is kept
 * under test-output/tui/ for review.
 */

const HAS_TMUX = spawnSync('tmux', ['-V']).status === 0;
if (!HAS_TMUX) {
  // tmux is a host tool (.ci/run installs it); without it this suite cannot drive a terminal.
  console.warn('dashboard-tmux: tmux is not installed; skipping the terminal end-to-end test.');
  if (process.env.CI) throw new Error('tmux is required in CI (.ci/run installs it).');
}

const OUT = path.join(ROOT, 'test-output', 'tui');
const SOCKET = `docdex-test-${randomBytes(4).toString('hex')}`;
const SESSION = 'dash';
const MARKER = 'tmux_marker_fn';
// Each page takes this long to answer, so a crawl of a dozen pages, one at a time, runs for several seconds.
const PAGE_DELAY_MS = 600;

function tmux(...args: string[]): string {
  return execFileSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });
}

function screen(): string {
  return tmux('capture-pane', '-p', '-t', SESSION);
}

function keys(...k: string[]): void {
  tmux('send-keys', '-t', SESSION, ...k);
}

/** Types literal text (send-keys -l), so words like "Enter" are not read as key names. */
function typeText(text: string): void {
  tmux('send-keys', '-t', SESSION, '-l', text);
}

async function waitForScreen(test: (s: string) => boolean, what: string, timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = screen();
    if (test(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`Timed out waiting for ${what}. Last screen:\n${last}`);
}

function save(name: string, text: string): void {
  mkdirSync(OUT, { recursive: true });
  const file = path.join(OUT, `${name}.txt`);
  writeFileSync(file, text);
  console.log(`TUI snapshot: ${file}`);
}

function page(title: string, links: string[], code: string): string {
  return `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1>
<p>How to use ${title}.</p>
<pre><code class="language-python">${code}</code></pre>
${links.map((l) => `<a href="${l}">${l}</a>`).join('\n')}
</main></body></html>`;
}

/** A small documentation site: an index linking to `count` pages with a code block each, one of them broken. */
function startSite(prefix: string, count: number): Promise<{ url: string; close(): Promise<void> }> {
  const paths = Array.from({ length: count }, (_, i) => `/${prefix}/p${i}`);
  const server = http.createServer((req, res) => {
    const p = (req.url ?? '/').split('?')[0]!;
    setTimeout(
      () => {
        if (p === `/${prefix}/`) {
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end(page(`${prefix} index`, [...paths, `/${prefix}/missing`], `import ${prefix}\n${prefix}.setup()`));
        } else if (paths.includes(p)) {
          const n = p.split('/p')[1];
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end(page(`${prefix} page ${n}`, [`/${prefix}/`], `def ${MARKER}_${prefix}_${n}(x):\n    # step ${n}\n    return x * ${n}`));
        } else {
          res.writeHead(404, { 'content-type': 'text/plain' });
          res.end('not found');
        }
      },
      p === '/robots.txt' ? 0 : PAGE_DELAY_MS,
    );
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}/${prefix}/`, close: () => new Promise<void>((r) => server.close(() => r())) });
    });
  });
}

describe.skipIf(!HAS_TMUX)('docdex dashboard under tmux (real binary, real database, real crawl)', () => {
  let db: TestDatabase;
  let workers: CrawlWorkers;
  const sites: Array<{ close(): Promise<void> }> = [];
  const exitFile = path.join(OUT, `.exit-${SOCKET}`);

  beforeAll(async () => {
    db = await createTestDatabase();
    workers = await startCrawlWorkers(db, db.config, { concurrency: 4, supervise: false, tickMs: 250, idlePollMs: 100, stopGraceMs: 1000, onError: (e) => console.error('crawl worker error:', e) });
    mkdirSync(OUT, { recursive: true });
    const env = Object.entries({ ...db.env, TERM: 'xterm-256color', NO_COLOR: '1' })
      .filter((e): e is [string, string] => typeof e[1] === 'string')
      .flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    // The shell around the binary shows what the terminal looks like once the dashboard is gone.
    const script = `echo BEFORE-DASHBOARD; ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} dashboard --screen jobs; echo "dashboard exit=$?" > ${JSON.stringify(exitFile)}; echo AFTER-DASHBOARD; sleep 60`;
    tmux('new-session', '-d', '-x', '120', '-y', '40', '-s', SESSION, ...env, 'sh', '-c', script);
  });

  afterAll(async () => {
    if (HAS_TMUX) spawnSync('tmux', ['-L', SOCKET, 'kill-server']);
    rmSync(exitFile, { force: true });
    await workers?.stop();
    for (const s of sites) await s.close();
    await db?.drop();
  });

  it('follows a crawl live to completion', async () => {
    await waitForScreen((s) => s.includes('No jobs yet'), 'the empty Jobs screen');
    const site = await startSite('alpha', 10);
    sites.push(site);
    const job = await startCrawl(db, db.config, { name: 'alpha-docs', start_urls: [site.url], max_depth: 1, max_concurrent_crawls: 1 });

    const seen = new Set<number>();
    let midway = '';
    await waitForScreen(
      (s) => {
        const m = /(\d+)\/(\d+) pages/.exec(s);
        if (m && s.includes('running')) {
          seen.add(Number(m[1]));
          if (Number(m[1]) >= 3 && !midway) midway = s;
        }
        // One page of the site is a broken link: the job completes with a failed page, which reads `partial`.
        return s.includes('partial');
      },
      'the crawl to complete',
      40_000,
    );
    const done = await waitForScreen((s) => /alpha-docs +partial +█+ 100%/.test(s), 'the finished bar');
    save('crawls-running', midway);
    save('crawls', done);
    // The bar moved through intermediate states, not just start and end.
    expect(seen.size).toBeGreaterThanOrEqual(3);
    expect(done).toMatch(/11\/12 pages · 1 failed · 11 snippets/);
    // The broken link is listed under the finished job, which stays selected.
    expect(done).toMatch(/last errors:\n +http:\/\/127\.0\.0\.1:\d+\/alpha\/missing HTTP 404/);
    const row = (await db.pool.query<{ status: string; pages_crawled: number }>('SELECT status, pages_crawled FROM crawl_jobs WHERE id = $1', [job.id])).rows[0]!;
    expect(row).toEqual({ status: 'completed', pages_crawled: 11 });
  });

  it('shows a banner when its database connections are cut, and recovers by itself', async () => {
    // What a server restart looks like to the dashboard: its sessions (queries and LISTEN) are killed.
    await db.pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND application_name IN ('docdex-dashboard', 'docdex-listen')`,
    );
    const lost = await waitForScreen((s) => s.includes('Database connection lost'), 'the connection banner', 10_000);
    save('connection-lost', lost);
    expect(lost).toContain('alpha-docs');
    await waitForScreen((s) => !s.includes('Database connection lost'), 'the banner to clear', 15_000);
    // Listening again: the resubscribed LISTEN connection is back.
    for (let i = 0; i < 50; i++) {
      const { rows } = await db.pool.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'docdex-listen'`);
      if (rows.length > 0) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the dashboard did not listen again after reconnecting');
  });

  it('cancels a running crawl from the keyboard', async () => {
    const site = await startSite('beta', 30);
    sites.push(site);
    const job = await startCrawl(db, db.config, { name: 'beta-docs', start_urls: [site.url], max_depth: 1, max_concurrent_crawls: 1 });
    // The running job sorts first and the selection starts on the first row.
    // Cancel once a page or two is in, so the crawl is really moving when the key arrives.
    await waitForScreen((s) => {
      const rows = s.split('\n');
      const i = rows.findIndex((l) => /^› beta-docs +running/.test(l));
      return i >= 0 && /^ +[1-9]\d*\/\d+ pages/.test(rows[i + 1] ?? '');
    }, 'beta-docs running and selected');
    keys('c');
    // The confirmation comes from the cancel call, the row's new status from the job's event a moment later.
    const after = await waitForScreen((s) => s.includes('Cancel beta-docs: done.') && /beta-docs +cancelled/.test(s), 'the cancel confirmation and the cancelled row');
    expect(after).toMatch(/beta-docs +cancelled/);
    const row = (await db.pool.query<{ status: string; pages_crawled: number; pages_found: number }>('SELECT status, pages_crawled, pages_found FROM crawl_jobs WHERE id = $1', [job.id])).rows[0]!;
    expect(row.status).toBe('cancelled');
    expect(row.pages_crawled).toBeGreaterThan(0);
    expect(row.pages_crawled).toBeLessThan(row.pages_found);
    save('crawls-cancelled', after);
  });

  it('finds a snippet on the Search screen and shows it in full', async () => {
    keys('4');
    await waitForScreen((s) => s.includes('Type to search snippets'), 'the Search screen');
    typeText(`${MARKER}_alpha_7`);
    const results = await waitForScreen((s) => /› .*python +alpha-docs/.test(s), 'a search result');
    save('search', results);
    keys('Enter');
    const detail = await waitForScreen((s) => s.includes(`def ${MARKER}_alpha_7(x):`), 'the snippet');
    save('search-detail', detail);
    expect(detail).toMatch(/http:\/\/127\.0\.0\.1:\d+\/alpha\/p7/);
    expect(detail).toContain('return x * 7');
    keys('Escape');
    await waitForScreen((s) => s.includes('←→ filters'), 'back to results');
  });

  it('shows the overview and the sources, and quits cleanly on q', async () => {
    // From Search (its field takes digits), Tab goes to the Agent screen, and again wraps around to the Overview.
    keys('Tab');
    await waitForScreen((s) => s.includes('Repositories    Sessions'), 'the Agent screen');
    keys('Tab');
    const overview = await waitForScreen((s) => /Totals sources 2/.test(s) && s.includes('python'), 'the Overview');
    save('overview', overview);
    expect(overview).toMatch(/crawl +queued 0 +running 0 +completed 1 +failed 0 +cancelled 1/);
    keys('2');
    // Both hold documents, so both are indexed, whatever their last job's end (beta-docs' crawl was cancelled).
    const sources = await waitForScreen((s) => s.includes('press / to filter') && /alpha-docs +- +11 +11 .* indexed/.test(s) && /beta-docs .* indexed/.test(s), 'the Sources table');
    save('sources', sources);

    // Down to 80×24: the layout follows the resize and still fits, help bar on the last line.
    tmux('resize-window', '-t', SESSION, '-x', '80', '-y', '24');
    const small = await waitForScreen((s) => s.split('\n').length <= 25 && /^docdex +1 Overview/.test(s) && s.includes('q quit'), 'the 80×24 layout');
    save('sources-80x24', small);
    const rows = small.replace(/\n$/, '').split('\n');
    expect(rows).toHaveLength(24);
    expect(rows[23]).toMatch(/^↑↓ select {2}\/ filter/);
    expect(rows.find((l) => l.startsWith('› '))).toMatch(/^› alpha-docs +- +11 +11 /);
    keys('q');
    const shell = await waitForScreen((s) => s.includes('AFTER-DASHBOARD'), 'the shell after quitting');
    expect(readFileSync(exitFile, 'utf8').trim()).toBe('dashboard exit=0');
    // The alternate screen is gone: the shell's own lines are back and nothing of the dashboard remains.
    expect(shell).toContain('BEFORE-DASHBOARD');
    expect(shell).not.toContain('Totals');
    save('after-quit', shell);
  });
});
