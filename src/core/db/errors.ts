import { UserError, ValidationError } from '../errors.js';

/**
 * "The database cannot be reached or is going away", told apart from "this query failed". Callers answer the
 * former with 503 (retry later) and a fixed reason, never the driver's message: that names the socket path
 * under the data directory, the host or the database.
 */

const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOENT: 'server not running',
  ECONNRESET: 'connection lost',
  EPIPE: 'connection lost',
  ETIMEDOUT: 'connection timed out',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'host unreachable',
};

// SQLSTATEs: admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections, invalid_catalog_name,
// invalid_authorization_specification, invalid_password.
const SERVER_REASONS: Record<string, string> = {
  '57P01': 'server shutting down',
  '57P02': 'server restarting after a crash',
  '57P03': 'server starting up or shutting down',
  '53300': 'too many connections',
  '3D000': 'database does not exist',
  '28000': 'authentication failed',
  '28P01': 'authentication failed',
};

// node-postgres reports a lost or unobtainable connection by message only.
const MESSAGE_REASONS: Array<[RegExp, string]> = [
  [/timeout exceeded when trying to connect|connection timeout/i, 'connection timed out'],
  [/connection terminated|connection ended|server closed the connection|not queryable|client has encountered a connection error|event connection closed/i, 'connection lost'],
];

function ownReason(e: { code?: unknown; message?: unknown; syscall?: unknown }): string | null {
  // A missing file is only about the database when it is the server's socket being connected to.
  if (e.code === 'ENOENT' && e.syscall !== 'connect') return null;
  if (typeof e.code === 'string') {
    const known = NETWORK_REASONS[e.code] ?? SERVER_REASONS[e.code];
    if (known) return known;
    // Class 08: connection exception.
    if (/^08[0-9A-Z]{3}$/.test(e.code)) return 'connection lost';
  }
  if (typeof e.message === 'string') {
    for (const [pattern, reason] of MESSAGE_REASONS) if (pattern.test(e.message)) return reason;
  }
  return null;
}

/** Why the database is unavailable, in a few fixed words; null when `error` is not about availability. */
export function databaseUnavailableReason(error: unknown, depth = 0): string | null {
  if (!error || typeof error !== 'object' || depth > 4) return null;
  const e = error as { code?: unknown; message?: unknown; syscall?: unknown; cause?: unknown; errors?: unknown };
  const own = ownReason(e);
  if (own) return own;
  // AggregateError (dual-stack connect) and wrapped errors carry the real reason inside.
  if (Array.isArray(e.errors)) {
    for (const inner of e.errors) {
      const reason = databaseUnavailableReason(inner, depth + 1);
      if (reason) return reason;
    }
  }
  return e.cause === error ? null : databaseUnavailableReason(e.cause, depth + 1);
}

/** The UserError (code database_unavailable, HTTP 503) for an availability error; null for any other. */
export function databaseUnavailableError(error: unknown): UserError | null {
  if (error instanceof UserError) return error.code === 'database_unavailable' ? error : null;
  const reason = databaseUnavailableReason(error);
  if (!reason) return null;
  return new UserError(`Database unavailable: ${reason}.`, {
    code: 'database_unavailable',
    cause: error,
  });
}

/**
 * SQLSTATEs that mean "the database refused this input", not "docdex is broken": the request carried text or
 * a number the column or function cannot take. Validation should stop such input first; this is the net
 * under it, so a gap answers 422 rather than 500.
 */
const INPUT_REASONS: Record<string, string> = {
  '22021': 'text contains a character the database cannot store (such as NUL)',
  '22P05': 'text contains a character the database cannot store',
  '22P02': 'a value has the wrong format',
  '22003': 'a number is out of range',
  '22001': 'a value is too long',
  '22007': 'a date or time has the wrong format',
  '22008': 'a date or time is out of range',
  '2201B': 'a pattern is not a valid regular expression',
  '54000': 'a value is too large to index',
};

/** The ValidationError (HTTP 422) for a database error caused by the input itself; null for any other. */
export function databaseInputError(error: unknown): ValidationError | null {
  if (!error || typeof error !== 'object') return null;
  const code = (error as { code?: unknown }).code;
  const reason = typeof code === 'string' ? INPUT_REASONS[code] : undefined;
  return reason ? new ValidationError(`Invalid input: ${reason}.`, { hint: 'Check the values sent and try again.' }) : null;
}
