import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/core/db/connect.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

describe('the pool docdex connects with', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it('survives a checked-out connection dying under it: the query fails, the process does not', async () => {
    // pg emits 'error' on a client whose connection dies as well as rejecting its query; the pool listens only
    // while a client is idle, so a checked-out one had nobody listening and the emit ended `docdex serve` when
    // its embedded PostgreSQL was killed mid-search.
    const pool = createPool(db.info, { max: 2, applicationName: 'docdex-connect-test' });
    try {
      const client = await pool.connect();
      const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      // Someone listens while the client is checked out (an unheard 'error' event throws in the socket's callback).
      expect(client.listenerCount('error')).toBeGreaterThan(0);
      await db.pool.query('SELECT pg_terminate_backend($1)', [pid]);
      await expect(client.query('SELECT 1')).rejects.toThrow();
      client.release(true);
      // The pool goes on with a fresh connection.
      expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one).toBe(1);
    } finally {
      await pool.end();
    }
  });
});
