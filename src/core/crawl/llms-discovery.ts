import type pg from 'pg';
import { withTransaction } from '../db/transaction.js';
import type { JobInfo } from './claim.js';
import { classifyContentType } from './fetch.js';
import type { PageFetcher } from './fetch.js';
import { admitLimitSql } from './frontier.js';
import { LLMS_FILE, LLMS_FULL_FILE, parseLlmsTxt, splitLlmsFull } from './llms-txt.js';
import type { LlmsFullPage } from './llms-txt.js';
import { pageUrlOfTwin } from './markdown-twin.js';
import { confirmHostRequest, waitForHostSlot } from './politeness.js';
import type { RobotsStore } from './robots-store.js';
import { cleanUrl, hostKey, normalizeUrl } from './url.js';

/**
 * Discovery of a site's llms-full.txt and llms.txt when a crawl with prefer_markdown auto first starts (the
 * controller, beside the sitemaps, before any page is queued). Each is looked for at the start URL's path
 * (`https://h/docs/llms.txt` for `https://h/docs/`) and then at the site root, through the same fetcher,
 * robots.txt, politeness slots and outbound policy as every page. An llms-full.txt found is split into its
 * pages (crawl_llms_pages), each a frontier row of its own that page workers read instead of fetching; an
 * llms.txt found instead seeds its in-scope links, and when most of them are markdown files the job reads
 * every page's `.md` twin first (crawl_jobs.markdown_twins). Both files get a skipped frontier row, so a link
 * to them is not indexed again as a page.
 */

export interface DiscoveryContext {
  pool: pg.Pool;
  fetcher: PageFetcher;
  robots: RobotsStore;
  delaySeconds: number;
}

/** Start URLs whose directories are looked in; the site root is looked in once per origin. */
const MAX_LOOKUP_DIRS = 4;

/** What discovery found, for the caller's log and tests. */
export type LlmsDiscovery = { kind: 'llms-full'; url: string; pages: number } | { kind: 'llms-txt'; url: string; seeds: number; twins: boolean } | { kind: 'none' };

export async function discoverLlmsFiles(ctx: DiscoveryContext, job: JobInfo, signal: AbortSignal): Promise<LlmsDiscovery> {
  if (job.preferMarkdown !== 'auto' || job.maxDepth < 1) return { kind: 'none' };
  const dirs = lookupDirs(job);
  for (const dir of dirs) {
    const full = await fetchLlmsFile(ctx, job, new URL(LLMS_FULL_FILE, dir).href, signal);
    if (full) return { kind: 'llms-full', url: full.url, pages: await admitLlmsFull(ctx.pool, job, full.url, full.text) };
  }
  for (const dir of dirs) {
    const list = await fetchLlmsFile(ctx, job, new URL(LLMS_FILE, dir).href, signal);
    if (list) return { kind: 'llms-txt', url: list.url, ...(await admitLlmsTxt(ctx.pool, job, list.url, list.text)) };
  }
  return { kind: 'none' };
}

/**
 * The start URLs' directories, most specific first, then their sites' roots. A last path segment without an
 * extension is a directory (`/docs` looks in `/docs/`); one with an extension is a page (`/docs/intro.html`
 * looks in `/docs/`).
 */
function lookupDirs(job: JobInfo): string[] {
  const starts = job.startUrls.slice(0, MAX_LOOKUP_DIRS).map((raw) => new URL(raw));
  const dirs = starts.map((u) => {
    const last = u.pathname.slice(u.pathname.lastIndexOf('/') + 1);
    const dir = last === '' ? u.pathname : /\.[a-z0-9]{1,8}$/i.test(last) ? u.pathname.slice(0, -last.length) : `${u.pathname}/`;
    return new URL(dir, u.origin).href;
  });
  const roots = starts.map((u) => `${u.origin}/`);
  return [...new Set([...dirs, ...roots])];
}

function inScope(job: JobInfo, url: URL): boolean {
  const key = normalizeUrl(url);
  return (key !== null && job.startKeys.has(key)) || job.scope.allows(url);
}

/** The file's text when it exists, robots.txt allows it, and the answer is text rather than an HTML page. */
async function fetchLlmsFile(ctx: DiscoveryContext, job: JobInfo, url: string, signal: AbortSignal): Promise<{ url: string; text: string } | null> {
  const target = new URL(url);
  const robots = await ctx.robots.get(job.id, target.origin, signal, job.allowLoopback).catch(() => null);
  if (!robots?.allows(target)) return null;
  const delay = Math.max(ctx.delaySeconds, robots.crawlDelaySeconds ?? 0);
  const result = await ctx.fetcher.fetch(url, {
    accept: 'any',
    signal,
    allowLoopback: job.allowLoopback,
    // Like a sitemap: the site's own file, never one on another host.
    allowRedirect: (u) => u.origin === target.origin || job.scope.allowsOrigin(u),
    beforeRequest: (u, s) => waitForHostSlot(ctx.pool, hostKey(u), delay, s),
    afterSend: (u) => confirmHostRequest(ctx.pool, hostKey(u), delay),
  });
  if (result.kind !== 'ok' || result.status !== 200) return null;
  // A site answering every path with its application's HTML has no llms.txt.
  if (classifyContentType(result.contentType, result.url) === 'html') return null;
  return { url: result.url, text: result.body.toString('utf8') };
}

/** The pages of llms-full.txt keyed as frontier rows; a key given twice keeps one page with both texts. */
function keyedPages(pages: LlmsFullPage[]): Map<string, { fetchUrl: string; markdown: string }> {
  const byKey = new Map<string, { fetchUrl: string; markdown: string }>();
  for (const page of pages) {
    // A heading-anchored page keeps its fragment in its key: the fragment is what tells the pages apart.
    const key = page.sourced ? normalizeUrl(page.url) : page.url;
    if (!key) continue;
    const known = byKey.get(key);
    if (known) known.markdown += `\n\n${page.markdown}`;
    else byKey.set(key, { fetchUrl: page.url, markdown: page.markdown });
  }
  return byKey;
}

/** Splits llms-full.txt into frontier rows (one level below the start URLs) with their text; returns how many were admitted. */
async function admitLlmsFull(pool: pg.Pool, job: JobInfo, fileUrl: string, text: string): Promise<number> {
  const byKey = keyedPages(splitLlmsFull(text, fileUrl, (u) => inScope(job, u)));
  const keys = [...byKey.keys()];
  return withTransaction(pool, async (client) => {
    const fetchUrls = keys.map((k) => byKey.get(k)!.fetchUrl);
    const admitted = await admitRows(client, job, keys, fetchUrls, LLMS_FULL_FILE);
    // The text of the pages the frontier holds (admitted under max_pages, or a start URL), not of the rest.
    await client.query(
      `INSERT INTO crawl_llms_pages (job_id, url, markdown)
       SELECT $1, t.url, t.markdown FROM unnest($2::text[], $3::text[]) AS t(url, markdown)
        WHERE EXISTS (SELECT 1 FROM crawl_frontier f WHERE f.job_id = $1 AND f.url = t.url AND f.status = 'pending')
       ON CONFLICT DO NOTHING`,
      [job.id, keys, keys.map((k) => byKey.get(k)!.markdown)],
    );
    // After the pages: text before the first heading is a page at the file's own URL, which then stays.
    await skipFile(client, job, fileUrl, 'read as llms-full.txt: indexed as its pages');
    return admitted;
  });
}

/** Seeds the in-scope links of llms.txt (a `.md` link stands for its HTML page); returns the seeds admitted. */
async function admitLlmsTxt(pool: pg.Pool, job: JobInfo, fileUrl: string, text: string): Promise<{ seeds: number; twins: boolean }> {
  const links = parseLlmsTxt(text, fileUrl, (u) => inScope(job, u));
  const byKey = new Map<string, string>();
  let markdownLinks = 0;
  for (const link of links) {
    const page = pageUrlOfTwin(link);
    if (page) markdownLinks++;
    const fetchUrl = page && inScope(job, new URL(page)) ? page : link;
    const key = normalizeUrl(fetchUrl);
    if (key && !byKey.has(key)) byKey.set(key, fetchUrl);
  }
  // Most links being markdown files is the site saying it follows the convention; a stray `.md` link is not.
  const twins = markdownLinks > 0 && markdownLinks * 2 >= links.length;
  const keys = [...byKey.keys()];
  const seeds = await withTransaction(pool, async (client) => {
    await skipFile(client, job, fileUrl, 'read as llms.txt: its links seeded the crawl');
    if (twins) await client.query('UPDATE crawl_jobs SET markdown_twins = true WHERE id = $1', [job.id]);
    return admitRows(
      client,
      job,
      keys,
      keys.map((k) => byKey.get(k)!),
      LLMS_FILE,
    );
  });
  return { seeds, twins };
}

/** A discovered file is not a page: its row says what was done with it, and stops a link to it being crawled. */
async function skipFile(client: pg.ClientBase, job: JobInfo, fileUrl: string, reason: string): Promise<void> {
  const key = normalizeUrl(fileUrl);
  if (!key) return;
  await client.query(
    `INSERT INTO crawl_frontier (job_id, url, fetch_url, depth, status, skip_reason, http_status) VALUES ($1, $2, $3, 1, 'skipped', $4, 200)
     ON CONFLICT (job_id, url) DO NOTHING`,
    [job.id, key, cleanUrl(fileUrl), reason],
  );
}

/** Frontier rows one level below the start URLs, as sitemap pages are: the first ones in file order, up to max_pages. */
async function admitRows(client: pg.ClientBase, job: JobInfo, keys: string[], fetchUrls: string[], from: string): Promise<number> {
  if (keys.length === 0) return 0;
  const { rowCount } = await client.query(
    `INSERT INTO crawl_frontier (job_id, url, fetch_url, depth, discovered_from)
     SELECT $1, t.url, t.fetch_url, 1, $5 FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS t(url, fetch_url, n)
      WHERE NOT EXISTS (SELECT 1 FROM crawl_frontier k WHERE k.job_id = $1 AND k.url = t.url)
      ORDER BY t.n
      LIMIT ${admitLimitSql('$4::int')}
     ON CONFLICT DO NOTHING`,
    [job.id, keys, fetchUrls, job.maxPages, from],
  );
  return rowCount ?? 0;
}
