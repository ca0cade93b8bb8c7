import type { PageClaim } from './claim.js';
import { classifyContentType } from './fetch.js';
import type { FetchOutcome, PageFetcher } from './fetch.js';
import type { PageRoute } from './frontier.js';
import { findMarkdownAlternate, twinContentType, twinUrlFor } from './markdown-twin.js';
import { confirmHostRequest, waitForHostSlot } from './politeness.js';
import type { RobotsStore } from './robots-store.js';
import { RobotsUnavailableError } from './robots-store.js';
import { cleanUrl, hostKey, sameOrigin } from './url.js';
import type pg from 'pg';

/**
 * Which bytes stand for a claimed page, and the route they came by. With prefer_markdown auto: the page's part
 * of the site's llms-full.txt when discovery split one (no request at all); else, when the site's llms.txt
 * links markdown files, the page's `.md` twin by the llms.txt convention (one request instead of the HTML);
 * else the HTML, and then the markdown alternate its head declares. A twin that fails (any status, an HTML
 * answer, robots.txt) falls back to the HTML quietly. Every request goes through robots.txt, the host's
 * politeness slot and the job's outbound policy, as any page's does. prefer_markdown never: the HTML only.
 */

export interface RouteContext {
  pool: pg.Pool;
  fetcher: PageFetcher;
  robots: RobotsStore;
  delaySeconds: number;
}

/** A page's fetch outcome and the route it took; a PageResult string when the page ended before fetching. */
export interface RoutedFetch {
  outcome: FetchOutcome;
  route: PageRoute;
  /** The HTML a declared twin replaced: its links (navigation a twin lacks) and rel=canonical still count. */
  html?: Fetched;
}

type Fetched = Extract<FetchOutcome, { kind: 'ok' }>;

/** The outcome, or how the page ended (robots.txt disallows it, robots.txt could not be read). */
export type Ended = 'skipped' | 'failed';

export async function fetchRouted(ctx: RouteContext, claim: PageClaim, signal: AbortSignal): Promise<RoutedFetch | Ended> {
  if (claim.hints.llmsMarkdown !== null) return { outcome: llmsFullOutcome(claim, claim.hints.llmsMarkdown), route: 'llms_full' };
  const auto = claim.job.preferMarkdown === 'auto';
  if (auto && claim.hints.siteTwins) {
    const twinUrl = twinUrlFor(claim.fetchUrl);
    const twin = twinUrl ? await fetchTwin(ctx, claim, twinUrl, signal, validatorsOf(claim)) : null;
    if (twin) return { outcome: twin.kind === 'ok' ? { ...twin, url: claim.fetchUrl, redirects: [] } : twin, route: 'markdown_twin' };
  }
  const page = await fetchPage(ctx, claim, claim.fetchUrl, signal);
  if (typeof page === 'string' || page.kind !== 'ok' || !auto) return typeof page === 'string' ? page : { outcome: page, route: 'html' };
  const alternate = classifyContentType(page.contentType, page.url) === 'html' ? findMarkdownAlternate(page.body, page.url) : null;
  if (!alternate || alternate === cleanUrl(page.url) || !twinAllowed(claim, alternate, page.url)) return { outcome: page, route: 'html' };
  const twin = await fetchTwin(ctx, claim, alternate, signal, {});
  if (twin?.kind !== 'ok') return { outcome: page, route: 'html' };
  // The HTML's URL, status and validators stay: the page is the HTML page, read from its markdown.
  return { outcome: { ...page, contentType: twin.contentType, body: twin.body }, route: 'markdown_twin', html: page };
}

/** The page's part of llms-full.txt as a fetched markdown document at the page's own URL. */
function llmsFullOutcome(claim: PageClaim, markdown: string): Fetched {
  return { kind: 'ok', url: claim.fetchUrl, status: 200, contentType: 'text/markdown; charset=utf-8', body: Buffer.from(markdown), etag: null, lastModified: null, redirects: [] };
}

/** A declared alternate is followed on the page's own origin or one the crawl's scope admits, never elsewhere. */
function twinAllowed(claim: PageClaim, twinUrl: string, pageUrl: string): boolean {
  return sameOrigin(twinUrl, pageUrl) || claim.job.scope.allowsOrigin(new URL(twinUrl));
}

function validatorsOf(claim: PageClaim): { etag?: string | null; lastModified?: string | null } {
  const prev = claim.previous;
  // Validators only make sense while the document they describe still exists.
  return prev && prev.documentHash !== null ? { etag: prev.etag, lastModified: prev.lastModified } : {};
}

/**
 * A twin's answer as markdown (or not modified since the last crawl), or null when there is none to use: the
 * page then falls back to its HTML.
 */
async function fetchTwin(ctx: RouteContext, claim: PageClaim, twinUrl: string, signal: AbortSignal, validators: { etag?: string | null; lastModified?: string | null }): Promise<FetchOutcome | null> {
  const twin = await fetchPage(ctx, claim, twinUrl, signal, validators, (u) => twinAllowed(claim, u.href, claim.fetchUrl));
  if (typeof twin === 'string') return null;
  if (twin.kind === 'not_modified') return twin;
  if (twin.kind !== 'ok') return null;
  const contentType = twinContentType(twin.contentType, twin.url);
  return contentType ? { ...twin, contentType } : null;
}

/**
 * robots.txt, then the fetch through the host's politeness slot. For the page's own URL (the default), a
 * robots.txt refusal or an unreadable robots.txt settles the page and ends it; for a twin it only says no.
 */
export async function fetchPage(
  ctx: RouteContext,
  claim: PageClaim,
  url: string,
  signal: AbortSignal,
  validators = validatorsOf(claim),
  allowRedirect = (u: URL) => claim.isStart || claim.job.scope.allows(u),
): Promise<FetchOutcome | Ended> {
  const { job, key } = claim;
  const own = url === claim.fetchUrl;
  const target = new URL(url);
  let robotsDelay: number;
  try {
    const robots = await ctx.robots.get(job.id, target.origin, signal, job.allowLoopback);
    if (!robots.allows(target)) {
      if (own) await claim.settle([{ url: key, status: 'skipped', skipReason: 'disallowed by robots.txt' }]);
      return 'skipped';
    }
    robotsDelay = robots.crawlDelaySeconds ?? 0;
  } catch (error) {
    if (!(error instanceof RobotsUnavailableError)) throw error;
    if (own) await claim.settle([{ url: key, status: 'failed', error: error.message }]);
    return 'failed';
  }
  const delay = Math.max(ctx.delaySeconds, robotsDelay);
  return ctx.fetcher.fetch(url, {
    ...validators,
    signal,
    allowLoopback: job.allowLoopback,
    // A start URL may move (http to https, a docs subdomain); any other page must stay in scope.
    allowRedirect,
    beforeRequest: (u, s) => waitForHostSlot(ctx.pool, hostKey(u), u.origin === target.origin ? delay : ctx.delaySeconds, s),
    afterSend: (u) => confirmHostRequest(ctx.pool, hostKey(u), u.origin === target.origin ? delay : ctx.delaySeconds),
  });
}
