import type pg from 'pg';

/**
 * The per-job LLM budget, kept in the job's own llm_calls / llm_tokens counters so `crawl status` and the job
 * endpoints show it. A call reserves its worst case (prompt + maximum answer) before it is sent, atomically, so
 * concurrent workers of one job cannot overshoot together; the reservation is settled to the real usage after
 * the answer. A limit of 0 means no limit.
 */

export type LlmJobKind = 'crawl' | 'upload';

export interface BudgetLimits {
  maxCalls: number;
  maxTokens: number;
}

export interface Reservation {
  kind: LlmJobKind;
  jobId: string;
  tokens: number;
}

// Only these two names are ever interpolated into SQL.
const TABLE: Record<LlmJobKind, string> = { crawl: 'crawl_jobs', upload: 'upload_jobs' };

/** Reserves one call and `tokens` tokens; null when the job's budget (or the job) is gone. */
export async function reserveCall(db: pg.Pool, kind: LlmJobKind, jobId: string, tokens: number, limits: BudgetLimits): Promise<Reservation | null> {
  const { rowCount } = await db.query(
    `UPDATE ${TABLE[kind]} SET llm_calls = llm_calls + 1, llm_tokens = llm_tokens + $2, updated_at = now()
      WHERE id = $1
        AND ($3::int = 0 OR llm_calls + 1 <= $3::int)
        AND ($4::int = 0 OR llm_tokens + $2 <= $4::int)`,
    [jobId, tokens, limits.maxCalls, limits.maxTokens],
  );
  return rowCount === 1 ? { kind, jobId, tokens } : null;
}

/** Replaces the reserved tokens by what the call really used. */
export async function settleCall(db: pg.Pool, reservation: Reservation, usedTokens: number): Promise<void> {
  await db.query(`UPDATE ${TABLE[reservation.kind]} SET llm_tokens = greatest(0, llm_tokens + $2), updated_at = now() WHERE id = $1`, [reservation.jobId, usedTokens - reservation.tokens]);
}

/** Gives back a reservation whose request never got an answer (the endpoint failed after all retries). */
export async function releaseCall(db: pg.Pool, reservation: Reservation): Promise<void> {
  await db.query(`UPDATE ${TABLE[reservation.kind]} SET llm_calls = greatest(0, llm_calls - 1), llm_tokens = greatest(0, llm_tokens - $2), updated_at = now() WHERE id = $1`, [
    reservation.jobId,
    reservation.tokens,
  ]);
}

export async function readUsage(db: pg.Pool, kind: LlmJobKind, jobId: string): Promise<{ calls: number; tokens: number } | null> {
  const { rows } = await db.query<{ calls: number; tokens: number }>(`SELECT llm_calls AS calls, llm_tokens AS tokens FROM ${TABLE[kind]} WHERE id = $1`, [jobId]);
  return rows[0] ?? null;
}
