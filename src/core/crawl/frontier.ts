import type pg from 'pg';
import { withTransaction } from '../db/transaction.js';
import type { Enqueue } from './queue.js';
import type { Scope } from './scope.js';
import { cleanUrl, normalizeUrl } from './url.js';

/**
 * The crawl frontier in PostgreSQL. Every state change of a page is one statement or one transaction here,
 * and every write by a worker is fenced by the claim token it got from `crawl_claim_page`: a worker that was
 * presumed dead (and whose page was handed to another) cannot overwrite the newer attempt.
 */

export type FrontierStatus = 'pending' | 'fetching' | 'done' | 'unchanged' | 'skipped' | 'failed';

/** The claim was taken away (sweep of a presumed-dead worker, or resume). The page belongs to someone else. */
export class ClaimLostError extends Error {
  override readonly name = 'ClaimLostError';
  constructor(url: string) {
    super(`lost the claim on ${url}`);
  }
}

export type ClaimOutcome = 'claimed' | 'throttled' | 'busy' | 'finished' | 'missing' | 'not_running';

export interface Claim {
  outcome: ClaimOutcome;
  depth: number | null;
  fetchUrl: string | null;
  attempts: number | null;
  /** What the last crawl of the source saw at this URL (read in the same round trip). */
  previous: PreviousFetch | null;
  /** How the page's document may be read other than by fetching its HTML (see page-route.ts). */
  hints: RouteHints;
}

/** Which route a stored page's document took: its HTML, its markdown twin, or its part of llms-full.txt. */
export type PageRoute = 'html' | 'markdown_twin' | 'llms_full';

export interface RouteHints {
  /** The page's text from the site's llms-full.txt, when the job's discovery split one (crawl_llms_pages). */
  llmsMarkdown: string | null;
  /** The site's llms.txt links markdown files: its pages have `.md` twins beside them (crawl_jobs.markdown_twins). */
  siteTwins: boolean;
}

const NO_HINTS: RouteHints = { llmsMarkdown: null, siteTwins: false };

export async function insertStartUrls(client: pg.ClientBase, jobId: string, urls: string[]): Promise<number> {
  const byKey = new Map<string, string>();
  for (const u of urls) {
    const key = normalizeUrl(u);
    const fetchUrl = cleanUrl(u);
    if (key && fetchUrl && !byKey.has(key)) byKey.set(key, fetchUrl);
  }
  const keys = [...byKey.keys()];
  const { rowCount } = await client.query(
    `INSERT INTO crawl_frontier (job_id, url, fetch_url, depth)
     SELECT $1, t.url, t.fetch_url, 0 FROM unnest($2::text[], $3::text[]) AS t(url, fetch_url)
     ON CONFLICT DO NOTHING`,
    [jobId, keys, keys.map((k) => byKey.get(k)!)],
  );
  return rowCount ?? 0;
}

export async function claimPage(pool: pg.Pool, jobId: string, sourceId: string, url: string, workerId: string, token: string): Promise<Claim> {
  const { rows } = await pool.query<{
    outcome: ClaimOutcome;
    depth: number | null;
    fetch_url: string | null;
    attempts: number | null;
    has_previous: boolean;
    document_url: string | null;
    document_hash: string | null;
    etag: string | null;
    last_modified: string | null;
    links: string[] | null;
    llms_markdown: string | null;
    markdown_twins: boolean | null;
  }>({
    // Named (prepared once per connection): this runs for every page, and planning it cost as much as running it.
    name: 'docdex-crawl-claim',
    text: `SELECT c.outcome, c.depth, c.fetch_url, c.attempts, p.url IS NOT NULL AS has_previous,
            p.document_url, d.content_hash AS document_hash, p.etag, p.last_modified, p.links,
            lp.markdown AS llms_markdown, j.markdown_twins
       FROM crawl_claim_page($1, $2, $3, $4) c
       LEFT JOIN crawl_pages p ON c.outcome = 'claimed' AND p.source_id = $5 AND p.url = $2
       LEFT JOIN documents d ON d.source_id = p.source_id AND d.url = p.document_url
       LEFT JOIN crawl_llms_pages lp ON c.outcome = 'claimed' AND lp.job_id = $1 AND lp.url = $2
       LEFT JOIN crawl_jobs j ON c.outcome = 'claimed' AND j.id = $1`,
    values: [jobId, url, workerId, token, sourceId],
  });
  const r = rows[0];
  if (!r) return { outcome: 'missing', depth: null, fetchUrl: null, attempts: null, previous: null, hints: NO_HINTS };
  return {
    outcome: r.outcome,
    depth: r.depth,
    fetchUrl: r.fetch_url,
    attempts: r.attempts,
    previous: r.has_previous ? { documentUrl: r.document_url, documentHash: r.document_hash, etag: r.etag, lastModified: r.last_modified, links: r.links ?? [] } : null,
    hints: { llmsMarkdown: r.llms_markdown, siteTwins: r.markdown_twins ?? false },
  };
}

/**
 * Takes a second key for the page being processed: where a redirect ended, or its rel=canonical. Succeeds
 * when the key is new or only pending (its queued job will find it finished); fails when another worker
 * fetched or is fetching it, in which case this page is a duplicate.
 */
export async function claimAlias(pool: pg.Pool, a: { jobId: string; url: string; fetchUrl: string; depth: number; workerId: string; token: string; from: string }): Promise<boolean> {
  const { rowCount } = await pool.query(
    `INSERT INTO crawl_frontier AS f (job_id, url, fetch_url, depth, status, worker_id, claim_token, attempts, discovered_from)
     VALUES ($1, $2, $3, $4, 'fetching', $5, $6, 1, $7)
     ON CONFLICT (job_id, url) DO UPDATE SET status = 'fetching', worker_id = EXCLUDED.worker_id,
       claim_token = EXCLUDED.claim_token, depth = least(f.depth, EXCLUDED.depth), attempts = f.attempts + 1, updated_at = now()
     WHERE f.status = 'pending' OR (f.status = 'fetching' AND f.claim_token <> EXCLUDED.claim_token AND NOT crawl_worker_alive(f.worker_id))`,
    [a.jobId, a.url, a.fetchUrl, a.depth, a.workerId, a.token, a.from],
  );
  return (rowCount ?? 0) > 0;
}

export interface PreviousFetch {
  documentUrl: string | null;
  /** Hash of the stored document; null when the document is gone (then nothing counts as unchanged). */
  documentHash: string | null;
  etag: string | null;
  lastModified: string | null;
  links: string[];
}

/** What the last crawl of this source saw at `url`, for conditional GET and the unchanged check. */
export async function previousFetch(pool: pg.Pool, sourceId: string, url: string): Promise<PreviousFetch | null> {
  const { rows } = await pool.query<{ document_url: string | null; document_hash: string | null; etag: string | null; last_modified: string | null; links: string[] }>(
    `SELECT p.document_url, d.content_hash AS document_hash, p.etag, p.last_modified, p.links
       FROM crawl_pages p
       LEFT JOIN documents d ON d.source_id = p.source_id AND d.url = p.document_url
      WHERE p.source_id = $1 AND p.url = $2`,
    [sourceId, url],
  );
  const r = rows[0];
  if (!r) return null;
  return { documentUrl: r.document_url, documentHash: r.document_hash, etag: r.etag, lastModified: r.last_modified, links: r.links };
}

export interface SettleRow {
  url: string;
  status: Exclude<FrontierStatus, 'pending' | 'fetching'>;
  httpStatus?: number | null;
  error?: string | null;
  skipReason?: string | null;
  contentHash?: string | null;
  etag?: string | null;
  lastModified?: string | null;
  documentUrl?: string | null;
  snippets?: number;
  /** The route the page's document took (done and unchanged pages). */
  route?: PageRoute | null;
}

/**
 * Records the outcome of every key this claim holds, and with `record` what the source's fetch record says
 * about those keys, in the same statement. Returns the smallest depth among them (read under the row lock,
 * so a depth lowered by a concurrent discovery is seen). Throws ClaimLostError when the claim is no longer
 * ours, which rolls back the page write around it (and, outside a transaction, the record with it).
 */
export async function settleRows(client: pg.ClientBase | pg.Pool, jobId: string, token: string, rows: SettleRow[], record?: { sourceId: string; urls: string[]; value: FetchRecord }): Promise<number> {
  const col = <T>(f: (r: SettleRow) => T) => rows.map(f);
  const settle = `UPDATE crawl_frontier f SET status = t.status, http_status = t.http_status, last_error = t.error, skip_reason = t.skip_reason,
       content_hash = t.content_hash, etag = t.etag, last_modified = t.last_modified, document_url = t.document_url,
       snippets = t.snippets, route = t.route, updated_at = now()
     FROM unnest($3::text[], $4::text[], $5::int[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::int[], $13::text[])
       AS t(url, status, http_status, error, skip_reason, content_hash, etag, last_modified, document_url, snippets, route)
     WHERE f.job_id = $1 AND f.claim_token = $2 AND f.status = 'fetching' AND f.url = t.url
     RETURNING f.url, f.depth`;
  const values: unknown[] = [
    jobId,
    token,
    col((r) => r.url),
    col((r) => r.status),
    col((r) => r.httpStatus ?? null),
    col((r) => (r.error ? r.error.slice(0, 2000) : null)),
    col((r) => r.skipReason ?? null),
    col((r) => r.contentHash ?? null),
    col((r) => r.etag ?? null),
    col((r) => r.lastModified ?? null),
    col((r) => r.documentUrl ?? null),
    col((r) => r.snippets ?? 0),
    col((r) => r.route ?? null),
  ];
  let text = settle;
  if (record) {
    // Written only when every key was still ours: a lost claim must not overwrite the newer attempt's record.
    text = `WITH settled AS (${settle}),
       recorded AS (
         INSERT INTO crawl_pages (source_id, url, document_url, content_hash, etag, last_modified, links, updated_at)
         SELECT $14, u, $16, $17, $18, $19, $20, now() FROM unnest($15::text[]) AS u
          WHERE (SELECT count(*) FROM settled) = $21
         ON CONFLICT (source_id, url) DO UPDATE SET document_url = EXCLUDED.document_url, content_hash = EXCLUDED.content_hash,
           etag = EXCLUDED.etag, last_modified = EXCLUDED.last_modified, links = EXCLUDED.links, updated_at = now())
     SELECT url, depth FROM settled`;
    const r = record.value;
    values.push(record.sourceId, [...new Set(record.urls)].sort(), r.documentUrl, r.contentHash, r.etag, r.lastModified, r.links, rows.length);
  }
  // Named (prepared once per connection), like the claim: one of the two runs for every page.
  const result = await client.query<{ url: string; depth: number }>({ name: record ? 'docdex-crawl-settle-record' : 'docdex-crawl-settle', text, values });
  if (result.rows.length !== rows.length) throw new ClaimLostError(rows[0]?.url ?? '');
  return Math.min(...result.rows.map((r) => r.depth));
}

export interface FetchRecord {
  documentUrl: string | null;
  contentHash: string | null;
  etag: string | null;
  lastModified: string | null;
  links: string[];
}

export async function forgetFetch(client: pg.ClientBase | pg.Pool, sourceId: string, url: string): Promise<void> {
  await client.query('DELETE FROM crawl_pages WHERE source_id = $1 AND url = $2', [sourceId, url]);
}

export interface ExpandContext {
  jobId: string;
  sourceId: string;
  maxDepth: number;
  /** Pages the job may admit (max_pages): links found once the frontier holds that many are not added. */
  maxPages: number;
  scope: Scope;
  enqueue: Enqueue;
}

/**
 * Adds a page's links one level below it. New keys are queued. A key already known at a greater depth is
 * lowered; if it was already processed, its stored links are expanded again at the new depth, so depth limits
 * are exact whatever order concurrent workers finish pages in. Keys are sorted so concurrent transactions
 * take the frontier's index locks in the same order.
 */
/**
 * How many more rows job $1 may admit under its cap $<cap>, as SQL. The count reads at most `cap` index entries
 * of the job. Pages committing at the same moment each see the others' rows only once committed, so the cap can
 * be passed by the links of the pages in flight at that moment, never more.
 */
export function admitLimitSql(cap: string): string {
  return `greatest(0, ${cap} - (SELECT count(*) FROM (SELECT 1 FROM crawl_frontier WHERE job_id = $1 LIMIT ${cap}) AS admitted))`;
}

export async function expandLinks(client: pg.ClientBase, ctx: ExpandContext, parentDepth: number, parentKeys: string[], links: string[]): Promise<number> {
  if (parentDepth >= ctx.maxDepth || links.length === 0) return 0;
  const depth = parentDepth + 1;
  const exclude = new Set(parentKeys);
  const byKey = new Map<string, string>();
  for (const link of links) {
    const fetchUrl = cleanUrl(link);
    if (!fetchUrl) continue;
    const key = normalizeUrl(fetchUrl)!;
    if (exclude.has(key) || byKey.has(key)) continue;
    if (!ctx.scope.allows(new URL(fetchUrl))) continue;
    byKey.set(key, fetchUrl);
  }
  if (byKey.size === 0) return 0;
  const keys = [...byKey.keys()].sort();
  // Two statements, not one INSERT ... ON CONFLICT DO UPDATE: that would lock every known key until commit,
  // and navigation links make the same few keys known to every page, so all expansions would queue on them.
  // DO NOTHING locks nothing it skips; the UPDATE runs with a fresh snapshot, so it also sees a key another
  // page inserted deeper while the INSERT waited for it, and it locks only the rare rows it lowers.
  // Keys already known do not count against the cap, so they are left out before the limit applies.
  const inserted = await client.query<{ url: string }>(
    `INSERT INTO crawl_frontier (job_id, url, fetch_url, depth, discovered_from)
     SELECT $1, t.url, t.fetch_url, $2, $3 FROM unnest($4::text[], $5::text[]) WITH ORDINALITY AS t(url, fetch_url, n)
      WHERE NOT EXISTS (SELECT 1 FROM crawl_frontier k WHERE k.job_id = $1 AND k.url = t.url)
      ORDER BY t.n
      LIMIT ${admitLimitSql('$6::int')}
     ON CONFLICT (job_id, url) DO NOTHING
     RETURNING url`,
    [ctx.jobId, depth, parentKeys[0] ?? null, keys, keys.map((k) => byKey.get(k)!), ctx.maxPages],
  );
  const fresh = new Set(inserted.rows.map((r) => r.url));
  if (fresh.size > 0)
    await ctx.enqueue(
      client,
      ctx.jobId,
      [...fresh].sort().map((url) => ({ url, depth })),
    );
  let added = fresh.size;
  const known = keys.filter((k) => !fresh.has(k));
  if (known.length > 0) {
    const lowered = await client.query<{ url: string; status: FrontierStatus }>(
      `UPDATE crawl_frontier SET depth = $2, updated_at = now()
        WHERE job_id = $1 AND url = ANY($3::text[]) AND depth > $2
        RETURNING url, status`,
      [ctx.jobId, depth, known],
    );
    for (const row of lowered.rows) {
      if (row.status !== 'done' && row.status !== 'unchanged') continue;
      const stored = await client.query<{ links: string[] }>('SELECT links FROM crawl_pages WHERE source_id = $1 AND url = $2', [ctx.sourceId, row.url]);
      added += await expandLinks(client, ctx, depth, [row.url], stored.rows[0]?.links ?? []);
    }
  }
  return added;
}

/** Counts links a page had beyond the per-page cap on its job, after the page committed (rare: not in its transaction). */
export async function addIgnoredLinks(pool: pg.Pool, jobId: string, count: number): Promise<void> {
  await pool.query('UPDATE crawl_jobs SET links_ignored = links_ignored + $2 WHERE id = $1', [jobId, count]);
}

/** Marks a claimed page failed with an unexpected error; false when the claim is no longer there to mark. */
export async function recordPageError(pool: pg.Pool, jobId: string, token: string, error: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE crawl_frontier SET status = 'failed', last_error = $3, updated_at = now()
      WHERE job_id = $1 AND claim_token = $2 AND status = 'fetching'`,
    [jobId, token, error.slice(0, 2000)],
  );
  return (rowCount ?? 0) > 0;
}

/** Whether the crawl job no longer exists (deleted with its source). */
export async function crawlJobGone(pool: pg.Pool, jobId: string): Promise<boolean> {
  const { rowCount } = await pool.query('SELECT 1 FROM crawl_jobs WHERE id = $1', [jobId]);
  return rowCount === 0;
}

/**
 * Gives a claimed page back (worker stopping, job cancelled, unexpected error). Returns what was released so
 * the caller can queue it again when the job is still running.
 */
export async function releaseClaim(client: pg.ClientBase | pg.Pool, jobId: string, token: string, error?: string): Promise<Array<{ url: string; depth: number }>> {
  const { rows } = await client.query<{ url: string; depth: number }>(
    `UPDATE crawl_frontier SET status = 'pending', worker_id = NULL, claim_token = NULL, updated_at = now(),
       last_error = coalesce($3, last_error)
      WHERE job_id = $1 AND claim_token = $2 AND status = 'fetching'
      RETURNING url, depth`,
    [jobId, token, error ?? null],
  );
  return rows;
}

/** Claims held by workers that are gone go back to pending (their sessions closed when they died). */
export async function sweepDeadClaims(client: pg.ClientBase | pg.Pool, jobId: string): Promise<Array<{ url: string; depth: number }>> {
  const { rows } = await client.query<{ url: string; depth: number }>(
    `UPDATE crawl_frontier SET status = 'pending', worker_id = NULL, claim_token = NULL, updated_at = now()
      WHERE job_id = $1 AND status = 'fetching' AND NOT crawl_worker_alive(worker_id)
      RETURNING url, depth`,
    [jobId],
  );
  return rows;
}

export async function pendingPages(client: pg.ClientBase | pg.Pool, jobId: string): Promise<Array<{ url: string; depth: number }>> {
  const { rows } = await client.query<{ url: string; depth: number }>(`SELECT url, depth FROM crawl_frontier WHERE job_id = $1 AND status = 'pending' ORDER BY depth, url`, [jobId]);
  return rows;
}

export interface FrontierCounters {
  found: number;
  crawled: number;
  unchanged: number;
  skipped: number;
  failed: number;
  pending: number;
  fetching: number;
  snippets: number;
  /** Done and unchanged pages by the route their document took. */
  routeHtml: number;
  routeMarkdownTwin: number;
  routeLlmsFull: number;
}

/** The job's pages_by_route, as the API shows it: every route, zero when none took it. */
export function routesOf(c: Pick<FrontierCounters, 'routeHtml' | 'routeMarkdownTwin' | 'routeLlmsFull'>): { html: number; markdown_twin: number; llms_full: number } {
  return { html: c.routeHtml, markdown_twin: c.routeMarkdownTwin, llms_full: c.routeLlmsFull };
}

const COUNTERS_SQL = `SELECT count(*)::int AS found,
    count(*) FILTER (WHERE status = 'done')::int AS crawled,
    count(*) FILTER (WHERE status = 'unchanged')::int AS unchanged,
    count(*) FILTER (WHERE status = 'skipped')::int AS skipped,
    count(*) FILTER (WHERE status = 'failed')::int AS failed,
    count(*) FILTER (WHERE status = 'pending')::int AS pending,
    count(*) FILTER (WHERE status = 'fetching')::int AS fetching,
    coalesce(sum(snippets), 0)::int AS snippets,
    count(*) FILTER (WHERE status IN ('done', 'unchanged') AND route = 'html')::int AS "routeHtml",
    count(*) FILTER (WHERE status IN ('done', 'unchanged') AND route = 'markdown_twin')::int AS "routeMarkdownTwin",
    count(*) FILTER (WHERE status IN ('done', 'unchanged') AND route = 'llms_full')::int AS "routeLlmsFull"
  FROM crawl_frontier WHERE job_id = $1`;

export async function frontierCounters(client: pg.ClientBase | pg.Pool, jobId: string): Promise<FrontierCounters> {
  const { rows } = await client.query<FrontierCounters>(COUNTERS_SQL, [jobId]);
  return rows[0]!;
}

/**
 * Refreshes the planner's statistics of the frontier. Its statements look a job's rows up by key (a page's links,
 * its claim); while the statistics still count the job as a handful of rows, as they do until autovacuum
 * analyses the table (a minute or more into a crawl, and never on a large table a new crawl changes by less than
 * a tenth), PostgreSQL reads every row of the job instead, so the update of a page's known links grows with the
 * job where it would be a few index lookups. ANALYZE only samples the table, and a crawl runs it a handful of
 * times (controller.ts). A role that does not own the table gets a
 * warning from the server, not an error.
 */
export async function analyzeFrontier(client: pg.ClientBase | pg.Pool): Promise<void> {
  await client.query('ANALYZE crawl_frontier');
}

/** The most recently claimed page, shown as the job's current URL. */
export async function currentUrl(client: pg.ClientBase | pg.Pool, jobId: string): Promise<string | null> {
  const { rows } = await client.query<{ url: string }>(`SELECT coalesce(fetch_url, url) AS url FROM crawl_frontier WHERE job_id = $1 AND status = 'fetching' ORDER BY updated_at DESC LIMIT 1`, [
    jobId,
  ]);
  return rows[0]?.url ?? null;
}

/** Whether any page of the job is pending or being fetched. Cheap (index on job_id, status): runs after every page. */
export async function hasOpenPages(client: pg.ClientBase | pg.Pool, jobId: string): Promise<boolean> {
  const open = await client.query(`SELECT 1 FROM crawl_frontier WHERE job_id = $1 AND status IN ('pending', 'fetching') LIMIT 1`, [jobId]);
  return (open.rowCount ?? 0) > 0;
}

/**
 * Ends a running job when nothing is pending or being fetched. Safe to call from any worker at any time:
 * the status condition lets exactly one caller win. A job that stored or confirmed no page at all fails,
 * with the first start URL's error, so `crawl start --wait` in CI does not pass on an empty index. Reads
 * every frontier row of the job: callers check hasOpenPages first. A failed job's empty source goes with it
 * (removeEmptySource).
 */
export async function finishIfDone(pool: pg.Pool, jobId: string): Promise<{ status: string; sourceId: string } | null> {
  // One transaction: whoever sees the job failed also sees its empty source gone.
  return withTransaction(pool, (client) => finishJobRow(client, jobId));
}

async function finishJobRow(client: pg.ClientBase, jobId: string): Promise<{ status: string; sourceId: string } | null> {
  const { rows } = await client.query<{ status: string; source_id: string }>(
    `WITH c AS (${COUNTERS_SQL}),
          first_error AS (
            SELECT coalesce(last_error, skip_reason) AS error FROM crawl_frontier
             WHERE job_id = $1 AND depth = 0 AND status IN ('failed', 'skipped') ORDER BY updated_at LIMIT 1)
     UPDATE crawl_jobs j SET
       status = CASE WHEN c.crawled + c.unchanged = 0 THEN 'failed'
                     WHEN j.llm_enhance AND EXISTS (SELECT 1 FROM llm_pages_pending(j.id)) THEN 'enhancing' ELSE 'completed' END,
       error = CASE WHEN c.crawled + c.unchanged = 0
                    THEN 'No page was crawled: ' || coalesce((SELECT error FROM first_error), 'every page failed or was skipped')
                    ELSE NULL END,
       pages_found = c.found, pages_crawled = c.crawled, pages_skipped = c.unchanged + c.skipped, pages_failed = c.failed,
       snippets_stored = c.snippets, current_url = NULL, eta_seconds = NULL, page_cap_reached = c.found >= j.max_pages,
       pages_by_route = jsonb_build_object('html', c."routeHtml", 'markdown_twin', c."routeMarkdownTwin", 'llms_full', c."routeLlmsFull"),
       pages_per_second = (c.crawled + c.unchanged + c.skipped + c.failed) / greatest(0.001, extract(epoch FROM now() - coalesce(j.started_at, j.created_at))),
       completed_at = CASE WHEN j.llm_enhance AND c.crawled + c.unchanged > 0 AND EXISTS (SELECT 1 FROM llm_pages_pending(j.id)) THEN NULL ELSE now() END,
       heartbeat_at = now(), controller_worker_id = NULL, updated_at = now()
     FROM c
     WHERE j.id = $1 AND j.status = 'running' AND c.pending = 0 AND c.fetching = 0
     RETURNING j.status, j.source_id`,
    [jobId],
  );
  const r = rows[0];
  if (!r) return null;
  if (r.status === 'failed' && (await removeEmptySource(client, r.source_id, jobId))) return { status: r.status, sourceId: r.source_id };
  await client.query('UPDATE sources SET last_crawled_at = now(), updated_at = now() WHERE id = $1', [r.source_id]);
  return { status: r.status, sourceId: r.source_id };
}

/**
 * Removes the source a failed job leaves behind when the job was its only one and it holds no page: an empty
 * library would otherwise be listed, and chosen, among real ones. The job stays (its source_id becomes NULL),
 * so its error and frontier still say what went wrong. Returns whether the source was removed.
 */
export async function removeEmptySource(client: pg.ClientBase | pg.Pool, sourceId: string, jobId: string): Promise<boolean> {
  const { rowCount } = await client.query(
    `DELETE FROM sources s WHERE s.id = $1 AND s.kind = 'crawl'
        AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.source_id = s.id)
        AND NOT EXISTS (SELECT 1 FROM crawl_jobs j WHERE j.source_id = s.id AND j.id <> $2)
        AND NOT EXISTS (SELECT 1 FROM upload_jobs u WHERE u.source_id = s.id)`,
    [sourceId, jobId],
  );
  return (rowCount ?? 0) > 0;
}
