import type pg from 'pg';
import { sleep } from './sleep.js';

/**
 * CRAWL_DELAY between requests to one host, enforced across every worker through the database: each request
 * first takes the host's slot with `crawl_take_host_slot`, which succeeds only when the previous request to
 * that host was taken at least the spacing ago (clock_timestamp under the row lock). A process-local delay
 * would let two workers hit a site twice as often.
 */

/**
 * Between taking the slot and the request reaching the server there are a few milliseconds (socket write,
 * the server's own scheduling) that differ from one request to the next. A margin on top of the delay keeps
 * the gap the server sees at or above CRAWL_DELAY. It is 30 ms whatever the delay: the jitter comes from the
 * machine's load (two cores running the test suite beside the crawl), not from the delay, so a margin that is
 * a share of the delay left short delays short on a loaded machine. 30 ms at the default 1 s delay stays well
 * inside the 5% a crawl may take beyond N x delay.
 */
const SLOT_MARGIN_SECONDS = 0.03;

export function slotSpacingSeconds(delaySeconds: number): number {
  if (delaySeconds <= 0) return 0;
  return delaySeconds + SLOT_MARGIN_SECONDS;
}

export async function takeHostSlotOnce(pool: pg.Pool, host: string, spacingSeconds: number): Promise<number> {
  const { rows } = await pool.query<{ wait_ms: number }>('SELECT crawl_take_host_slot($1, $2) AS wait_ms', [host, spacingSeconds]);
  return Number(rows[0]?.wait_ms ?? 0);
}

/**
 * Moves the host's last request time up to now, right after a request went out. A worker whose event loop was
 * busy between taking the slot and sending (a large page being extracted) would otherwise send late and
 * shorten the gap to the next worker's request; with this, the next slot counts from the actual send.
 */
export function confirmHostRequest(pool: pg.Pool, host: string, delaySeconds: number): void {
  if (delaySeconds <= 0) return;
  pool.query('UPDATE crawl_hosts SET last_request_at = greatest(last_request_at, clock_timestamp()) WHERE host = $1', [host]).catch(() => undefined);
}

/** Waits until this process may send one request to `host`. Resolves immediately when the delay is 0. */
export async function waitForHostSlot(pool: pg.Pool, host: string, delaySeconds: number, signal?: AbortSignal): Promise<void> {
  const spacing = slotSpacingSeconds(delaySeconds);
  if (spacing <= 0) return;
  for (;;) {
    signal?.throwIfAborted();
    const waitMs = await takeHostSlotOnce(pool, host, spacing);
    if (waitMs <= 0) return;
    // Waking a few ms late costs nothing; waking early costs a round trip. Long waits are re-asked in
    // pieces so a cancelled job stops waiting promptly even without the signal.
    await sleep(Math.min(waitMs + 2, 5000), signal);
  }
}
