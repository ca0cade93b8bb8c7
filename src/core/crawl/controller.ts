import type pg from 'pg';
import type { PageFetcher } from './fetch.js';
import { admitLimitSql, analyzeFrontier, currentUrl, finishIfDone, frontierCounters, hasOpenPages, pendingPages, sweepDeadClaims } from './frontier.js';
import type { JobInfo } from './page.js';
import { confirmHostRequest, waitForHostSlot } from './politeness.js';
import { etaSeconds, processed, publishCompletion, publishProgress, RateWindow, writeProgress } from './progress.js';
import type { Enqueue } from './queue.js';
import type { RobotsStore } from './robots-store.js';
import { discoverLlmsFiles } from './llms-discovery.js';
import { parseSitemap } from './sitemap.js';
import { runBeforeJobCompletes } from '../pipeline/stages.js';
import type { PostCommitStage } from '../pipeline/stages.js';
import { publishLlmProgress } from '../llm/job-stage.js';
import { cleanUrl, hostKey, normalizeUrl } from './url.js';

/**
 * The job-level controller. Exactly one live worker controls a job (crawl_adopt_job hands a job to a worker
 * when it is queued or its controller's session is gone). It starts the job, seeds the page queue from the
 * frontier (so start, resume and adoption after a crash are the same path), seeds from the site's llms.txt
 * or llms-full.txt (llms-discovery.ts, prefer_markdown auto) and optionally from sitemaps,
 * and then ticks: heartbeat, progress and ETA, crawl_progress events, re-queueing pages whose worker died,
 * and completing the job when the frontier is exhausted. Page workers may complete it first; the status
 * condition in finishIfDone lets only one of them win.
 */

export interface ControllerContext {
  pool: pg.Pool;
  workerId: string;
  enqueue: Enqueue;
  fetcher: PageFetcher;
  robots: RobotsStore;
  delaySeconds: number;
  tickMs: number;
  /** The worker's post-commit stages: their completion hooks run before the job reads completed. */
  stages: readonly PostCommitStage[];
  /** Waits one tick, or less when the job's state changes elsewhere (finished by a page, cancelled). */
  waitTick(jobId: string, signal: AbortSignal): Promise<void>;
  jobInfo(jobId: string): Promise<JobInfo | null>;
  onError(error: Error): void;
}

/**
 * Completes the job once no page is open (or, with LLM enhancement on and pages left for the model, moves it to
 * enhancing: the LLM stage completes it, llm/job-stage.ts), and announces it. The stages' completion hooks run
 * first, while the job still reads as running (index upkeep settles the search indexes): whoever learns that it
 * completed, from the event or from polling its status (`crawl start --wait && docdex search`), finds every word
 * of its pages counted and merged. Returns the final status, or null when pages are still open or another
 * caller completed the job.
 */
export async function completeIfDone(pool: pg.Pool, jobId: string, stages: readonly PostCommitStage[]): Promise<{ status: string; sourceId: string } | null> {
  if (await hasOpenPages(pool, jobId)) return null;
  await runBeforeJobCompletes(stages, pool);
  const finished = await finishIfDone(pool, jobId);
  // A job whose pages still wait for the model is not complete yet: its followers hear that it is enhancing.
  if (finished?.status === 'enhancing') await publishLlmProgress(pool, 'crawl', jobId);
  else if (finished) await publishCompletion(pool, jobId);
  return finished;
}

/** With no page settled for this long and nothing in flight, pending pages are queued again (lost queue jobs). */
const STUCK_MS = 30_000;
// The frontier's statistics are refreshed when the job has found this many pages, and again each time it has
// found four times as many as at the last refresh (analyzeFrontier): a handful of times even for a huge site.
const ANALYZE_FROM_PAGES = 1000;
const ANALYZE_GROWTH = 4;
const MAX_SITEMAPS = 50;

async function startJob(pool: pg.Pool, jobId: string, workerId: string): Promise<{ firstRun: boolean; useSitemap: boolean } | null> {
  const { rows } = await pool.query<{ first_run: boolean; use_sitemap: boolean }>(
    `WITH before AS (SELECT started_at FROM crawl_jobs WHERE id = $1)
     UPDATE crawl_jobs SET status = 'running', started_at = coalesce(started_at, now()), heartbeat_at = now(), updated_at = now()
      WHERE id = $1 AND controller_worker_id = $2 AND status IN ('queued', 'running')
      RETURNING (SELECT started_at IS NULL FROM before) AS first_run, use_sitemap`,
    [jobId, workerId],
  );
  const r = rows[0];
  return r ? { firstRun: r.first_run, useSitemap: r.use_sitemap } : null;
}

async function stillControlling(pool: pg.Pool, jobId: string, workerId: string): Promise<boolean> {
  const { rows } = await pool.query<{ ok: boolean }>(`SELECT status = 'running' AND controller_worker_id = $2 AS ok FROM crawl_jobs WHERE id = $1`, [jobId, workerId]);
  return rows[0]?.ok ?? false;
}

/** Gives the job up so another worker adopts it at once (this worker is stopping). */
export async function releaseControl(pool: pg.Pool, jobId: string, workerId: string): Promise<void> {
  await pool.query('UPDATE crawl_jobs SET controller_worker_id = NULL WHERE id = $1 AND controller_worker_id = $2', [jobId, workerId]);
}

function startOrigins(job: JobInfo): string[] {
  return [...new Set([...job.startKeys].map((u) => new URL(u).origin))];
}

/** Sitemaps are read from the crawl's own origins (or those its scope admits), never from elsewhere. */
function sitemapInScope(job: JobInfo, raw: string): boolean {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  return startOrigins(job).includes(url.origin) || job.scope.allowsOrigin(url);
}

async function seedFromSitemaps(ctx: ControllerContext, job: JobInfo, signal: AbortSignal): Promise<number> {
  if (job.maxDepth < 1) return 0;
  const queue: string[] = [];
  for (const origin of startOrigins(job)) {
    const robots = await ctx.robots.get(job.id, origin, signal, job.allowLoopback).catch(() => null);
    // A sitemap named on another host (or port) is not the site's own list: it is not fetched.
    const listed = (robots?.sitemaps ?? []).filter((u) => sitemapInScope(job, u));
    queue.push(...(listed.length > 0 ? listed : [`${origin}/sitemap.xml`]));
  }
  const seen = new Set<string>();
  const pages = new Map<string, string>();
  while (queue.length > 0 && seen.size < MAX_SITEMAPS) {
    const url = queue.shift()!;
    if (seen.has(url) || !sitemapInScope(job, url)) continue;
    seen.add(url);
    const result = await ctx.fetcher.fetch(url, {
      accept: 'any',
      signal,
      allowLoopback: job.allowLoopback,
      // A sitemap index pointing off the crawl's hosts is not followed, nor is a redirect there.
      allowRedirect: (u) => job.scope.allowsOrigin(u) || startOrigins(job).includes(u.origin),
      beforeRequest: (u, s) => waitForHostSlot(ctx.pool, hostKey(u), ctx.delaySeconds, s),
      afterSend: (u) => confirmHostRequest(ctx.pool, hostKey(u), ctx.delaySeconds),
    });
    if (result.kind !== 'ok') continue;
    let parsed;
    try {
      parsed = parseSitemap(result.body);
    } catch {
      continue;
    }
    queue.push(...parsed.sitemaps);
    for (const loc of parsed.pages) {
      const fetchUrl = cleanUrl(loc);
      const key = fetchUrl ? normalizeUrl(fetchUrl) : null;
      if (!fetchUrl || !key || pages.has(key)) continue;
      if (job.startKeys.has(key) || job.scope.allows(new URL(fetchUrl))) pages.set(key, fetchUrl);
    }
  }
  if (pages.size === 0) return 0;
  const keys = [...pages.keys()].sort();
  // Sitemap pages count as one level below the start URLs: they are the site's own list of its pages.
  // A sitemap may list far more pages than the job may take: the first ones in key order are admitted.
  const { rowCount } = await ctx.pool.query(
    `INSERT INTO crawl_frontier (job_id, url, fetch_url, depth, discovered_from)
     SELECT $1, t.url, t.fetch_url, 1, 'sitemap' FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS t(url, fetch_url, n)
      WHERE NOT EXISTS (SELECT 1 FROM crawl_frontier k WHERE k.job_id = $1 AND k.url = t.url)
      ORDER BY t.n
      LIMIT ${admitLimitSql('$4::int')}
     ON CONFLICT DO NOTHING`,
    [job.id, keys, keys.map((k) => pages.get(k)!), job.maxPages],
  );
  return rowCount ?? 0;
}

/**
 * The first run's seeds beyond the start URLs: the site's llms-full.txt or llms.txt first (the pages
 * llms-full.txt covers are then read from it, never fetched from a sitemap's list), then its sitemaps. A
 * failure of either is reported and the crawl goes on from what it has.
 */
async function seedJob(ctx: ControllerContext, job: JobInfo, useSitemap: boolean, signal: AbortSignal): Promise<'seeded' | 'stopped'> {
  const seeds = [() => discoverLlmsFiles(ctx, job, signal), ...(useSitemap ? [() => seedFromSitemaps(ctx, job, signal)] : [])];
  for (const seed of seeds) {
    try {
      await seed();
    } catch (error) {
      if (signal.aborted) return 'stopped';
      ctx.onError(error as Error);
    }
  }
  return 'seeded';
}

/** Resolves once `promise` settles or `signal` aborts, whichever comes first. */
function settledOrAborted(promise: Promise<unknown>, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const done = () => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    promise.then(done, done);
  });
}

export async function runController(ctx: ControllerContext, jobId: string, signal: AbortSignal): Promise<'finished' | 'lost' | 'stopped'> {
  const started = await startJob(ctx.pool, jobId, ctx.workerId);
  if (!started) return 'lost';
  const job = await ctx.jobInfo(jobId);
  if (!job) return 'lost';
  // The first page of each start origin must read robots.txt before its own request. Asking now, while dead
  // claims are swept and sitemaps read, takes that request (and the politeness slot it waits for) off the first
  // page's path. No signal: a page may be waiting on this answer after the controller has stopped.
  const robotsAsked = Promise.all(startOrigins(job).map((origin) => ctx.robots.get(job.id, origin, undefined, job.allowLoopback).catch(() => undefined)));
  // Claims of workers that died while nobody controlled the job become pending and are queued below.
  await sweepDeadClaims(ctx.pool, jobId);
  if (started.firstRun && (await seedJob(ctx, job, started.useSitemap, signal)) === 'stopped') return 'stopped';
  // Pages are queued once the answers are stored (crawl_robots): a start page claimed by a worker in another
  // process before then found no stored answer and requested robots.txt a second time.
  await settledOrAborted(robotsAsked, signal);
  if (signal.aborted) return 'stopped';
  await ctx.enqueue(ctx.pool, jobId, await pendingPages(ctx.pool, jobId));

  const rate = new RateWindow();
  let lastDone = -1;
  let lastChange = Date.now();
  let analyzedAt = 0;
  for (;;) {
    if (await completeIfDone(ctx.pool, jobId, ctx.stages)) return 'finished';
    if (!(await stillControlling(ctx.pool, jobId, ctx.workerId))) return 'lost';
    const dead = await sweepDeadClaims(ctx.pool, jobId);
    if (dead.length > 0) await ctx.enqueue(ctx.pool, jobId, dead);
    const c = await frontierCounters(ctx.pool, jobId);
    if (c.found >= Math.max(ANALYZE_FROM_PAGES, ANALYZE_GROWTH * analyzedAt)) {
      analyzedAt = c.found;
      await analyzeFrontier(ctx.pool).catch((error: unknown) => ctx.onError(error as Error));
    }
    const done = processed(c);
    const pagesPerSecond = rate.push(done);
    if (done !== lastDone) {
      lastDone = done;
      lastChange = Date.now();
    } else if (c.fetching === 0 && c.pending > 0 && Date.now() - lastChange > STUCK_MS) {
      await ctx.enqueue(ctx.pool, jobId, await pendingPages(ctx.pool, jobId));
      lastChange = Date.now();
    }
    const eta = etaSeconds(c, pagesPerSecond);
    const current = await currentUrl(ctx.pool, jobId);
    if (await writeProgress(ctx.pool, jobId, c, pagesPerSecond, eta, current)) {
      await publishProgress(ctx.pool, jobId, c, pagesPerSecond, eta, current);
    }
    try {
      await ctx.waitTick(jobId, signal);
    } catch {
      await releaseControl(ctx.pool, jobId, ctx.workerId);
      return 'stopped';
    }
  }
}
