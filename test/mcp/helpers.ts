import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import type { Config } from '../../src/core/config.js';
import { startCrawl, startCrawlWorkers, waitForJob } from '../../src/core/crawl/index.js';
import type { CrawlRequestInput, CrawlWorkerOptions } from '../../src/core/crawl/index.js';
import type { ConnectionInfo } from '../../src/core/db/connect.js';

/** Every tool docdex's MCP server lists, sorted: the transports' tests check each lists them all. */
export const ALL_TOOLS = [
  'add_library',
  'cancel_crawl',
  'get_content',
  'get_crawl_status',
  'get_page_markdown',
  'get_project_libraries',
  'init_crawl',
  'search_libraries',
  'search_project',
  'sync_project',
];

export const SITE_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'site');
/**
 * Serves the fixture documentation site on an ephemeral loopback port. `/slow/` answers after 30 s, so a crawl
 * started there stays running long enough to be cancelled.
 */
export async function serveSite(): Promise<{ url: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push(pathname);
    if (pathname.startsWith('/slow/')) {
      const timer = setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><h1>Slow</h1></body></html>'), 30_000);
      res.once('close', () => clearTimeout(timer));
      return;
    }
    if (pathname === '/robots.txt') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
      return;
    }
    const file = path.join(SITE_DIR, pathname.endsWith('/') ? `${pathname}index.html` : pathname);
    if (!file.startsWith(SITE_DIR)) {
      res.writeHead(403).end();
      return;
    }
    readFile(file).then(
      (body) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body),
      () => res.writeHead(404, { 'content-type': 'text/plain' }).end('not found'),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Crawler settings that make timeouts and polling cost milliseconds in tests. */
export const FAST_WORKERS: CrawlWorkerOptions = {
  concurrency: 4,
  supervise: false,
  tickMs: 150,
  idlePollMs: 100,
  stopGraceMs: 1000,
  throttleWaitMs: 30,
  fetch: { connectTimeoutMs: 2000, headersTimeoutMs: 30_000, bodyTimeoutMs: 2000, totalTimeoutMs: 40_000, maxRetries: 0, retryBaseMs: 20, maxRetryAfterMs: 1000 },
};

/**
 * Indexes the fixture site with a real crawl: the crawler's startCrawl and its workers (in this process),
 * waiting until the job finishes.
 */
export async function crawlSite(db: { pool: pg.Pool; info: ConnectionInfo; config: Config }, request: CrawlRequestInput): Promise<{ sourceId: string; jobId: string }> {
  const workers = await startCrawlWorkers(db, db.config, FAST_WORKERS);
  try {
    const job = await startCrawl(db, db.config, request, { detectTimeoutMs: 2000 });
    const done = await waitForJob(db, job.job_id, () => undefined, { pollMs: 200, signal: AbortSignal.timeout(60_000) });
    if (done.status !== 'completed') throw new Error(`crawl of ${request.start_urls.join(', ')} ended ${done.status}: ${done.error ?? ''}`);
    return { sourceId: done.source_id!, jobId: done.job_id };
  } finally {
    await workers.stop();
  }
}

/** The fixture site as library "quillstack": every page, by a real crawl from its home page. */
export function crawlQuillstack(db: { pool: pg.Pool; info: ConnectionInfo; config: Config }, siteUrl: string): Promise<{ sourceId: string; jobId: string }> {
  return crawlSite(db, { name: 'quillstack', start_urls: [`${siteUrl}/`], max_depth: 2, metadata: { description: 'A made-up web toolkit used to test docdex.' } });
}

/** Text of an MCP tool result's content blocks. */
export function resultText(result: unknown): string {
  const content = ((result as { content?: unknown }).content ?? []) as Array<{ type: string; text?: string }>;
  return content.map((c) => (c.type === 'text' ? (c.text ?? '') : '')).join('\n');
}
