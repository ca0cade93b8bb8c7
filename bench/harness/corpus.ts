import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type pg from 'pg';
import picomatch from 'picomatch';
import type { Config } from '../../src/core/config.js';
import type { startCrawl, startCrawlWorkers, waitForJob } from '../../src/core/crawl/index.js';
import type { ConnectionInfo } from '../../src/core/db/connect.js';
import type { extractDocument } from '../../src/core/extract/index.js';
import type { storePage } from '../../src/core/store/pages.js';
import type { settleSearchIndexes } from '../../src/core/search/settle.js';

/**
 * The real documentation corpus for relevance runs: a static server for one site on 127.0.0.1 (what the
 * crawler fetches), and a direct loader that feeds the same HTML files through extractDocument and storePage
 * without HTTP, for quick runs and for CI.
 */

/**
 * The product functions the harness drives, passed in by its caller: the benches pass the built `dist/`, the
 * tests pass `src/`. Imported here, they would tie the harness to one of the two (and two copies of the store
 * in one process would not share its state).
 */
export interface IndexingParts {
  startCrawl: typeof startCrawl;
  startCrawlWorkers: typeof startCrawlWorkers;
  waitForJob: typeof waitForJob;
  extractDocument: typeof extractDocument;
  storePage: typeof storePage;
  settleSearchIndexes: typeof settleSearchIndexes;
}

export const EVAL_SITES = ['python', 'postgres', 'node'] as const;
export type EvalSiteName = (typeof EVAL_SITES)[number];

/** Start pages per site: each site's full table of contents, so every page is within crawl depth. */
export const SITE_START_PAGES: Readonly<Record<EvalSiteName, string[]>> = {
  python: ['contents.html', 'index.html'],
  postgres: ['index.html', 'bookindex.html', 'sql-commands.html'],
  node: ['index.html'],
};

// Sphinx's "show source" copies (_sources/*.rst.txt) repeat the pages' content; its generated indexes and
// search page list names without code. Path globs, as the crawler's exclude_patterns take them.
export const SITE_EXCLUDES: Readonly<Record<EvalSiteName, string[]>> = {
  python: ['/_sources/**', '/genindex*', '/py-modindex.html', '/search.html'],
  postgres: [],
  node: [],
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.css': 'text/css',
  '.js': 'text/javascript',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

export interface SiteServer {
  baseUrl: string;
  close(): Promise<void>;
}

/** Serves a directory on 127.0.0.1 (an ephemeral port), as a static documentation host would. */
export async function serveSite(root: string): Promise<SiteServer> {
  const base = path.resolve(root);
  const server = http.createServer((req, res) => {
    const urlPath = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    let file = path.join(base, urlPath);
    if (!file.startsWith(base)) {
      res.writeHead(403).end();
      return;
    }
    if (existsSync(file) && statSync(file).isDirectory()) file = path.join(file, 'index.html');
    if (!existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream' });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** HTML pages of a site, relative paths, sorted; the excluded copies left out. */
export function siteHtmlFiles(root: string, site: EvalSiteName): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const abs = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(abs);
      else if (/\.html?$/.test(entry.name)) out.push(path.relative(root, abs).split(path.sep).join('/'));
    }
  };
  walk(root);
  const excluded = SITE_EXCLUDES[site].map((g) => picomatch.makeRe(g, { dot: true }));
  return out.filter((f) => !excluded.some((re) => re.test(`/${f}`))).sort();
}

/** A fingerprint of a site's files (names and sizes), to know whether a cached index is still of this corpus. */
export function siteFingerprint(root: string, site: EvalSiteName): string {
  const h = createHash('sha256');
  for (const f of siteHtmlFiles(root, site)) h.update(`${f}:${statSync(path.join(root, f)).size}\n`);
  return h.digest('hex').slice(0, 16);
}

/**
 * Loads HTML files straight into the store, as if crawled (one synthetic completed crawl job). `files`
 * narrows the load to some pages. Two pages at a time: extraction is CPU-bound and the machine has 2 cores.
 */
async function ingestSiteDirect(
  parts: Pick<IndexingParts, 'extractDocument' | 'storePage' | 'settleSearchIndexes'>,
  pool: pg.Pool,
  options: { name: string; root: string; baseUrl: string; files: string[] },
): Promise<{ sourceId: string; pages: number; snippets: number }> {
  const source = await pool.query<{ id: string }>(
    `INSERT INTO sources (name, base_url, crawl_config) VALUES ($1, $2, $3)
     ON CONFLICT (name, version) DO UPDATE SET base_url = EXCLUDED.base_url RETURNING id`,
    [options.name, options.baseUrl, JSON.stringify({ start_urls: [options.baseUrl], max_depth: 3 })],
  );
  const sourceId = source.rows[0]!.id;
  const job = await pool.query<{ id: string }>(
    `INSERT INTO crawl_jobs (source_id, name, status, start_urls, max_depth, started_at, completed_at)
     VALUES ($1, $2, 'completed', $3, 3, now(), now()) RETURNING id`,
    [sourceId, options.name, [options.baseUrl]],
  );
  const jobId = job.rows[0]!.id;
  let pages = 0;
  let snippets = 0;
  let next = 0;
  const work = async () => {
    while (next < options.files.length) {
      const file = options.files[next++]!;
      const url = new URL(file, options.baseUrl).href;
      const { page, snippets: found, sections } = parts.extractDocument({ url, contentType: 'text/html', body: readFileSync(path.join(options.root, file)) });
      const stored = await parts.storePage(pool, {
        sourceId,
        url,
        title: page.title,
        markdown: page.markdown,
        contentHash: page.contentHash,
        job: { kind: 'crawl', id: jobId },
        snippets: found,
        sections: sections ?? [],
      });
      pages++;
      snippets += stored.snippetsInserted;
    }
  };
  await Promise.all([work(), work()]);
  // storePage does no index upkeep of its own (that is a post-commit stage): fold and merge once, at the end.
  await parts.settleSearchIndexes(pool);
  await pool.query(`UPDATE sources SET last_crawled_at = now() WHERE id = $1`, [sourceId]);
  return { sourceId, pages, snippets };
}

export type IngestMode = 'crawl' | 'direct';

export interface IndexedSite {
  site: EvalSiteName;
  sourceId: string;
  /** Root URL the site was indexed under; result URLs are relative to it. */
  baseUrl: string;
  pages: number;
  snippets: number;
  seconds: number;
  mode: IngestMode;
}

/**
 * Crawls one site of the corpus through the real crawler (served on 127.0.0.1, CRAWL_DELAY taken from
 * `config`, which relevance runs set to 0). Crawl workers must be running (startCrawlWorkers).
 */
async function crawlSite(
  parts: Pick<IndexingParts, 'startCrawl' | 'waitForJob'>,
  db: { pool: pg.Pool; info: ConnectionInfo },
  config: Config,
  site: EvalSiteName,
  root: string,
  options: { concurrency?: number } = {},
): Promise<IndexedSite> {
  const started = performance.now();
  const server = await serveSite(root);
  try {
    const job = await parts.startCrawl(
      db,
      config,
      {
        name: site,
        start_urls: SITE_START_PAGES[site].map((p) => new URL(p, server.baseUrl).href),
        max_depth: 3,
        exclude_patterns: SITE_EXCLUDES[site],
        max_concurrent_crawls: options.concurrency ?? 8,
      },
      { provenance: 'user' },
    );
    const done = await parts.waitForJob(db, job.id);
    if (done.status !== 'completed') throw new Error(`Crawl of ${site} ended ${done.status}: ${done.error ?? 'no error recorded'}`);
    return {
      site,
      sourceId: done.source_id!,
      baseUrl: server.baseUrl,
      pages: done.pages_crawled,
      snippets: done.snippets_stored,
      seconds: (performance.now() - started) / 1000,
      mode: 'crawl',
    };
  } finally {
    await server.close();
  }
}

/** Indexes the given sites, by crawling (the product path) or by loading the files directly (quick). */
export async function indexEvalSites(
  parts: IndexingParts,
  db: { pool: pg.Pool; info: ConnectionInfo },
  config: Config,
  options: { corpusDir: string; sites: readonly EvalSiteName[]; mode: IngestMode; onSite?: (site: IndexedSite) => void },
): Promise<IndexedSite[]> {
  const out: IndexedSite[] = [];
  if (options.mode === 'direct') {
    for (const site of options.sites) {
      const started = performance.now();
      const root = path.join(options.corpusDir, site);
      const baseUrl = `http://${site}.docs.test/`;
      const r = await ingestSiteDirect(parts, db.pool, { name: site, root, baseUrl, files: siteHtmlFiles(root, site) });
      const indexed: IndexedSite = { site, sourceId: r.sourceId, baseUrl, pages: r.pages, snippets: r.snippets, seconds: (performance.now() - started) / 1000, mode: 'direct' };
      options.onSite?.(indexed);
      out.push(indexed);
    }
    return out;
  }
  const workers = await parts.startCrawlWorkers(db, config, { supervise: false, concurrency: 8, idlePollMs: 200, tickMs: 500 });
  try {
    for (const site of options.sites) {
      const indexed = await crawlSite(parts, db, config, site, path.join(options.corpusDir, site));
      options.onSite?.(indexed);
      out.push(indexed);
    }
  } finally {
    await workers.stop();
  }
  return out;
}
