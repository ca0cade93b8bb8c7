import type pg from 'pg';
import type { ExtractResult } from '../extract/index.js';
import type { Config } from '../config.js';
import { BROWSER_HINT, findChromium } from '../render/browser.js';
import { renderReason } from '../render/need.js';
import { CORS_HEADERS, RenderError } from '../render/render.js';
import type { FetchSubresource } from '../render/render.js';
import { Renderer } from '../render/renderer.js';
import type { JobInfo, PageClaim } from './claim.js';
import type { FetchOutcome, PageFetcher } from './fetch.js';
import { classifyContentType } from './fetch.js';

/**
 * Rendering as another way to get a page's document: after the fetch and its extraction, a page the job's
 * render mode picks (always, or under `auto` one that looks client-rendered: render/need.ts) is rendered in the
 * worker's browser and its rendered DOM extracted by the same extractor; the fetched document stands otherwise.
 * The page's politeness and robots.txt were applied to its fetch; the browser gets the fetched bytes for the
 * page itself and asks Node for its sub-resources, which go through the crawler's fetcher but are not crawled
 * pages (no politeness slot, no frontier row). What they may reach is `subresourceFetcher`'s rule.
 */

/** The worker's renderer: its browser (in a thread of its own), or null when this machine has none. */
export interface PageRenderer {
  host: Renderer | null;
  /** One page's render, at most. */
  timeoutMs: number;
}

/** Pages one worker renders at once: each is a browser tab, the largest share of the browser's memory. */
export const MAX_RENDER_PAGES = 4;
/** One page's render, at most: network idle is waited for within it. */
export const RENDER_TIMEOUT_MS = 30_000;

/** The worker's renderer: Chromium when this machine has one (DOCDEX_CHROMIUM, else PATH), not yet launched. */
export function createPageRenderer(config: Config, concurrency: number): PageRenderer {
  const executable = findChromium(config.render.chromium);
  const host = executable ? new Renderer({ executable, maxPages: Math.min(concurrency, MAX_RENDER_PAGES), launchTimeoutMs: RENDER_TIMEOUT_MS }) : null;
  return { host, timeoutMs: RENDER_TIMEOUT_MS };
}

type Fetched = Extract<FetchOutcome, { kind: 'ok' }>;

/** The document a page is stored from: as fetched, or as rendered. */
export interface ShownPage {
  result: Fetched;
  extracted: ExtractResult;
}

export interface RenderStepContext {
  pool: pg.Pool;
  fetcher: PageFetcher;
  renderer?: PageRenderer | undefined;
}

/** Main text as the auto rule counts it: the page's markdown without its fenced code. */
function mainContent(extracted: ExtractResult): { textChars: number; codeBlocks: number } {
  const text = extracted.page.markdown
    .replace(/```[\s\S]*?```/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  return { textChars: text.length, codeBlocks: extracted.snippets.length };
}

/** Whether this page is rendered under the job's mode; false for anything that is not HTML. */
function wantsRender(claim: PageClaim, result: Fetched, extracted: ExtractResult): boolean {
  if (claim.job.render === 'never' || classifyContentType(result.contentType, result.url) !== 'html') return false;
  if (claim.job.render === 'always') return true;
  return renderReason(result.url, result.body.toString('utf8'), mainContent(extracted)) !== null;
}

/**
 * What a rendered page's requests may reach (SECURITY.md, "What a page's scripts may reach"). The page's own
 * origin (scheme, host and port, not the host alone) keeps the permission the page was fetched under; any
 * other origin gets a remote caller's (public addresses plus CRAWL_ALLOW_HOSTS), so the CLI's loopback
 * permission covers what the user typed, never what a page's scripts ask for. The fetcher checks it at connect
 * time, after DNS. A redirect is followed only within the requested URL's origin: the browser sees the answer
 * under that URL, so a hop elsewhere would pass another origin's answer off as this one's. Navigations of the
 * top frame stay in the crawl's scope, as what the page draws is stored under its URL.
 */
function subresourceFetcher(fetcher: PageFetcher, job: JobInfo, pageUrl: string): FetchSubresource {
  const pageOrigin = new URL(pageUrl).origin;
  return async ({ url, topNavigation }, signal) => {
    const target = new URL(url);
    if (topNavigation && !job.scope.allows(target)) return null;
    const outcome = await fetcher
      .fetch(url, {
        accept: 'any',
        allowLoopback: target.origin === pageOrigin && job.allowLoopback,
        allowRedirect: (next) => next.origin === target.origin,
        keepHeaders: CORS_HEADERS,
        signal,
        maxBodyBytes: fetcher.settings.maxBodyBytes,
      })
      .catch(() => null);
    if (outcome === null) return null;
    if (outcome.kind === 'ok') return { status: outcome.status, contentType: outcome.contentType, body: outcome.body, cors: outcome.headers ?? {} };
    if (outcome.kind === 'http_error' && outcome.status >= 400) return { status: outcome.status, contentType: 'text/plain', body: Buffer.alloc(0) };
    return null;
  };
}

async function countOnJob(pool: pg.Pool, jobId: string, column: 'pages_rendered' | 'pages_render_missed'): Promise<void> {
  await pool.query(`UPDATE crawl_jobs SET ${column} = ${column} + 1 WHERE id = $1`, [jobId]);
}

/**
 * The page as it is stored: rendered when the job's mode wants it and a browser is there, else as fetched
 * (counted on the job as missed when it looked client-rendered). Null when the page failed, recorded on it:
 * `always` without a browser, or a render that failed under `always`. Under `auto` a failed render keeps the
 * fetched document.
 */
export async function renderWhenNeeded(
  ctx: RenderStepContext,
  claim: PageClaim,
  fetched: ShownPage,
  extract: (result: Fetched) => Promise<ExtractResult | null>,
  signal: AbortSignal,
): Promise<ShownPage | null> {
  const { result } = fetched;
  if (!wantsRender(claim, result, fetched.extracted)) return fetched;
  const host = ctx.renderer?.host ?? null;
  const always = claim.job.render === 'always';
  if (host === null) {
    if (!always) {
      await countOnJob(ctx.pool, claim.job.id, 'pages_render_missed');
      return fetched;
    }
    await claim.settleAll({ status: 'failed', httpStatus: result.status, error: `no Chromium to render with. ${BROWSER_HINT}` });
    return null;
  }
  try {
    const rendered = await host.render({
      url: result.url,
      document: { status: result.status, contentType: result.contentType, body: result.body },
      fetchSubresource: subresourceFetcher(ctx.fetcher, claim.job, result.url),
      userAgent: ctx.fetcher.settings.userAgent,
      timeoutMs: ctx.renderer!.timeoutMs,
      maxHtmlBytes: ctx.fetcher.settings.maxBodyBytes,
      signal,
    });
    const shown: Fetched = { ...result, contentType: 'text/html; charset=utf-8', body: rendered.html };
    const extracted = await extract(shown);
    if (extracted === null) return null;
    await countOnJob(ctx.pool, claim.job.id, 'pages_rendered');
    const links = [...extracted.page.links, ...rendered.hashRoutes.filter((u) => claim.job.scope.allows(new URL(u)))];
    return { result: shown, extracted: { ...extracted, page: { ...extracted.page, links } } };
  } catch (error) {
    if (!(error instanceof RenderError)) throw error;
    if (!always) return fetched;
    await claim.settleAll({ status: 'failed', httpStatus: result.status, error: error.message });
    return null;
  }
}
