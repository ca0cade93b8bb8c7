import type pg from 'pg';
import { UNRESOLVED_HOST } from './fetch.js';
import type { PageFetcher } from './fetch.js';
import { confirmHostRequest, waitForHostSlot } from './politeness.js';
import { ALLOW_ALL, ROBOTS_MAX_BYTES, parseRobots, robotsFromResponse } from './robots.js';
import type { RobotsRules } from './robots.js';
import { hostKey } from './url.js';

/**
 * The longest robots.txt Crawl-delay honoured. A page waits out the delay while holding a worker slot, and a
 * site asking for minutes between requests would hold slots that long; above the ceiling the crawl still
 * spaces its requests by the ceiling, and the job reports the delay it lowered (crawl_delay_clamped).
 */
export const MAX_CRAWL_DELAY_SECONDS = 30;

/** The rules with their Crawl-delay lowered to the ceiling. */
export function clampCrawlDelay(rules: RobotsRules, ceiling = MAX_CRAWL_DELAY_SECONDS): RobotsRules {
  const delay = rules.crawlDelaySeconds;
  return delay !== null && delay > ceiling ? { ...rules, allows: (url) => rules.allows(url), crawlDelaySeconds: ceiling } : rules;
}

/** robots.txt could not be read (5xx or no answer): the page fails, retryably, instead of being crawled blind. */
export class RobotsUnavailableError extends Error {
  override readonly name = 'RobotsUnavailableError';
}

/**
 * robots.txt per job and origin: fetched once by whichever worker needs it first, stored in crawl_robots for
 * the other workers, and memoised in the process. Each job reads it afresh, so a recrawl sees today's rules.
 */
export class RobotsStore {
  private readonly memo = new Map<string, Promise<RobotsRules>>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly fetcher: PageFetcher,
    private readonly delaySeconds: number,
    private readonly maxCrawlDelaySeconds = MAX_CRAWL_DELAY_SECONDS,
  ) {}

  forgetJob(jobId: string): void {
    for (const key of this.memo.keys()) if (key.startsWith(`${jobId} `)) this.memo.delete(key);
  }

  /** `allowLoopback` is the job's outbound policy (see net/outbound.ts); robots.txt follows it like pages. */
  get(jobId: string, origin: string, signal?: AbortSignal, allowLoopback = false): Promise<RobotsRules> {
    const key = `${jobId} ${origin}`;
    const known = this.memo.get(key);
    if (known) return known;
    if (this.memo.size > 2000) this.memo.clear();
    const asked = Date.now();
    const entry = this.load(jobId, origin, signal, allowLoopback).then((rules) => this.withCeiling(jobId, rules));
    this.memo.set(key, entry);
    // A failure is remembered for as long as it took to establish (the fetcher's retries), then the next page
    // of this origin asks again. The routes tried right after a start page (llms.txt, a sitemap, markdown twins)
    // then fail with it at once instead of each retrying the same dead host as long again: `docdex add` of a
    // site that refused connections spent one robots.txt fetch's retries per route (test/crawl/robots-store).
    entry.catch(() => {
      const forget = setTimeout(() => this.memo.get(key) === entry && this.memo.delete(key), Date.now() - asked);
      forget.unref();
    });
    return entry;
  }

  /** Lowers a Crawl-delay above the ceiling, and records on the job that it did. */
  private async withCeiling(jobId: string, rules: RobotsRules): Promise<RobotsRules> {
    const clamped = clampCrawlDelay(rules, this.maxCrawlDelaySeconds);
    if (clamped === rules) return rules;
    await this.pool.query(`UPDATE crawl_jobs SET crawl_delay_clamped = $2 WHERE id = $1 AND (crawl_delay_clamped IS NULL OR crawl_delay_clamped < $2)`, [jobId, rules.crawlDelaySeconds]);
    return clamped;
  }

  private async load(jobId: string, origin: string, signal: AbortSignal | undefined, allowLoopback: boolean): Promise<RobotsRules> {
    const stored = await this.pool.query<{ status: number; body: string }>('SELECT status, body FROM crawl_robots WHERE job_id = $1 AND origin = $2', [jobId, origin]);
    const row = stored.rows[0];
    if (row) {
      const rules = robotsFromResponse(row.status, row.body);
      return rules === 'unreachable' ? ALLOW_ALL : rules;
    }
    const result = await this.fetcher.fetch(`${origin}/robots.txt`, {
      accept: 'any',
      maxBodyBytes: ROBOTS_MAX_BYTES * 4,
      allowLoopback,
      ...(signal ? { signal } : {}),
      beforeRequest: (u, s) => waitForHostSlot(this.pool, hostKey(u), this.delaySeconds, s),
      afterSend: (u) => confirmHostRequest(this.pool, hostKey(u), this.delaySeconds),
    });
    let status: number;
    let body = '';
    switch (result.kind) {
      case 'ok':
        status = result.status;
        body = result.body.toString('utf8').slice(0, ROBOTS_MAX_BYTES);
        break;
      case 'http_error':
        status = result.status;
        break;
      case 'skipped':
        // Larger than we read: treat like a missing file rather than guess at a truncated rule set.
        status = 413;
        break;
      case 'not_modified':
        status = 404;
        break;
      case 'error':
        // A redirect to an address the policy refuses is not followed: like a missing file, the origin's own
        // pages decide. A refused origin is the page's own failure, said plainly, and so is a host that does
        // not resolve: the page itself cannot be fetched either.
        if (result.refused && result.redirects.length > 0) {
          status = 404;
          break;
        }
        throw new RobotsUnavailableError(result.refused || result.message.startsWith(UNRESOLVED_HOST) ? result.message : `robots.txt unreachable: ${result.message}`);
    }
    const rules = robotsFromResponse(status, body);
    if (rules === 'unreachable') throw new RobotsUnavailableError(`robots.txt unreachable: HTTP ${status}`);
    await this.pool.query(`INSERT INTO crawl_robots (job_id, origin, status, body) VALUES ($1, $2, $3, $4) ON CONFLICT (job_id, origin) DO NOTHING`, [jobId, origin, status, body]);
    return status >= 200 && status < 300 ? parseRobots(body) : rules;
  }
}
