import { createHash, randomUUID } from 'node:crypto';
import type pg from 'pg';
import { extractDocument } from '../extract/index.js';
import type { ExtractInput, ExtractResult } from '../extract/index.js';
import { ExtractionError } from '../extract-pool/pool.js';
import { fillSourceDescription } from '../sources/upsert.js';
import { removePage, storePage } from '../store/pages.js';
import type { InTransactionStep, PageWrite } from '../store/pages.js';
import { inTransactionSteps, runPostCommitStages } from '../pipeline/stages.js';
import type { PostCommitStage, StageServices } from '../pipeline/stages.js';
import { giveWay } from './courtesy.js';
import type { ForegroundBusy } from './courtesy.js';
import type { FetchOutcome, PageFetcher } from './fetch.js';
import {
  addIgnoredLinks,
  ClaimLostError,
  claimAlias,
  claimPage,
  crawlJobGone,
  expandLinks,
  forgetFetch,
  previousFetch,
  recordPageError,
  releaseClaim,
  settleRows,
} from './frontier.js';
import type { ExpandContext, FetchRecord, PreviousFetch, SettleRow } from './frontier.js';
import { confirmHostRequest, waitForHostSlot } from './politeness.js';
import type { Enqueue, PageJobData } from './queue.js';
import type { RobotsStore } from './robots-store.js';
import { RobotsUnavailableError } from './robots-store.js';
import type { Scope } from './scope.js';
import { sleep } from './sleep.js';
import { cleanUrl, hostKey, normalizeUrl, sameOrigin } from './url.js';
import { withTransaction } from '../db/transaction.js';

/**
 * One page of a crawl, start to finish: claim it (the exact concurrency gate), check robots.txt, take the
 * host's politeness slot, fetch (conditionally when a previous crawl stored it), and then one of:
 * unchanged (304 or same MD5: no extraction, no rewrite, links from the last crawl), stored (extracted and
 * written with storePage, the frontier update and the new links in the SAME transaction), gone (404/410 on
 * a page the source had: removed with its snippets), skipped or failed. Every write is fenced by the claim
 * token, so a page is stored once even when a worker presumed dead comes back.
 */

export interface JobInfo {
  id: string;
  sourceId: string;
  maxDepth: number;
  maxConcurrent: number;
  maxPages: number;
  scope: Scope;
  startKeys: Set<string>;
  firstStartKey: string;
  /** The outbound policy of the job: only CLI- and TUI-started crawls may reach loopback. */
  allowLoopback: boolean;
}

export interface PageContext {
  pool: pg.Pool;
  workerId: string;
  fetcher: PageFetcher;
  robots: RobotsStore;
  enqueue: Enqueue;
  delaySeconds: number;
  /** How long a throttled page waits before asking for a slot again. */
  throttleWaitMs: number;
  /** What follows each committed page (core/pipeline/stages.ts), and what they are lent to do it. */
  stages: readonly PostCommitStage[];
  services: StageServices;
  /** Foreground work of this process the crawl gives way to (see courtesy.ts). */
  giveWayTo?: ForegroundBusy;
  /** Extracts a fetched page (the crawl worker's thread pool); in this thread when absent. Rejects with ExtractionError. */
  extract?: (input: ExtractInput) => Promise<ExtractResult>;
}

/**
 * Links taken from one page. A documentation page rarely has more than a few hundred (an API index may); a
 * generated page with millions would otherwise fill the frontier, and the page's transaction, on its own.
 */
export const MAX_LINKS_PER_PAGE = 1000;

const RETRY_TX_CODES = new Set(['40P01', '40001']);

/** Runs a transaction, retrying deadlocks (two pages linking each other, committing at once) a few times. */
async function retryTransaction<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (attempt >= 4 || !RETRY_TX_CODES.has((error as { code?: string }).code ?? '')) throw error;
      await sleep(10 + Math.random() * 40 * (attempt + 1));
    }
  }
}

async function inTransaction(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<void>): Promise<void> {
  await retryTransaction(() => withTransaction(pool, fn));
}

export type PageResult = 'stored' | 'unchanged' | 'skipped' | 'failed' | 'not-claimed' | 'released' | 'lost';

function expandContext(ctx: PageContext, job: JobInfo): ExpandContext {
  return { jobId: job.id, sourceId: job.sourceId, maxDepth: job.maxDepth, maxPages: job.maxPages, scope: job.scope, enqueue: ctx.enqueue };
}

/**
 * Settles the claim without storing a document: outcome rows, optionally the fetch record and the links of
 * an unchanged page. One statement when there is nothing more to write, else one transaction.
 */
async function settle(
  ctx: PageContext,
  job: JobInfo,
  token: string,
  rows: SettleRow[],
  extra: { record?: { keys: string[]; value: FetchRecord }; links?: string[]; forget?: string } = {},
): Promise<void> {
  const record = extra.record ? { sourceId: job.sourceId, urls: extra.record.keys, value: extra.record.value } : undefined;
  if (!extra.forget && !(extra.links && extra.links.length > 0)) {
    await settleRows(ctx.pool, job.id, token, rows, record);
    return;
  }
  await inTransaction(ctx.pool, async (client) => {
    const depth = await settleRows(client, job.id, token, rows, record);
    if (extra.forget) await forgetFetch(client, job.sourceId, extra.forget);
    if (extra.links) await expandLinks(client, expandContext(ctx, job), depth, rows.map((r) => r.url), extra.links);
  });
}

function md5(body: Buffer): string {
  return createHash('md5').update(body).digest('hex');
}

/**
 * Processes the page job. `signal` aborts on worker stop or job cancel; the claim then goes back to pending
 * (and back on the queue when only this worker is stopping). Returns what happened, for the caller's
 * bookkeeping; every failure of the page itself is recorded in the frontier, not thrown.
 */
export async function processPage(ctx: PageContext, job: JobInfo, data: PageJobData, signal: AbortSignal, jobCancelled: () => boolean): Promise<PageResult> {
  const token = randomUUID();
  let depth: number;
  let fetchUrl: string;
  let previous: PreviousFetch | null;
  for (;;) {
    if (signal.aborted) {
      // This job came off the queue but its page was never claimed: put it back unless the job was cancelled.
      if (!jobCancelled()) await ctx.enqueue(ctx.pool, job.id, [{ url: data.url, depth: 1 }]);
      return 'released';
    }
    const claim = await claimPage(ctx.pool, job.id, job.sourceId, data.url, ctx.workerId, token);
    if (claim.outcome === 'claimed') {
      depth = claim.depth ?? 0;
      fetchUrl = claim.fetchUrl ?? data.url;
      previous = claim.previous;
      break;
    }
    if (claim.outcome !== 'throttled') return 'not-claimed';
    await sleep(ctx.throttleWaitMs * (0.5 + Math.random()), signal).catch(() => undefined);
  }
  try {
    return await fetchAndStore(ctx, job, data.url, fetchUrl, depth, token, previous, signal);
  } catch (error) {
    if (error instanceof ClaimLostError) return 'lost';
    if (signal.aborted) {
      const released = await releaseClaim(ctx.pool, job.id, token);
      if (!jobCancelled() && released.length > 0) await ctx.enqueue(ctx.pool, job.id, released);
      return 'released';
    }
    // A bug or a database error: record it on the page so the job can still finish, then let the worker log it.
    const recorded = await recordPageError(ctx.pool, job.id, token, `internal error: ${(error as Error).message}`).catch(() => true);
    // Unless the crawl was deleted with its source while the page was in flight (its insert then fails on the
    // source's foreign key): there is nothing left to record the page in, and nothing went wrong.
    if (!recorded && (await crawlJobGone(ctx.pool, job.id).catch(() => false))) return 'lost';
    throw error;
  }
}

async function fetchAndStore(
  ctx: PageContext,
  job: JobInfo,
  key: string,
  fetchUrl: string,
  depth: number,
  token: string,
  prev: PreviousFetch | null,
  signal: AbortSignal,
): Promise<PageResult> {
  const target = new URL(fetchUrl);
  let robotsDelay: number;
  try {
    const robots = await ctx.robots.get(job.id, target.origin, signal, job.allowLoopback);
    if (!robots.allows(target)) {
      await settle(ctx, job, token, [{ url: key, status: 'skipped', skipReason: 'disallowed by robots.txt' }]);
      return 'skipped';
    }
    robotsDelay = robots.crawlDelaySeconds ?? 0;
  } catch (error) {
    if (!(error instanceof RobotsUnavailableError)) throw error;
    await settle(ctx, job, token, [{ url: key, status: 'failed', error: error.message }]);
    return 'failed';
  }
  const delay = Math.max(ctx.delaySeconds, robotsDelay);
  // Validators only make sense while the document they describe still exists.
  const validators = prev && prev.documentHash !== null ? { etag: prev.etag, lastModified: prev.lastModified } : {};
  const isStart = job.startKeys.has(key);
  const result = await ctx.fetcher.fetch(fetchUrl, {
    ...validators,
    signal,
    allowLoopback: job.allowLoopback,
    // A start URL may move (http to https, a docs subdomain); any other page must stay in scope.
    allowRedirect: (u) => isStart || job.scope.allows(u),
    beforeRequest: (u, s) => waitForHostSlot(ctx.pool, hostKey(u), u.origin === target.origin ? delay : ctx.delaySeconds, s),
    afterSend: (u) => confirmHostRequest(ctx.pool, hostKey(u), u.origin === target.origin ? delay : ctx.delaySeconds),
  });
  const workStarted = performance.now();
  const outcome = await handleOutcome(ctx, job, key, depth, token, prev, result);
  await giveWay(ctx.giveWayTo, performance.now() - workStarted, signal);
  return outcome;
}

async function handleOutcome(
  ctx: PageContext,
  job: JobInfo,
  key: string,
  depth: number,
  token: string,
  prev: PreviousFetch | null,
  result: FetchOutcome,
): Promise<PageResult> {
  switch (result.kind) {
    case 'error':
      await settle(ctx, job, token, [{ url: key, status: 'failed', error: result.message }]);
      return 'failed';
    case 'http_error': {
      const gone = result.status === 404 || result.status === 410;
      // A page the source had is gone: its document and the snippets only it showed go too.
      if (gone && prev?.documentUrl) await removePage(ctx.pool, job.sourceId, prev.documentUrl);
      await settle(ctx, job, token, [{ url: key, status: 'failed', httpStatus: result.status || null, error: result.message }], gone && prev ? { forget: key } : {});
      return 'failed';
    }
    case 'skipped':
      await settle(ctx, job, token, [{ url: key, status: 'skipped', httpStatus: result.status, skipReason: result.reason }]);
      return 'skipped';
    case 'not_modified': {
      if (!prev) {
        await settle(ctx, job, token, [{ url: key, status: 'failed', httpStatus: 304, error: 'HTTP 304 to a request without validators' }]);
        return 'failed';
      }
      await settle(
        ctx,
        job,
        token,
        [{ url: key, status: 'unchanged', httpStatus: 304, documentUrl: prev.documentUrl, contentHash: prev.documentHash, etag: result.etag, lastModified: result.lastModified }],
        {
          record: { keys: [key], value: { documentUrl: prev.documentUrl, contentHash: prev.documentHash, etag: result.etag, lastModified: result.lastModified, links: prev.links } },
          links: prev.links,
        },
      );
      return 'unchanged';
    }
    case 'ok':
      return storeOk(ctx, job, key, depth, token, prev, result);
  }
}

/** The page's extraction; null when it failed (over its time budget), after recording that on the page. */
async function extractOrFail(
  ctx: PageContext,
  job: JobInfo,
  token: string,
  keys: string[],
  result: Extract<FetchOutcome, { kind: 'ok' }>,
): Promise<ExtractResult | null> {
  const input: ExtractInput = { url: result.url, contentType: result.contentType, body: result.body };
  try {
    return ctx.extract ? await ctx.extract(input) : extractDocument(input);
  } catch (error) {
    if (!(error instanceof ExtractionError)) throw error;
    await settle(ctx, job, token, keys.map((k) => ({ url: k, status: 'failed' as const, httpStatus: result.status, error: error.message })));
    return null;
  }
}

async function storeOk(
  ctx: PageContext,
  job: JobInfo,
  key: string,
  depth: number,
  token: string,
  prev: PreviousFetch | null,
  result: Extract<FetchOutcome, { kind: 'ok' }>,
): Promise<PageResult> {
  const isStart = job.startKeys.has(key);
  const keys = [key];
  let docKey = key;
  const documentUrl = cleanUrl(result.url)!;
  let aliasReason = '';
  const finalKey = normalizeUrl(result.url)!;
  if (finalKey !== key) {
    if (!isStart && !job.scope.allows(new URL(result.url))) {
      await settle(ctx, job, token, [{ url: key, status: 'skipped', httpStatus: result.status, skipReason: `redirected out of scope to ${result.url}` }]);
      return 'skipped';
    }
    const owned = await claimAlias(ctx.pool, { jobId: job.id, url: finalKey, fetchUrl: documentUrl, depth, workerId: ctx.workerId, token, from: key });
    if (!owned) {
      await settle(ctx, job, token, [{ url: key, status: 'skipped', httpStatus: result.status, skipReason: `redirected to ${result.url}, crawled separately` }]);
      return 'skipped';
    }
    keys.push(finalKey);
    docKey = finalKey;
    aliasReason = `redirected to ${documentUrl}`;
  }
  const contentHash = md5(result.body);
  const before = docKey === key ? prev : ((await previousFetch(ctx.pool, job.sourceId, docKey)) ?? prev);
  const record = (links: string[], docUrl: string | null): FetchRecord => ({ documentUrl: docUrl, contentHash, etag: result.etag, lastModified: result.lastModified, links });
  const aliasRows = (reason: string): SettleRow[] =>
    keys.filter((k) => k !== docKey).map((k) => ({ url: k, status: 'skipped' as const, httpStatus: result.status, skipReason: reason }));

  if (before && before.documentHash === contentHash && before.documentUrl) {
    // Same bytes as the stored document: nothing to extract or rewrite; follow the links stored last time.
    await settle(
      ctx,
      job,
      token,
      [
        ...aliasRows(aliasReason),
        { url: docKey, status: 'unchanged', httpStatus: result.status, contentHash, etag: result.etag, lastModified: result.lastModified, documentUrl: before.documentUrl },
      ],
      { record: { keys, value: record(before.links, before.documentUrl) }, links: before.links },
    );
    return 'unchanged';
  }

  const extracted = await extractOrFail(ctx, job, token, keys, result);
  if (extracted === null) return 'failed';
  return storeExtracted(ctx, job, token, { key, depth, keys, docKey, documentUrl, aliasReason, contentHash, isStart }, result, extracted);
}

/** Where a fetched page stands before it is stored: the frontier keys it answers for and its document URL. */
interface FetchedDoc {
  key: string;
  depth: number;
  keys: string[];
  docKey: string;
  documentUrl: string;
  aliasReason: string;
  contentHash: string;
  isStart: boolean;
}

/** Stores an extracted page (after claiming its canonical URL) with its frontier rows and links, in one transaction. */
async function storeExtracted(
  ctx: PageContext,
  job: JobInfo,
  token: string,
  doc: FetchedDoc,
  result: Extract<FetchOutcome, { kind: 'ok' }>,
  extracted: ExtractResult,
): Promise<PageResult> {
  const { key, depth, keys, contentHash } = doc;
  let { docKey, documentUrl, aliasReason } = doc;
  const page = extracted.page;
  const canonical = page.canonicalUrl ? cleanUrl(page.canonicalUrl) : null;
  const canonicalKey = canonical ? normalizeUrl(canonical) : null;
  if (canonical && canonicalKey && !keys.includes(canonicalKey) && sameOrigin(canonical, result.url) && (doc.isStart || job.scope.allows(new URL(canonical)))) {
    const owned = await claimAlias(ctx.pool, { jobId: job.id, url: canonicalKey, fetchUrl: canonical, depth, workerId: ctx.workerId, token, from: key });
    if (!owned) {
      await settle(
        ctx,
        job,
        token,
        keys.map((k) => ({ url: k, status: 'skipped' as const, httpStatus: result.status, skipReason: `duplicate of canonical ${canonical}` })),
      );
      return 'skipped';
    }
    keys.push(canonicalKey);
    docKey = canonicalKey;
    documentUrl = canonical;
    aliasReason = `canonical is ${canonical}`;
  }
  const found = page.noFollow ? [] : [...new Set(page.links)];
  const links = found.slice(0, MAX_LINKS_PER_PAGE);
  const record: FetchRecord = { documentUrl, contentHash, etag: result.etag, lastModified: result.lastModified, links };
  const rows: SettleRow[] = keys
    .filter((k) => k !== docKey)
    .map((k) => ({ url: k, status: 'skipped' as const, httpStatus: result.status, skipReason: aliasReason }));
  const done: SettleRow = { url: docKey, status: 'done', httpStatus: result.status, contentHash, etag: result.etag, lastModified: result.lastModified, documentUrl };
  const write: PageWrite = {
    sourceId: job.sourceId,
    url: documentUrl,
    title: page.title,
    markdown: page.markdown,
    contentHash,
    etag: result.etag,
    lastModified: result.lastModified,
    job: { kind: 'crawl', id: job.id },
    snippets: extracted.snippets,
  };
  // The frontier update, the fetch record and the new links commit with the page: a crash leaves either all
  // of them or none, and the page is fetched again. storePage runs this step last before it commits.
  const settleWithPage: InTransactionStep = async (client, _write, newSnippetIds) => {
    // Links first, at the depth the page was claimed at, then the page's own row: a page lowering this page's
    // depth (its UPDATE waits for our row) then holds nothing we still wait for.
    await expandLinks(client, expandContext(ctx, job), depth, keys, links);
    const d = await settleRows(client, job.id, token, [...rows, { ...done, snippets: newSnippetIds.length }], { sourceId: job.sourceId, urls: keys, value: record });
    // Found at a shallower depth while this page was being fetched: its links go one level further now.
    if (d < depth) await expandLinks(client, expandContext(ctx, job), d, keys, links);
    if (keys.includes(job.firstStartKey)) await fillSourceDescription(client, job.sourceId, page.description);
  };
  const stored = await retryTransaction(() => storePage(ctx.pool, write, inTransactionSteps(ctx.stages, [settleWithPage])));
  if (found.length > links.length) await addIgnoredLinks(ctx.pool, job.id, found.length - links.length);
  await runPostCommitStages(ctx.stages, { job: write.job, sourceId: job.sourceId, title: write.title, stored }, ctx.services);
  return 'stored';
}
