import type pg from 'pg';
import type { Config } from '../config.js';
import type { ConnectionInfo } from '../db/connect.js';
import { ConflictError, ERROR_CODES, NotFoundError, UserError, ValidationError } from '../errors.js';
import { publish } from '../events/notify.js';
import { upsertSourceForCrawl } from '../sources/upsert.js';
import type { UpsertedSource } from '../sources/upsert.js';
import { frontierCounters, insertStartUrls, routesOf } from './frontier.js';
import { dropQueuedPages, PAGE_QUEUE } from '../queue/pages.js';
import { WAKE_CHANNEL } from './wake.js';
import { parseCrawlRequest, storedCrawlConfig } from '../crawl-request.js';
import type { CrawlRequest, CrawlRequestInput, RenderMode } from '../crawl-request.js';
import { findChromium } from '../render/browser.js';
import { refusalForUrl } from '../net/policy.js';
import { typedByUser } from '../net/provenance.js';
import type { Provenance } from '../net/provenance.js';
import { assertLlmReady } from '../llm/preflight.js';
import { dropQueuedEnhancements, LLM_PROGRESS_LATERAL } from '../llm/job-stage.js';
import { withTransaction } from '../db/transaction.js';
import { countJobsByState } from '../queue/jobs-table.js';

/**
 * Crawl jobs: creating, reading, listing, cancelling, resuming, and the health report. Creating and resuming
 * only write rows and wake the workers (NOTIFY docdex_crawl_wake): any worker's controller adopts the job, so
 * nothing here needs a queue connection.
 */

export type CrawlJobStatus = 'queued' | 'running' | 'enhancing' | 'completed' | 'failed' | 'cancelled';
/** Every status, in the order a job goes through them (enhancing only with LLM enhancement on). */
export const CRAWL_JOB_STATUSES = ['queued', 'running', 'enhancing', 'completed', 'failed', 'cancelled'] as const;
export const TERMINAL_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

/**
 * A crawl job as the API, the MCP tools and `--json` return it: snake_case, the spec's field names.
 * The identifier is `job_id` (the spec's name for it); `id` carries the same value so code that handles
 * crawl and upload jobs (or sources) alike can read `id`. Timestamps are ISO 8601 strings.
 * pages_skipped counts pages unchanged since the last crawl plus pages not stored on purpose (robots.txt,
 * content type, size, or a redirect/canonical duplicate); pages_per_second is over recent progress while
 * running and over the whole run once finished; eta_seconds is null when unknown or finished.
 */
export interface CrawlJob {
  job_id: string;
  id: string;
  status: CrawlJobStatus;
  name: string;
  version: string;
  /** Null once a failed first crawl has removed its empty source (the job stays to say why). */
  source_id: string | null;
  start_urls: string[];
  max_depth: number;
  domain_filter: string | null;
  url_patterns: string[];
  exclude_patterns: string[];
  max_concurrent_crawls: number;
  use_sitemap: boolean;
  metadata: Record<string, unknown>;
  /** Pages the job may admit to its frontier (the request's max_pages). */
  max_pages: number;
  /** The job found max_pages pages: links found after that were not followed. */
  page_cap_reached: boolean;
  /** Links beyond the per-page cap (MAX_LINKS_PER_PAGE), summed over the job's pages. */
  links_ignored: number;
  /** auto: llms-full.txt, llms.txt and markdown twins are used; never: HTML only. */
  prefer_markdown: 'auto' | 'never';
  /** Pages stored (or unchanged) by the route their document took: HTML, a markdown twin, the site's llms-full.txt. */
  routes: PageRoutes;
  /** The largest robots.txt Crawl-delay the job lowered to the ceiling (MAX_CRAWL_DELAY_SECONDS); null when none. */
  crawl_delay_clamped: number | null;
  /** The request's render mode, and pages rendered in headless Chromium. */
  render: RenderMode;
  pages_rendered: number;
  /** Pages that looked client-rendered but were stored as fetched: no Chromium on the worker. */
  pages_render_missed: number;
  /** Said once per job when pages were missed: how many, and how to install Chromium; else null. */
  render_hint: string | null;
  /** Started with LLM enhancement on: the job reads enhancing while the model works through its pages. */
  llm_enhance: boolean;
  /** Pages of this job that went (or go) through the LLM stage, those it is through with, and those it gave up on. */
  llm_pages_total: number;
  llm_pages_done: number;
  llm_pages_failed: number;
  /** Snippets the model's answers changed. */
  llm_snippets_enhanced: number;
  pages_found: number;
  pages_crawled: number;
  pages_skipped: number;
  pages_failed: number;
  snippets_stored: number;
  current_url: string | null;
  pages_per_second: number;
  eta_seconds: number | null;
  error: string | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  heartbeat_at: string | null;
  updated_at: string;
}

export interface PageRoutes {
  html: number;
  markdown_twin: number;
  llms_full: number;
}

/** Which routes the stored pages took, when any took one other than HTML ("3 HTML, 12 markdown twins, 40 llms-full.txt"). */
export function routesText(routes: PageRoutes | undefined): string | null {
  if (!routes || routes.markdown_twin + routes.llms_full === 0) return null;
  const parts = [
    [routes.html, 'HTML'],
    [routes.markdown_twin, routes.markdown_twin === 1 ? 'markdown twin' : 'markdown twins'],
    [routes.llms_full, 'llms-full.txt'],
  ] as const;
  return parts
    .filter(([n]) => n > 0)
    .map(([n, what]) => `${n} ${what}`)
    .join(', ');
}

/** The crawl_jobs row as pg returns it: CrawlJob's fields, with Date timestamps and the column name max_concurrent. */
type CrawlJobRow = Omit<CrawlJob, 'job_id' | 'max_concurrent_crawls' | 'routes' | 'render_hint' | 'created_at' | 'started_at' | 'completed_at' | 'heartbeat_at' | 'updated_at'> & {
  max_concurrent: number;
  pages_by_route: Partial<PageRoutes>;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  heartbeat_at: Date | null;
  updated_at: Date;
};

/** The one line a job gives about pages it could not render, with how to fix that; null when there were none. */
function renderHint(missed: number): string | null {
  if (missed === 0) return null;
  return `${missed} page${missed === 1 ? '' : 's'} looked client-rendered but no Chromium was found, so ${missed === 1 ? 'it was' : 'they were'} indexed as fetched. ${ERROR_CODES.browser_unavailable.hint}`;
}

/** `--render always` needs a browser on this machine: refused before anything is written when there is none. */
function assertBrowserForRender(config: Config, request: CrawlRequest): void {
  if (request.render !== 'always' || findChromium(config.render.chromium) !== null) return;
  const where = config.render.chromium ? `DOCDEX_CHROMIUM (${config.render.chromium}) is not an executable` : 'no chromium or chromium-browser on PATH';
  throw new UserError(`Cannot render pages: ${where}.`, { code: 'browser_unavailable' });
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function toCrawlJob(r: CrawlJobRow): CrawlJob {
  return {
    job_id: r.id,
    id: r.id,
    status: r.status,
    name: r.name,
    version: r.version,
    source_id: r.source_id,
    start_urls: r.start_urls,
    max_depth: r.max_depth,
    domain_filter: r.domain_filter,
    url_patterns: r.url_patterns,
    exclude_patterns: r.exclude_patterns,
    max_concurrent_crawls: r.max_concurrent,
    use_sitemap: r.use_sitemap,
    metadata: r.metadata,
    max_pages: r.max_pages,
    page_cap_reached: r.page_cap_reached,
    links_ignored: r.links_ignored,
    prefer_markdown: r.prefer_markdown,
    routes: { html: r.pages_by_route.html ?? 0, markdown_twin: r.pages_by_route.markdown_twin ?? 0, llms_full: r.pages_by_route.llms_full ?? 0 },
    crawl_delay_clamped: r.crawl_delay_clamped === null ? null : Number(r.crawl_delay_clamped),
    render: r.render,
    pages_rendered: r.pages_rendered,
    pages_render_missed: r.pages_render_missed,
    render_hint: renderHint(r.pages_render_missed),
    llm_enhance: r.llm_enhance,
    llm_pages_total: r.llm_pages_total,
    llm_pages_done: r.llm_pages_done,
    llm_pages_failed: r.llm_pages_failed,
    llm_snippets_enhanced: r.llm_snippets_enhanced,
    pages_found: r.pages_found,
    pages_crawled: r.pages_crawled,
    pages_skipped: r.pages_skipped,
    pages_failed: r.pages_failed,
    snippets_stored: r.snippets_stored,
    current_url: r.current_url,
    pages_per_second: Math.round(Number(r.pages_per_second) * 100) / 100,
    eta_seconds: r.eta_seconds,
    error: r.error,
    created_at: r.created_at.toISOString(),
    started_at: iso(r.started_at),
    completed_at: iso(r.completed_at),
    heartbeat_at: iso(r.heartbeat_at),
    updated_at: r.updated_at.toISOString(),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function notFound(id: string): NotFoundError {
  return new NotFoundError(`No crawl job ${id}.`, { hint: 'List jobs with `docdex crawl list`.' });
}

async function selectJob(client: pg.ClientBase | pg.Pool, id: string): Promise<CrawlJobRow | null> {
  if (!UUID.test(id)) return null;
  const { rows } = await client.query<CrawlJobRow>(`SELECT j.*, llm.* FROM crawl_jobs j ${LLM_PROGRESS_LATERAL} WHERE j.id = $1`, [id]);
  return rows[0] ?? null;
}

/**
 * Accepts a full job id or a unique prefix of at least 4 characters (as printed by `crawl list`), like git.
 */
export async function resolveCrawlJobId(pool: pg.Pool, ref: string): Promise<string> {
  const id = ref.trim().toLowerCase();
  if (UUID.test(id)) return id;
  if (!/^[0-9a-f-]{4,36}$/.test(id)) throw notFound(ref);
  const { rows } = await pool.query<{ id: string }>(`SELECT id FROM crawl_jobs WHERE id::text LIKE $1 || '%' ORDER BY created_at DESC LIMIT 2`, [id]);
  if (rows.length === 0) throw notFound(ref);
  if (rows.length > 1) throw new ValidationError(`Job id prefix ${ref} is ambiguous.`, { hint: 'Give more characters of the id.' });
  return rows[0]!.id;
}

export async function getCrawlJob(pool: pg.Pool, id: string): Promise<CrawlJob> {
  const row = await selectJob(pool, id);
  if (!row) throw notFound(id);
  return toCrawlJob(row);
}

export interface ListCrawlJobsOptions {
  status?: CrawlJobStatus | CrawlJobStatus[];
  sourceId?: string;
  /** Only jobs of these sources (every version of a library); with sourceId too, both must hold. */
  sourceIds?: readonly string[];
  limit?: number;
  offset?: number;
}

export async function listCrawlJobs(pool: pg.Pool, options: ListCrawlJobsOptions = {}): Promise<{ items: CrawlJob[]; total: number; limit: number; offset: number }> {
  const limit = Math.max(1, Math.min(500, options.limit ?? 50));
  const offset = Math.max(0, options.offset ?? 0);
  const statuses = options.status === undefined ? null : Array.isArray(options.status) ? options.status : [options.status];
  if (options.sourceId !== undefined && !UUID.test(options.sourceId)) return { items: [], total: 0, limit, offset };
  if (options.sourceIds !== undefined && !options.sourceIds.every((id) => UUID.test(id))) return { items: [], total: 0, limit, offset };
  const sourceIds = options.sourceIds === undefined ? null : [...options.sourceIds];
  const { rows } = await pool.query<CrawlJobRow & { total: number }>(
    `SELECT j.*, llm.*, count(*) OVER ()::int AS total FROM crawl_jobs j ${LLM_PROGRESS_LATERAL}
      WHERE ($1::text[] IS NULL OR j.status = ANY($1::text[])) AND ($2::uuid IS NULL OR j.source_id = $2) AND ($5::uuid[] IS NULL OR j.source_id = ANY($5::uuid[]))
      ORDER BY j.created_at DESC, j.id
      LIMIT $3 OFFSET $4`,
    [statuses, options.sourceId ?? null, limit, offset, sourceIds],
  );
  let total = rows[0]?.total ?? 0;
  if (rows.length === 0 && offset > 0) {
    const c = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM crawl_jobs WHERE ($1::text[] IS NULL OR status = ANY($1::text[])) AND ($2::uuid IS NULL OR source_id = $2) AND ($3::uuid[] IS NULL OR source_id = ANY($3::uuid[]))`,
      [statuses, options.sourceId ?? null, sourceIds],
    );
    total = c.rows[0]!.n;
  }
  return { items: rows.map(toCrawlJob), total, limit, offset };
}

async function wakeWorkers(pool: pg.Pool, jobId: string): Promise<void> {
  await pool.query('SELECT pg_notify($1, $2)', [WAKE_CHANNEL, jobId]);
}

export interface StartCrawlOptions {
  /** Concurrency when the request gives none: 3 by default, the MCP tool passes 20. */
  defaultConcurrency?: number;
  /** Name detection fetch timeout; tests shrink it. */
  detectTimeoutMs?: number;
  /**
   * Who named the start URLs (net/provenance.ts), which sets the job's outbound policy: `user` only for URLs the
   * local user typed (CLI, TUI), which may then reach loopback; anything else (REST, MCP, a registry's homepage,
   * a project file, a stored URL asked for again by someone else) is `third_party`, the default. Every other
   * internal address needs CRAWL_ALLOW_HOSTS either way. Stored with the source, for recrawls.
   */
  provenance?: Provenance;
}

/**
 * Start URLs the outbound policy refuses on sight (an internal IP literal, localhost) are refused before
 * anything is written; names are judged when the crawler connects, which is the real guarantee.
 */
export function assertStartUrlsAllowed(config: Config, startUrls: readonly string[], allowLoopback: boolean): void {
  const policy = { allow: config.outbound.allowHosts, allowLoopback };
  for (const url of startUrls) {
    const refusal = refusalForUrl(url, policy);
    if (refusal) {
      throw new ValidationError(`Invalid crawl request: start_urls: ${refusal}.`, {
        hint: 'The crawler reaches only public addresses; list internal docs hosts in CRAWL_ALLOW_HOSTS (CIDRs and host names).',
        details: [{ path: 'start_urls', message: refusal }],
      });
    }
  }
}

interface SourceIdentity {
  name: string;
  nameGiven: boolean;
  version: string;
  description: string;
}

/**
 * The request's name and version, or, when it gives no name, the site's own from its start page (a given
 * version still wins), and the description for the source. A request that names its library is not fetched
 * for a version: the start page is the crawl's to fetch, under robots.txt.
 */
async function identityOf(db: { pool: pg.Pool }, config: Config, request: CrawlRequest, options: StartCrawlOptions): Promise<SourceIdentity> {
  const metaDescription = typeof request.metadata.description === 'string' ? request.metadata.description.trim() : '';
  if (request.name !== null) return { name: request.name, nameGiven: true, version: request.version ?? '', description: metaDescription };
  // Loaded on demand: the extractor and HTTP client are not needed to list or cancel jobs.
  const { detectSite } = await import('./detect.js');
  const site = await detectSite(db.pool, config, request.start_urls[0]!, { timeoutMs: options.detectTimeoutMs ?? 15_000, allowLoopback: typedByUser(options.provenance ?? 'third_party') });
  return { name: site.name, nameGiven: false, version: request.version ?? site.version, description: metaDescription || site.description };
}

async function assertNoActiveCrawl(client: pg.ClientBase, source: UpsertedSource): Promise<void> {
  const active = await client.query<{ id: string; status: string }>(`SELECT id, status FROM crawl_jobs WHERE source_id = $1 AND status IN ('queued', 'running', 'enhancing') LIMIT 1`, [source.id]);
  const other = active.rows[0];
  if (!other) return;
  throw new ConflictError(`${source.name}${source.version ? ` ${source.version}` : ''} already has a ${other.status} crawl (job ${other.id}).`, {
    hint: `Wait for it (\`docdex crawl status ${other.id}\`) or cancel it (\`docdex crawl cancel ${other.id}\`).`,
  });
}

/** Writes the job row and its start URLs into the frontier; returns the job id. */
async function insertCrawlJob(client: pg.ClientBase, source: UpsertedSource, request: CrawlRequest, options: { allowLoopback: boolean; llmEnhance: boolean }): Promise<string> {
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO crawl_jobs (source_id, name, status, start_urls, max_depth, version, domain_filter, url_patterns, exclude_patterns,
                             max_concurrent, metadata, use_sitemap, max_pages, allow_loopback, llm_enhance, prefer_markdown, render)
     VALUES ($1, $2, 'queued', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
     RETURNING id`,
    [
      source.id,
      source.name,
      request.start_urls,
      request.max_depth,
      source.version,
      request.domain_filter,
      request.url_patterns,
      request.exclude_patterns,
      request.max_concurrent_crawls,
      JSON.stringify(request.metadata),
      request.use_sitemap,
      request.max_pages,
      options.allowLoopback,
      options.llmEnhance,
      request.prefer_markdown,
      request.render,
    ],
  );
  const id = rows[0]!.id;
  const found = await insertStartUrls(client, id, request.start_urls);
  await client.query('UPDATE crawl_jobs SET pages_found = $2 WHERE id = $1', [id, found]);
  return id;
}

/**
 * Validates the request (nothing is written when it is invalid), detects the name and version from the start page when
 * none is given, creates or joins the source (see sources/upsert.ts), and queues the job with its start URLs
 * in the frontier. One source has at most one active crawl: a second start while one is queued or running is
 * a conflict.
 */
export async function startCrawl(db: { pool: pg.Pool; info: ConnectionInfo }, config: Config, input: CrawlRequestInput, options: StartCrawlOptions = {}): Promise<CrawlJob> {
  // A broken LLM setup is reported before any work starts, not as silently unenhanced snippets later.
  await assertLlmReady(config);
  const request = parseCrawlRequest(input, {
    ceiling: config.crawl.maxConcurrent,
    ...(options.defaultConcurrency === undefined ? {} : { defaultConcurrency: options.defaultConcurrency }),
  });
  const allowLoopback = typedByUser(options.provenance ?? 'third_party');
  assertStartUrlsAllowed(config, request.start_urls, allowLoopback);
  assertBrowserForRender(config, request);
  const { name, nameGiven, version, description } = await identityOf(db, config, request, options);
  const jobId = await withTransaction(db.pool, async (client) => {
    const source = await upsertSourceForCrawl(client, {
      name,
      nameGiven,
      version,
      description,
      baseUrl: request.start_urls[0]!,
      crawlConfig: storedCrawlConfig(request),
      metadata: request.metadata,
      typedByUser: allowLoopback,
    });
    await assertNoActiveCrawl(client, source);
    return insertCrawlJob(client, source, request, { allowLoopback, llmEnhance: config.llm.enabled });
  });
  await wakeWorkers(db.pool, jobId);
  return getCrawlJob(db.pool, jobId);
}

/**
 * Cancels a queued or running job. Workers hear it through NOTIFY and abort their fetches for the job, so it
 * stops within one page fetch everywhere; pages in flight go back to pending for a later resume, and its
 * queued pages leave the queue (a resume queues them again).
 */
export async function cancelCrawl(pool: pg.Pool, id: string): Promise<CrawlJob> {
  const row = await selectJob(pool, id);
  if (!row) throw notFound(id);
  const c = await frontierCounters(pool, row.id);
  // A cancelled crawl that fetched pages is the source's last crawl too (the dashboard's "last crawl").
  const { rows } = await pool.query<CrawlJobRow>(
    `WITH j AS (
       UPDATE crawl_jobs SET status = 'cancelled', completed_at = now(), updated_at = now(), eta_seconds = NULL, current_url = NULL,
         controller_worker_id = NULL, pages_found = $2, pages_crawled = $3, pages_skipped = $4, pages_failed = $5, snippets_stored = $6,
         pages_by_route = $7
        WHERE id = $1 AND status IN ('queued', 'running', 'enhancing')
        RETURNING *),
     s AS (UPDATE sources SET last_crawled_at = now() WHERE id = (SELECT source_id FROM j) AND (SELECT pages_crawled + pages_skipped FROM j) > 0)
     SELECT j.*, llm.* FROM j ${LLM_PROGRESS_LATERAL}`,
    [row.id, c.found, c.crawled, c.unchanged + c.skipped, c.failed, c.snippets, JSON.stringify(routesOf(c))],
  );
  const updated = rows[0];
  if (!updated) {
    throw new ConflictError(`Crawl job ${row.id} is already ${row.status}.`, {
      hint: row.status === 'completed' ? 'Nothing to cancel.' : `Resume it with \`docdex crawl resume ${row.id}\`.`,
    });
  }
  const job = toCrawlJob(updated);
  await dropQueuedPages(pool, [job.job_id]);
  await dropQueuedEnhancements(pool, job.job_id);
  await publish(pool, {
    event: 'job_complete',
    jobId: job.job_id,
    kind: 'crawl',
    state: 'cancelled',
    counters: countersOf(job),
    rate: job.pages_per_second,
    etaSeconds: null,
    currentUrl: null,
    error: null,
  });
  return job;
}

export function countersOf(job: CrawlJob): Record<string, number> {
  return {
    pages_found: job.pages_found,
    pages_crawled: job.pages_crawled,
    pages_skipped: job.pages_skipped,
    pages_failed: job.pages_failed,
    snippets_stored: job.snippets_stored,
  };
}

async function controllerAlive(pool: pg.Pool, id: string): Promise<boolean> {
  const { rows } = await pool.query<{ alive: boolean }>('SELECT crawl_worker_alive(controller_worker_id) AS alive FROM crawl_jobs WHERE id = $1', [id]);
  return rows[0]?.alive ?? false;
}

/**
 * Continues a failed or cancelled job from its frontier, or a running one whose controlling worker died.
 * Completed pages are not fetched again; pages that failed transiently (no answer, 429, 5xx) are retried;
 * claims of dead workers go back to pending. Any worker then adopts the job.
 */
export async function resumeCrawl(db: { pool: pg.Pool; info?: ConnectionInfo }, config: Config, id: string, options: { askedBy?: Provenance } = {}): Promise<CrawlJob> {
  await assertLlmReady(config);
  const pool = db.pool;
  const row = await selectJob(pool, id);
  if (!row) throw notFound(id);
  if (row.source_id === null) {
    throw new ConflictError(`Crawl job ${row.id} stored no page, and its empty source was removed when it failed.`, {
      hint: `Start a new crawl: \`docdex crawl start ${row.start_urls[0] ?? 'URL'}\`.`,
    });
  }
  if (row.status === 'completed') {
    throw new ConflictError(`Crawl job ${row.id} already completed.`, { hint: 'Start a new crawl of the source to refresh it (`docdex sources recrawl`).' });
  }
  if (row.status === 'enhancing') {
    throw new ConflictError(`Crawl job ${row.id} crawled its pages and is enhancing them with the LLM.`, { hint: `Follow it with \`docdex crawl status ${row.id}\`.` });
  }
  if ((row.status === 'running' || row.status === 'queued') && (await controllerAlive(pool, row.id))) {
    throw new ConflictError(`Crawl job ${row.id} is ${row.status} on a live worker.`, { hint: `Follow it with \`docdex crawl status ${row.id}\`.` });
  }
  await withTransaction(pool, async (client) => {
    const locked = await client.query<{ status: string }>('SELECT status FROM crawl_jobs WHERE id = $1 FOR UPDATE', [row.id]);
    if (locked.rows[0]?.status === 'completed') throw new ConflictError(`Crawl job ${row.id} already completed.`);
    await client.query(
      `UPDATE crawl_frontier SET status = 'pending', worker_id = NULL, claim_token = NULL, updated_at = now()
        WHERE job_id = $1 AND status = 'fetching' AND NOT crawl_worker_alive(worker_id)`,
      [row.id],
    );
    await client.query(
      `UPDATE crawl_frontier SET status = 'pending', worker_id = NULL, claim_token = NULL, attempts = 0, updated_at = now()
        WHERE job_id = $1 AND status = 'failed' AND (http_status IS NULL OR http_status = 429 OR http_status >= 500)`,
      [row.id],
    );
    // A resume never widens the policy: a CLI-started job resumed by an API caller loses loopback, and a job
    // whose start URLs a third party named (a registry's homepage) never gains it from a CLI resume.
    await client.query(
      `UPDATE crawl_jobs SET status = 'queued', error = NULL, completed_at = NULL, controller_worker_id = NULL, eta_seconds = NULL,
         heartbeat_at = now(), updated_at = now(), allow_loopback = allow_loopback AND $2
        WHERE id = $1`,
      [row.id, typedByUser(options.askedBy ?? 'third_party')],
    );
  });
  await wakeWorkers(pool, row.id);
  return getCrawlJob(pool, row.id);
}

export interface LiveWorker {
  worker_id: string;
  client_addr: string | null;
  connected_at: string;
}

/** Worker processes connected to this database right now (see crawl_worker_alive). */
export async function liveWorkers(pool: pg.Pool): Promise<LiveWorker[]> {
  const { rows } = await pool.query<{ worker_id: string; client_addr: string | null; connected_at: Date }>(
    `SELECT substring(application_name FROM 15) AS worker_id, host(client_addr) AS client_addr, backend_start AS connected_at
       FROM pg_stat_activity WHERE application_name LIKE 'docdex-worker:%' AND datname = current_database()
      ORDER BY backend_start`,
  );
  return rows.map((r) => ({ worker_id: r.worker_id, client_addr: r.client_addr, connected_at: r.connected_at.toISOString() }));
}

/** A job is stalled when its heartbeat is older than this (the controller ticks every second). */
export const STALL_SECONDS = 60;

export interface StalledJob {
  job_id: string;
  name: string;
  status: CrawlJobStatus;
  heartbeat_at: string | null;
  seconds_since_heartbeat: number | null;
  reason: string;
}

export interface CrawlHealth {
  healthy: boolean;
  workers: { live: number; pages_in_flight: number; list: Array<LiveWorker & { pages_in_flight: number; controlling: number }> };
  queue: { queued: number; active: number; retry: number; failed: number };
  jobs: { queued: number; running: number };
  stalled: StalledJob[];
}

/**
 * Workers (live sessions), pg-boss page-queue depth, active jobs, and stalled jobs: running with no heartbeat
 * for 60 s, or queued/running with nobody to run them.
 */
export async function crawlHealth(db: { pool: pg.Pool; info?: ConnectionInfo }): Promise<CrawlHealth> {
  const pool = db.pool;
  const workers = await liveWorkers(pool);
  const inFlight = await pool.query<{ worker_id: string; n: number }>(
    `SELECT worker_id::text, count(DISTINCT claim_token)::int AS n FROM crawl_frontier WHERE status = 'fetching' AND worker_id IS NOT NULL GROUP BY worker_id`,
  );
  const controlling = await pool.query<{ worker_id: string; n: number }>(
    `SELECT controller_worker_id::text AS worker_id, count(*)::int AS n FROM crawl_jobs
      WHERE status IN ('queued', 'running') AND controller_worker_id IS NOT NULL GROUP BY controller_worker_id`,
  );
  const flight = new Map(inFlight.rows.map((r) => [r.worker_id, r.n]));
  const ctl = new Map(controlling.rows.map((r) => [r.worker_id, r.n]));
  const list = workers.map((w) => ({ ...w, pages_in_flight: flight.get(w.worker_id) ?? 0, controlling: ctl.get(w.worker_id) ?? 0 }));

  const queue = await countJobsByState(pool, PAGE_QUEUE);

  const active = await pool.query<{
    id: string;
    name: string;
    status: CrawlJobStatus;
    heartbeat_at: Date | null;
    age: number | null;
    controller_alive: boolean;
  }>(
    `SELECT id, name, status, heartbeat_at, extract(epoch FROM now() - heartbeat_at)::float8 AS age,
            crawl_worker_alive(controller_worker_id) AS controller_alive
       FROM crawl_jobs WHERE status IN ('queued', 'running', 'enhancing') ORDER BY created_at`,
  );
  const stalled: StalledJob[] = [];
  for (const j of active.rows) {
    let reason: string | null = null;
    if (j.status === 'running' && (j.age === null || j.age > STALL_SECONDS)) reason = `no heartbeat for ${STALL_SECONDS} s`;
    else if (j.status === 'running' && !j.controller_alive) reason = 'its controlling worker is gone; another worker will adopt it, or run `docdex crawl resume`';
    else if (j.status === 'queued' && workers.length === 0) reason = 'queued but no worker is running (start `docdex worker` or `docdex serve`)';
    else if (j.status === 'enhancing' && workers.length === 0) reason = 'enhancing but no worker runs the LLM stage (start `docdex worker` or `docdex serve` with CODE_ENABLE_LLM_EXTRACTION=true)';
    if (reason) {
      stalled.push({
        job_id: j.id,
        name: j.name,
        status: j.status,
        heartbeat_at: iso(j.heartbeat_at),
        seconds_since_heartbeat: j.age === null ? null : Math.round(j.age),
        reason,
      });
    }
  }
  return {
    healthy: stalled.length === 0,
    workers: { live: workers.length, pages_in_flight: list.reduce((a, w) => a + w.pages_in_flight, 0), list },
    queue,
    jobs: { queued: active.rows.filter((j) => j.status === 'queued').length, running: active.rows.filter((j) => j.status === 'running').length },
    stalled,
  };
}
