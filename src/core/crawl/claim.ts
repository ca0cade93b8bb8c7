import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { RenderMode } from '../crawl-request.js';
import { withTransaction } from '../db/transaction.js';
import { fillSourceDescription } from '../sources/upsert.js';
import type { InTransactionStep } from '../store/pages.js';
import { addIgnoredLinks, claimAlias, claimPage, crawlJobGone, expandLinks, forgetFetch, previousFetch, recordPageError, releaseClaim, settleRows } from './frontier.js';
import type { ExpandContext, FetchRecord, PreviousFetch, RouteHints, SettleRow } from './frontier.js';
import type { Enqueue, PageJobData } from './queue.js';
import type { Scope } from './scope.js';
import { sleep } from './sleep.js';

/**
 * A page's claim on the frontier, the crawler's one handle on it while the page is processed: every frontier
 * read and write of the page goes through it, fenced by its token, so a page is stored once even when a
 * worker presumed dead comes back. It also holds the page's keys: the URL it was queued under and the ones it
 * answers for as well (where a redirect ended, its rel=canonical).
 */

export interface JobInfo {
  id: string;
  sourceId: string;
  maxDepth: number;
  maxConcurrent: number;
  maxPages: number;
  scope: Scope;
  startKeys: Set<string>;
  /** The start URLs as the request gave them (the keys lose a directory's trailing slash). */
  startUrls: string[];
  firstStartKey: string;
  /** The outbound policy of the job: only CLI- and TUI-started crawls may reach loopback. */
  allowLoopback: boolean;
  /** auto: the page may be read from llms-full.txt or a markdown twin (page-route.ts); never: HTML only. */
  preferMarkdown: 'auto' | 'never';
  /** When pages are rendered in headless Chromium (core/render/). */
  render: RenderMode;
}

export interface ClaimContext {
  pool: pg.Pool;
  workerId: string;
  enqueue: Enqueue;
  /** How long a throttled page waits before asking for a slot again. */
  throttleWaitMs: number;
}

/** What settling a page writes besides its outcome rows. */
export interface SettleExtra {
  record?: { keys: string[]; value: FetchRecord };
  links?: string[];
  forget?: string;
}

const RETRY_TX_CODES = new Set(['40P01', '40001']);

/** Runs a transaction, retrying deadlocks (two pages linking each other, committing at once) a few times. */
export async function retryTransaction<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (attempt >= 4 || !RETRY_TX_CODES.has((error as { code?: string }).code ?? '')) throw error;
      await sleep(10 + Math.random() * 40 * (attempt + 1));
    }
  }
}

/**
 * Claims the queued page, waiting while the job's concurrency cap throttles it. 'released' when the worker
 * stops first (the page is queued again unless the job was cancelled), 'not-claimed' when it is not ours to
 * process (finished, busy elsewhere, job not running).
 */
export async function takeClaim(ctx: ClaimContext, job: JobInfo, data: PageJobData, signal: AbortSignal, jobCancelled: () => boolean): Promise<PageClaim | 'released' | 'not-claimed'> {
  const token = randomUUID();
  for (;;) {
    if (signal.aborted) {
      // This job came off the queue but its page was never claimed: put it back unless the job was cancelled.
      if (!jobCancelled()) await ctx.enqueue(ctx.pool, job.id, [{ url: data.url, depth: 1 }]);
      return 'released';
    }
    const claim = await claimPage(ctx.pool, job.id, job.sourceId, data.url, ctx.workerId, token);
    if (claim.outcome === 'claimed') {
      return new PageClaim(ctx, job, data.url, token, claim.depth ?? 0, claim.fetchUrl ?? data.url, claim.previous, claim.hints);
    }
    if (claim.outcome !== 'throttled') return 'not-claimed';
    await sleep(ctx.throttleWaitMs * (0.5 + Math.random()), signal).catch(() => undefined);
  }
}

export class PageClaim {
  /** Every key the page answers for: the queued one first, then its aliases. */
  readonly keys: string[];
  /** The key the page's document is stored under: the last alias taken, else the queued key. */
  docKey: string;
  /** Why the keys other than docKey are skipped (they are aliases of it). */
  aliasReason = '';

  constructor(
    private readonly ctx: ClaimContext,
    readonly job: JobInfo,
    readonly key: string,
    readonly token: string,
    readonly depth: number,
    readonly fetchUrl: string,
    /** What the last crawl of the source saw at the queued key. */
    readonly previous: PreviousFetch | null,
    /** How the document may be read other than as HTML (an llms-full.txt part, the site's `.md` twins). */
    readonly hints: RouteHints,
  ) {
    this.keys = [key];
    this.docKey = key;
  }

  get isStart(): boolean {
    return this.job.startKeys.has(this.key);
  }

  /** Takes `url` as the page's document key; false when another page owns it (this page is then a duplicate). */
  async alias(url: string, fetchUrl: string, reason: string): Promise<boolean> {
    const { job, ctx } = this;
    const owned = await claimAlias(ctx.pool, { jobId: job.id, url, fetchUrl, depth: this.depth, workerId: ctx.workerId, token: this.token, from: this.key });
    if (!owned) return false;
    this.keys.push(url);
    this.docKey = url;
    this.aliasReason = reason;
    return true;
  }

  /** What the last crawl saw at the document key (the queued key's when the page has no alias, or none known). */
  async previousOfDocument(): Promise<PreviousFetch | null> {
    if (this.docKey === this.key) return this.previous;
    return (await previousFetch(this.ctx.pool, this.job.sourceId, this.docKey)) ?? this.previous;
  }

  /** Rows for the keys that are aliases of the document key: skipped, with the reason. */
  aliasRows(httpStatus: number): SettleRow[] {
    return this.keys.filter((k) => k !== this.docKey).map((k) => ({ url: k, status: 'skipped' as const, httpStatus, skipReason: this.aliasReason }));
  }

  /** Every key with the same outcome. */
  async settleAll(row: Omit<SettleRow, 'url'>): Promise<void> {
    await this.settle(this.keys.map((url) => ({ ...row, url })));
  }

  /**
   * Settles the claim without storing a document: outcome rows, optionally the fetch record and the links of
   * an unchanged page. One statement when there is nothing more to write, else one transaction.
   */
  async settle(rows: SettleRow[], extra: SettleExtra = {}): Promise<void> {
    const { job, ctx, token } = this;
    const record = extra.record ? { sourceId: job.sourceId, urls: extra.record.keys, value: extra.record.value } : undefined;
    if (!extra.forget && !(extra.links && extra.links.length > 0)) {
      await settleRows(ctx.pool, job.id, token, rows, record);
      return;
    }
    await retryTransaction(() =>
      withTransaction(ctx.pool, async (client) => {
        const depth = await settleRows(client, job.id, token, rows, record);
        if (extra.forget) await forgetFetch(client, job.sourceId, extra.forget);
        if (extra.links)
          await expandLinks(
            client,
            this.expandContext(),
            depth,
            rows.map((r) => r.url),
            extra.links,
          );
      }),
    );
  }

  /**
   * The frontier's side of storing the page, as a step of the page's own transaction: the new links, the
   * outcome rows with the fetch record, and the source's description from its first start page. A crash then
   * leaves either all of them with the page or none, and the page is fetched again.
   */
  withStoredPage(page: { rows: SettleRow[]; done: SettleRow; record: FetchRecord; links: string[]; description: string }): InTransactionStep {
    const { job, token, keys, depth } = this;
    return async (client, _write, newSnippetIds) => {
      // Links first, at the depth the page was claimed at, then the page's own row: a page lowering this page's
      // depth (its UPDATE waits for our row) then holds nothing we still wait for.
      await expandLinks(client, this.expandContext(), depth, keys, page.links);
      const d = await settleRows(client, job.id, token, [...page.rows, { ...page.done, snippets: newSnippetIds.length }], { sourceId: job.sourceId, urls: keys, value: page.record });
      // Found at a shallower depth while this page was being fetched: its links go one level further now.
      if (d < depth) await expandLinks(client, this.expandContext(), d, keys, page.links);
      if (keys.includes(job.firstStartKey)) await fillSourceDescription(client, job.sourceId, page.description);
    };
  }

  /** Links the page had beyond the per-page cap, counted on the job after the page committed. */
  async countIgnoredLinks(count: number): Promise<void> {
    if (count > 0) await addIgnoredLinks(this.ctx.pool, this.job.id, count);
  }

  /** Gives the page back to pending (worker stopping, job cancelled); queued again unless the job was cancelled. */
  async release(jobCancelled: () => boolean): Promise<void> {
    const released = await releaseClaim(this.ctx.pool, this.job.id, this.token);
    if (!jobCancelled() && released.length > 0) await this.ctx.enqueue(this.ctx.pool, this.job.id, released);
  }

  /**
   * Records an unexpected error on the page so the job can still finish. 'lost' when the crawl was deleted with
   * its source while the page was in flight: there is nothing left to record the page in, and nothing went wrong.
   */
  async recordError(error: Error): Promise<'recorded' | 'lost'> {
    const recorded = await recordPageError(this.ctx.pool, this.job.id, this.token, `internal error: ${error.message}`).catch(() => true);
    if (!recorded && (await crawlJobGone(this.ctx.pool, this.job.id).catch(() => false))) return 'lost';
    return 'recorded';
  }

  private expandContext(): ExpandContext {
    const { job } = this;
    return { jobId: job.id, sourceId: job.sourceId, maxDepth: job.maxDepth, maxPages: job.maxPages, scope: job.scope, enqueue: this.ctx.enqueue };
  }
}
