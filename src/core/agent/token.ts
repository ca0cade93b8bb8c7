import { randomBytes } from 'node:crypto';
import type pg from 'pg';

/** The bearer token of /api/internal: one per database, so every daemon on it accepts the same token. */
export interface ManagerToken {
  token: string;
  createdAt: number;
  rotatedAt: number | null;
}

interface TokenRow {
  token: string;
  created_at: Date;
  rotated_at: Date | null;
}

const toToken = (row: TokenRow): ManagerToken => ({ token: row.token, createdAt: row.created_at.getTime(), rotatedAt: row.rotated_at?.getTime() ?? null });

function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Returns the token, creating it on first use. Concurrent first starts agree on one token. */
export async function ensureManagerToken(pool: pg.Pool): Promise<ManagerToken> {
  await pool.query('INSERT INTO agent_manager_token (singleton, token) VALUES (true, $1) ON CONFLICT (singleton) DO NOTHING', [newToken()]);
  const { rows } = await pool.query<TokenRow>('SELECT token, created_at, rotated_at FROM agent_manager_token WHERE singleton');
  return toToken(rows[0]!);
}

/** The current token, or undefined before the first start. */
export async function readManagerToken(pool: pg.Pool): Promise<string | undefined> {
  const { rows } = await pool.query<{ token: string }>('SELECT token FROM agent_manager_token WHERE singleton');
  return rows[0]?.token;
}

/** Replaces the token; the old one stops working at once, in every daemon on this database. */
export async function rotateManagerToken(pool: pg.Pool): Promise<ManagerToken> {
  const { rows } = await pool.query<TokenRow>(
    `INSERT INTO agent_manager_token (singleton, token) VALUES (true, $1)
     ON CONFLICT (singleton) DO UPDATE SET token = excluded.token, rotated_at = now()
     RETURNING token, created_at, rotated_at`,
    [newToken()],
  );
  return toToken(rows[0]!);
}
