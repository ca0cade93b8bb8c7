import type pg from 'pg';

/**
 * Runs `body` while `table` is locked in ACCESS EXCLUSIVE mode on a connection of `pool`, so that the statements
 * of the code under test pile up inside PostgreSQL, where backendsWaitingOnLocks counts them. `release` commits
 * early; the lock goes at the end in any case.
 */
export async function withTableLocked<T>(pool: pg.Pool, table: string, body: (release: () => Promise<void>) => Promise<T>): Promise<T> {
  const locker = await pool.connect();
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await locker.query('COMMIT');
  };
  try {
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    return await body(release);
  } finally {
    await release().catch(() => undefined);
    locker.release();
  }
}

/** Backends of `applicationName` waiting on a lock. */
export async function backendsWaitingOnLocks(pool: pg.Pool, applicationName: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`, [applicationName]);
  return rows[0]!.n;
}

/** Waits (up to 5 s) until at least `n` backends of `applicationName` wait on a lock. */
export async function untilWaitingOnLocks(pool: pg.Pool, applicationName: string, n: number): Promise<void> {
  for (let i = 0; i < 200 && (await backendsWaitingOnLocks(pool, applicationName)) < n; i++) await new Promise((r) => setTimeout(r, 25));
}
