/** Connection-loss detection for the dashboard's retry banner; plain functions so they are tested alone. */
import { databaseUnavailableReason } from '../../core/db/errors.js';

/**
 * True when an error means "the database is unreachable" rather than "this query failed". Only the former
 * turns on the banner and the retry loop; a failed query is shown where it happened. The classification is
 * the daemon's own (`core/db/errors.ts`), so the dashboard and the 503 answers agree.
 */
export function isConnectionError(error: unknown): boolean {
  return databaseUnavailableReason(error) !== null;
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    if (error.message) return error.message;
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const inner = (error as { errors?: unknown }).errors;
    if (Array.isArray(inner) && inner[0] instanceof Error) return errorMessage(inner[0]);
    return error.name;
  }
  return String(error);
}

/** 1 s, 2 s, 4 s ... capped: fast enough to notice a restart, slow enough not to hammer a dead server. */
export function retryDelay(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
}
