import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { ExtractInput, ExtractResult } from '../extract/index.js';
import { extractInProcess } from '../extract-pool/in-process.js';
import { ExtractionError } from '../extract-pool/pool.js';
import { inTransactionSteps, runPostCommitStages } from '../pipeline/stages.js';
import type { PostCommitStage, StageServices } from '../pipeline/stages.js';
import { removePage, storePage } from '../store/pages.js';
import type { PageWrite } from '../store/pages.js';
import { retryTransaction, takeClaim } from './claim.js';
import type { JobInfo, PageClaim } from './claim.js';
import { giveWay } from './courtesy.js';
import type { ForegroundBusy } from './courtesy.js';
import type { FetchOutcome, PageFetcher } from './fetch.js';
import { ClaimLostError } from './frontier.js';
import type { FetchRecord, PageRoute, SettleRow } from './frontier.js';
import { fetchRouted } from './page-route.js';
import type { RoutedFetch } from './page-route.js';
import { renderWhenNeeded } from './render-step.js';
import type { PageRenderer } from './render-step.js';
import type { Enqueue, PageJobData } from './queue.js';
import type { RobotsStore } from './robots-store.js';
import { cleanUrl, normalizeUrl, sameOrigin } from './url.js';

export type { JobInfo } from './claim.js';

/**
 * One page of a crawl, top to bottom, each stage entered once: claim it on the frontier (the exact
 * concurrency gate), fetch it (robots.txt, the host's politeness slot, a conditional GET when a previous
 * crawl stored it; or read it from llms-full.txt or its markdown twin: page-route.ts), resolve which document
 * it is (a redirect or rel=canonical makes it an alias of another key; the same MD5 as the stored document
 * makes it unchanged), extract it, store it (the page, its snippets,
 * the frontier outcome and the new links in ONE transaction), then run the post-commit stages it was given.
 * A page may instead end unchanged (304 or same MD5: no extraction, no rewrite, links from the last crawl),
 * gone (404/410 on a page the source had: removed with its snippets), skipped or failed; every frontier write
 * goes through its claim (claim.ts), fenced by the claim's token.
 */

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
  /** The worker's headless browser for pages that render client-side (render-step.ts); none: pages are stored as fetched. */
  renderer?: PageRenderer;
}

/**
 * Links taken from one page. A documentation page rarely has more than a few hundred (an API index may); a
 * generated page with millions would otherwise fill the frontier, and the page's transaction, on its own.
 */
export const MAX_LINKS_PER_PAGE = 1000;

export type PageResult = 'stored' | 'unchanged' | 'skipped' | 'failed' | 'not-claimed' | 'released' | 'lost';

type Fetched = Extract<FetchOutcome, { kind: 'ok' }>;

/** A fetched page whose document key is settled and whose bytes are new: what is extracted and stored. */
interface NewDocument {
  documentUrl: string;
  contentHash: string;
  route: PageRoute;
}

/**
 * Processes the page job. `signal` aborts on worker stop or job cancel; the claim then goes back to pending
 * (and back on the queue when only this worker is stopping). Returns what happened, for the caller's
 * bookkeeping; every failure of the page itself is recorded in the frontier, not thrown.
 */
export async function processPage(ctx: PageContext, job: JobInfo, data: PageJobData, signal: AbortSignal, jobCancelled: () => boolean): Promise<PageResult> {
  const claim = await takeClaim(ctx, job, data, signal, jobCancelled);
  if (typeof claim === 'string') return claim;
  try {
    const fetched = await fetchRouted(ctx, claim, signal);
    if (typeof fetched === 'string') return fetched;
    const workStarted = performance.now();
    const result = await processFetched(ctx, claim, fetched, signal);
    await giveWay(ctx.giveWayTo, performance.now() - workStarted, signal);
    return result;
  } catch (error) {
    if (error instanceof ClaimLostError) return 'lost';
    if (signal.aborted) {
      await claim.release(jobCancelled);
      return 'released';
    }
    // A bug or a database error: recorded on the page so the job can still finish, then the worker logs it.
    if ((await claim.recordError(error as Error)) === 'lost') return 'lost';
    throw error;
  }
}

/** Everything after the fetch: settle a page that brought no document, else resolve, extract, render when needed, store, post-commit. */
async function processFetched(ctx: PageContext, claim: PageClaim, fetched: RoutedFetch, signal: AbortSignal): Promise<PageResult> {
  const { outcome, route } = fetched;
  if (outcome.kind !== 'ok') return settleWithoutDocument(ctx, claim, outcome, route);
  const doc = await resolveDocument(claim, outcome, route);
  if (typeof doc === 'string') return doc;
  const asFetched = await extractPage(ctx, claim, outcome);
  if (asFetched === null) return 'failed';
  // A markdown twin or an llms-full page is the document itself: only HTML may be a shell that needs a browser.
  const shown = route === 'html' ? await renderWhenNeeded(ctx, claim, { result: outcome, extracted: asFetched }, (r) => extractPage(ctx, claim, r), signal) : { result: outcome, extracted: asFetched };
  if (shown === null) return 'failed';
  const { result } = shown;
  const extracted = fetched.html ? await withHtmlLinks(ctx, shown.extracted, fetched.html) : shown.extracted;
  const canonical = await takeCanonical(claim, result, extracted, doc);
  if (typeof canonical === 'string') return canonical;
  return storeAndFollow(ctx, claim, result, extracted, canonical);
}

/** A fetch that brought no document: failed, gone, skipped, or not modified since the last crawl. */
async function settleWithoutDocument(ctx: PageContext, claim: PageClaim, result: Exclude<FetchOutcome, Fetched>, route: PageRoute): Promise<PageResult> {
  const { key, previous: prev } = claim;
  switch (result.kind) {
    case 'error':
      await claim.settle([{ url: key, status: 'failed', error: result.message }]);
      return 'failed';
    case 'http_error': {
      const gone = result.status === 404 || result.status === 410;
      // A page the source had is gone: its document and the snippets only it showed go too.
      if (gone && prev?.documentUrl) await removePage(ctx.pool, claim.job.sourceId, prev.documentUrl);
      await claim.settle([{ url: key, status: 'failed', httpStatus: result.status || null, error: result.message }], gone && prev ? { forget: key } : {});
      return 'failed';
    }
    case 'skipped':
      await claim.settle([{ url: key, status: 'skipped', httpStatus: result.status, skipReason: result.reason }]);
      return 'skipped';
    case 'not_modified': {
      if (!prev) {
        await claim.settle([{ url: key, status: 'failed', httpStatus: 304, error: 'HTTP 304 to a request without validators' }]);
        return 'failed';
      }
      const seen = { documentUrl: prev.documentUrl, contentHash: prev.documentHash, etag: result.etag, lastModified: result.lastModified };
      await claim.settle([{ url: key, status: 'unchanged', httpStatus: 304, route, ...seen }], { record: { keys: [key], value: { ...seen, links: prev.links } }, links: prev.links });
      return 'unchanged';
    }
  }
}

/**
 * Which document the fetched bytes are: where a redirect ended becomes the page's document key (skipped when
 * out of scope or crawled separately), and bytes with the stored document's MD5 end the page as unchanged,
 * following the links stored last time.
 */
async function resolveDocument(claim: PageClaim, result: Fetched, route: PageRoute): Promise<NewDocument | PageResult> {
  // A part of llms-full.txt is stored at its own URL as given (a heading-anchored one keeps its fragment).
  const documentUrl = route === 'llms_full' ? claim.fetchUrl : cleanUrl(result.url)!;
  const finalKey = route === 'llms_full' ? claim.key : normalizeUrl(result.url)!;
  if (finalKey !== claim.key) {
    const skip = (skipReason: string) => claim.settle([{ url: claim.key, status: 'skipped', httpStatus: result.status, skipReason }]);
    if (!claim.isStart && !claim.job.scope.allows(new URL(result.url))) {
      await skip(`redirected out of scope to ${result.url}`);
      return 'skipped';
    }
    if (!(await claim.alias(finalKey, documentUrl, `redirected to ${documentUrl}`))) {
      await skip(`redirected to ${result.url}, crawled separately`);
      return 'skipped';
    }
  }
  const contentHash = md5(result.body);
  const before = await claim.previousOfDocument();
  if (!before || before.documentHash !== contentHash || !before.documentUrl) return { documentUrl, contentHash, route };
  const seen = { contentHash, etag: result.etag, lastModified: result.lastModified, documentUrl: before.documentUrl };
  await claim.settle([...claim.aliasRows(result.status), { url: claim.docKey, status: 'unchanged', httpStatus: result.status, route, ...seen }], {
    record: { keys: claim.keys, value: { ...seen, links: before.links } },
    links: before.links,
  });
  return 'unchanged';
}

/** The page's extraction; null when it failed (over its time budget), after recording that on the page. */
async function extractPage(ctx: PageContext, claim: PageClaim, result: Fetched): Promise<ExtractResult | null> {
  const input: ExtractInput = { url: result.url, contentType: result.contentType, body: result.body };
  try {
    return await (ctx.extract ?? extractInProcess)(input);
  } catch (error) {
    if (!(error instanceof ExtractionError)) throw error;
    await claim.settleAll({ status: 'failed', httpStatus: result.status, error: error.message });
    return null;
  }
}

/**
 * A markdown twin's extraction with what only its HTML page has: the links (a twin usually lacks the site's
 * navigation, which is how the crawl finds the other pages), rel=canonical and nofollow. An HTML page that
 * fails to extract leaves the twin's own.
 */
async function withHtmlLinks(ctx: PageContext, twin: ExtractResult, html: Fetched): Promise<ExtractResult> {
  const input: ExtractInput = { url: html.url, contentType: html.contentType, body: html.body };
  let page: ExtractResult['page'];
  try {
    page = (await (ctx.extract ?? extractInProcess)(input)).page;
  } catch (error) {
    if (!(error instanceof ExtractionError)) throw error;
    return twin;
  }
  const links = [...new Set([...twin.page.links, ...page.links])];
  return { ...twin, page: { ...twin.page, links, canonicalUrl: page.canonicalUrl, noFollow: page.noFollow, description: twin.page.description || page.description } };
}

/** A same-origin, in-scope rel=canonical becomes the document key; the page is skipped when another page owns it. */
async function takeCanonical(claim: PageClaim, result: Fetched, extracted: ExtractResult, doc: NewDocument): Promise<NewDocument | PageResult> {
  const canonicalUrl = extracted.page.canonicalUrl;
  const canonical = canonicalUrl ? cleanUrl(canonicalUrl) : null;
  const canonicalKey = canonical ? normalizeUrl(canonical) : null;
  if (!canonical || !canonicalKey || claim.keys.includes(canonicalKey) || !sameOrigin(canonical, result.url)) return doc;
  if (!claim.isStart && !claim.job.scope.allows(new URL(canonical))) return doc;
  if (!(await claim.alias(canonicalKey, canonical, `canonical is ${canonical}`))) {
    await claim.settleAll({ status: 'skipped', httpStatus: result.status, skipReason: `duplicate of canonical ${canonical}` });
    return 'skipped';
  }
  return { ...doc, documentUrl: canonical };
}

/** Stores the page with its frontier outcome and links in one transaction, then runs the post-commit stages. */
async function storeAndFollow(ctx: PageContext, claim: PageClaim, result: Fetched, extracted: ExtractResult, doc: NewDocument): Promise<PageResult> {
  const { job } = claim;
  const { page, snippets, sections } = extracted;
  const { documentUrl, contentHash, route } = doc;
  const found = page.noFollow ? [] : [...new Set(page.links)];
  const links = found.slice(0, MAX_LINKS_PER_PAGE);
  const record: FetchRecord = { documentUrl, contentHash, etag: result.etag, lastModified: result.lastModified, links };
  const done: SettleRow = { url: claim.docKey, status: 'done', httpStatus: result.status, contentHash, etag: result.etag, lastModified: result.lastModified, documentUrl, route };
  const write: PageWrite = {
    sourceId: job.sourceId,
    url: documentUrl,
    title: page.title,
    markdown: page.markdown,
    contentHash,
    etag: result.etag,
    lastModified: result.lastModified,
    job: { kind: 'crawl', id: job.id },
    snippets,
    flags: page.flags,
    flaggedPassage: page.flaggedPassage,
    sections: sections ?? [],
  };
  // The frontier's step runs last, just before the commit.
  const frontier = claim.withStoredPage({ rows: claim.aliasRows(result.status), done, record, links, description: page.description });
  const stored = await retryTransaction(() => storePage(ctx.pool, write, inTransactionSteps(ctx.stages, [frontier])));
  await claim.countIgnoredLinks(found.length - links.length);
  await runPostCommitStages(ctx.stages, { job: write.job, sourceId: job.sourceId, title: write.title, stored }, ctx.services);
  return 'stored';
}

function md5(body: Buffer): string {
  return createHash('md5').update(body).digest('hex');
}
