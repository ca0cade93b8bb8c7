import { createHash } from 'node:crypto';
import type pg from 'pg';
import { withTransaction } from '../db/transaction.js';

export interface RateLimit {
  /** Accepted requests per window. */
  max: number;
  windowSeconds: number;
}

export type RateLimitDecision = { allowed: true; remaining: number } | { allowed: false; retryAfterSeconds: number };

/**
 * A sliding-window limit counted in PostgreSQL: one row per accepted request, so the count survives a
 * daemon restart and holds across several daemons on one database. Rejected requests are not recorded,
 * so a client that keeps hammering is let in again as soon as its oldest accepted request ages out.
 * The bucket is serialised with a transaction-scoped advisory lock, so two concurrent requests cannot
 * both take the last slot.
 */
export async function takeRateLimitSlot(pool: pg.Pool, bucket: string, limit: RateLimit): Promise<RateLimitDecision> {
  return withTransaction<RateLimitDecision>(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [bucket]);
    await client.query(`DELETE FROM agent_rate_limit_hits WHERE bucket = $1 AND at <= clock_timestamp() - make_interval(secs => $2)`, [bucket, limit.windowSeconds]);
    const { rows } = await client.query<{ count: number; retry_ms: number | null }>(
      `SELECT count(*)::int AS count,
              extract(epoch FROM (min(at) + make_interval(secs => $2) - clock_timestamp())) * 1000 AS retry_ms
         FROM agent_rate_limit_hits WHERE bucket = $1`,
      [bucket, limit.windowSeconds],
    );
    const count = rows[0]?.count ?? 0;
    if (count >= limit.max) {
      // Rounded up: a client that waits exactly Retry-After seconds must find the slot free.
      const retryAfterSeconds = Math.max(1, Math.ceil(Number(rows[0]?.retry_ms ?? limit.windowSeconds * 1000) / 1000));
      return { allowed: false, retryAfterSeconds };
    }
    await client.query('INSERT INTO agent_rate_limit_hits (bucket) VALUES ($1)', [bucket]);
    return { allowed: true, remaining: limit.max - count - 1 };
  });
}

/** A bucket name per token and route; the token itself is never stored. */
export function rateLimitBucket(token: string, route: string): string {
  return `${route} ${createHash('sha256').update(token).digest('hex').slice(0, 32)}`;
}
