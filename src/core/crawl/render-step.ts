import type pg from 'pg';
import type { ExtractResult } from '../extract/index.js';
import type { Config } from '../config.js';
import { BROWSER_HINT, BrowserHost, findChromium } from '../render/browser.js';
import { renderReason } from '../render/need.js';
import { RenderError, renderPage } from '../render/render.js';
import type { Resource } from '../render/render.js';
import type { PageClaim } from './claim.js';
import type { FetchOutcome, PageFetcher } from './fetch.js';
import { classifyContentType } from './fetch.js';

/**
 * Rendering as another way to get a page's document: after the fetch and its extraction, a page the job's
 * render mode picks (always, or under `auto` one that looks client-rendered: render/need.ts) is rendered in the
 * worker's browser and its rendered DOM extracted by the same extractor; the fetched document stands otherwise.
 * The page's politeness and robots.txt were applied to its fetch; the browser gets the fetched bytes for the
 * page itself and asks Node for its sub-resources, which go through the crawler's fetcher with the job's
 * outbound permission but are not crawled pages (no politeness slot, no frontier row).
 */

/** The worker's renderer: its browser, or null when this machine has none. */
export interface PageRenderer {
  host: BrowserHost | null;
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
  const host = executable ? new BrowserHost({ executable, maxPages: Math.min(concurrency, MAX_RENDER_PAGES), launchTimeoutMs: RENDER_TIMEOUT_MS }) : null;
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

/** A sub-resource of a rendered page through the crawler's fetcher, under the job's outbound permission. */
function subresourceFetcher(fetcher: PageFetcher, allowLoopback: boolean) {
  return async (url: string, signal: AbortSignal): Promise<Resource | null> => {
    const outcome = await fetcher.fetch(url, { accept: 'any', allowLoopback, signal, maxBodyBytes: fetcher.settings.maxBodyBytes }).catch(() => null);
    if (outcome === null) return null;
    if (outcome.kind === 'ok') return { status: outcome.status, contentType: outcome.contentType, body: outcome.body };
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
    const rendered = await renderPage(host, {
      url: result.url,
      document: { status: result.status, contentType: result.contentType, body: result.body },
      fetchSubresource: subresourceFetcher(ctx.fetcher, claim.job.allowLoopback),
      // Unlike its fetch's redirects, a start page's navigations stay in scope too: what it draws is stored under its URL.
      allowNavigation: (u) => claim.job.scope.allows(u),
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
