import type pg from 'pg';
import { UNRESOLVED_HOST } from './fetch.js';
import type { PageFetcher } from './fetch.js';
import { confirmHostRequest, waitForHostSlot } from './politeness.js';
import { ALLOW_ALL, ROBOTS_MAX_BYTES, parseRobots, robotsFromResponse } from './robots.js';
import type { RobotsRules } from './robots.js';
import { hostKey } from './url.js';

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
  ) {}

  forgetJob(jobId: string): void {
    for (const key of this.memo.keys()) if (key.startsWith(`${jobId} `)) this.memo.delete(key);
  }

  get(jobId: string, origin: string, signal?: AbortSignal): Promise<RobotsRules> {
    const key = `${jobId} ${origin}`;
    let entry = this.memo.get(key);
    if (!entry) {
      if (this.memo.size > 2000) this.memo.clear();
      entry = this.load(jobId, origin, signal);
      this.memo.set(key, entry);
      // A failure is not remembered: the next page of this origin asks again.
      entry.catch(() => this.memo.delete(key));
    }
    return entry;
  }

  private async load(jobId: string, origin: string, signal?: AbortSignal): Promise<RobotsRules> {
    const stored = await this.pool.query<{ status: number; body: string }>('SELECT status, body FROM crawl_robots WHERE job_id = $1 AND origin = $2', [jobId, origin]);
    const row = stored.rows[0];
    if (row) {
      const rules = robotsFromResponse(row.status, row.body);
      return rules === 'unreachable' ? ALLOW_ALL : rules;
    }
    const result = await this.fetcher.fetch(`${origin}/robots.txt`, {
      accept: 'any',
      maxBodyBytes: ROBOTS_MAX_BYTES * 4,
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
        // A host that does not resolve is not a robots.txt problem: the page itself cannot be fetched either.
        throw new RobotsUnavailableError(result.message.startsWith(UNRESOLVED_HOST) ? result.message : `robots.txt unreachable: ${result.message}`);
    }
    const rules = robotsFromResponse(status, body);
    if (rules === 'unreachable') throw new RobotsUnavailableError(`robots.txt unreachable: HTTP ${status}`);
    await this.pool.query(
      `INSERT INTO crawl_robots (job_id, origin, status, body) VALUES ($1, $2, $3, $4) ON CONFLICT (job_id, origin) DO NOTHING`,
      [jobId, origin, status, body],
    );
    return status >= 200 && status < 300 ? parseRobots(body) : rules;
  }
}
