/** Connection-loss detection for the dashboard's retry banner; plain functions so they are tested alone. */

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
// admin_shutdown, crash_shutdown, cannot_connect_now: the server went away, not the query.
const SERVER_GONE = new Set(['57P01', '57P02', '57P03']);
const MESSAGES = /connection terminated|connection timeout|timeout exceeded when trying to connect|client has encountered a connection error|connection ended|not queryable|event connection closed|server closed the connection/i;

/**
 * True when an error means "the database is unreachable" rather than "this query failed". Only the former
 * turns on the banner and the retry loop; a failed query is shown where it happened.
 */
export function isConnectionError(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const e = error as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || SERVER_GONE.has(e.code) || e.code.startsWith('08'))) return true;
  if (typeof e.message === 'string' && MESSAGES.test(e.message)) return true;
  // AggregateError (dual-stack connect) and wrapped errors carry the real reason inside.
  if (Array.isArray(e.errors) && e.errors.some(isConnectionError)) return true;
  return e.cause !== undefined && e.cause !== error && isConnectionError(e.cause);
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
