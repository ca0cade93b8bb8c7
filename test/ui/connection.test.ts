import { describe, expect, it } from 'vitest';
import { databaseUnavailableReason } from '../../src/core/db/errors.js';
import { errorMessage, isConnectionError, retryDelay } from '../../src/ui/data/connection.js';

describe('connection errors', () => {
  it('tells a lost server from a failed query', () => {
    expect(isConnectionError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isConnectionError(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isConnectionError(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe(true);
    expect(isConnectionError(new AggregateError([Object.assign(new Error(''), { code: 'ECONNREFUSED' })]))).toBe(true);
    expect(isConnectionError(Object.assign(new Error('syntax error'), { code: '42601' }))).toBe(false);
    expect(isConnectionError(new Error('Source x not found.'))).toBe(false);
    expect(isConnectionError(null)).toBe(false);
  });

  it('agrees with the daemon on what an unavailable database is', () => {
    const errors = [
      Object.assign(new Error('sorry, too many clients already'), { code: '53300' }),
      Object.assign(new Error('password authentication failed'), { code: '28P01' }),
      Object.assign(new Error('connect ENOENT /run/.s.PGSQL.5432'), { code: 'ENOENT', syscall: 'connect' }),
      Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT', syscall: 'open' }),
      new Error('event connection closed'),
      Object.assign(new Error('duplicate key'), { code: '23505' }),
    ];
    for (const error of errors) expect(isConnectionError(error), error.message).toBe(databaseUnavailableReason(error) !== null);
    expect(isConnectionError(errors[0])).toBe(true);
  });

  it('finds a message even in an AggregateError with none', () => {
    expect(errorMessage(new AggregateError([new Error('inner')]))).toBe('inner');
    expect(errorMessage(Object.assign(new Error(''), { code: 'ECONNREFUSED' }))).toBe('ECONNREFUSED');
  });

  it('backs off exponentially up to a cap', () => {
    expect([1, 2, 3, 4, 5, 6].map((a) => retryDelay(a, 1000, 10_000))).toEqual([1000, 2000, 4000, 8000, 10_000, 10_000]);
  });
});
