import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { z } from 'zod';
import { NotFoundError, ValidationError } from '../errors.js';
import { withTransaction } from '../db/transaction.js';

/**
 * Per-host credentials for git over HTTPS and the hosting CLI, stored in the database only. Each has a
 * host, an optional username, a token, and optionally the repo it is bound to; one per user can be the
 * default (defaultGitCredentialId). Tokens never leave through a listing or an API response; manager-side
 * code (the sandbox's credential forwarding, the hosting CLI environment) reads them with
 * `loadGitCredentials`.
 */

const HOST = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?$/;
export const DEFAULT_CREDENTIAL_USER = 'default';

/** `https://GitHub.com/` → `github.com`; undefined when it is not a host name (with an optional port). */
export function normaliseHost(input: string): string | undefined {
  const host = input
    .trim()
    .toLowerCase()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
    .replace(/\/.*$/, '');
  return HOST.test(host) ? host : undefined;
}

export const GitCredentialInput = z
  .object({
    host: z.string().min(1).max(300).describe('Host name, optionally with a port (a URL is reduced to its host)'),
    username: z.string().min(1).max(256).optional().describe('HTTPS user; hosting services accept a fixed name such as x-access-token'),
    token: z.string().min(1).max(4096),
    repoId: z.number().int().positive().optional().describe('Bind the credential to this repo'),
    label: z.string().max(200).optional(),
    isDefault: z.boolean().optional().describe('Make it the default credential (defaultGitCredentialId)'),
  })
  .strict();
export type GitCredentialInput = z.infer<typeof GitCredentialInput>;

export const GitCredentialRecord = z
  .object({
    id: z.string(),
    host: z.string(),
    username: z.string().nullable(),
    repoId: z.number().nullable(),
    repoName: z.string().nullable(),
    label: z.string().nullable(),
    isDefault: z.boolean(),
    hasToken: z.literal(true).describe('The token itself is never returned'),
    createdAt: z.number(),
    updatedAt: z.number(),
  })
  .meta({ id: 'GitCredential' });
export type GitCredentialRecord = z.infer<typeof GitCredentialRecord>;

interface Row {
  id: string;
  host: string;
  username: string | null;
  token: string;
  repo_id: number | null;
  repo_name: string | null;
  label: string | null;
  is_default: boolean;
  created_at: Date;
  updated_at: Date;
}

const SELECT = `SELECT c.*, r.local_path AS repo_name FROM agent_git_credentials c LEFT JOIN agent_repos r ON r.id = c.repo_id`;

function toRecord(row: Row): GitCredentialRecord {
  return {
    id: row.id,
    host: row.host,
    username: row.username,
    repoId: row.repo_id,
    repoName: row.repo_name,
    label: row.label,
    isDefault: row.is_default,
    hasToken: true,
    createdAt: row.created_at.getTime(),
    updatedAt: row.updated_at.getTime(),
  };
}

export async function addGitCredential(pool: pg.Pool, input: GitCredentialInput, userId = DEFAULT_CREDENTIAL_USER): Promise<GitCredentialRecord> {
  const checked = GitCredentialInput.safeParse(input);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    throw new ValidationError(`Invalid git credential ${issue.path.join('.') || 'input'}: ${issue.message}.`, {
      hint: 'A credential needs a host and a non-empty token (at most 4096 characters, no whitespace).',
      details: checked.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  const parsed = checked.data;
  const host = normaliseHost(parsed.host);
  if (host === undefined) throw new ValidationError(`"${parsed.host}" is not a host name.`, { hint: 'Give a host such as github.com or git.example.com:8443.' });
  if (/\s/.test(parsed.token))
    throw new ValidationError('The token must not contain whitespace.', { hint: 'Pipe the token alone, e.g. printf %s "$TOKEN" | docdex manager git-credentials add --host HOST --token-stdin' });
  if (parsed.repoId !== undefined) {
    const { rowCount } = await pool.query('SELECT 1 FROM agent_repos WHERE id = $1', [parsed.repoId]);
    if (rowCount === 0) throw new NotFoundError(`No repo with id ${parsed.repoId}.`, { hint: 'Run `docdex repos list` to see the repos.' });
  }
  const id = `gc_${randomBytes(12).toString('base64url')}`;
  await withTransaction(pool, async (client) => {
    if (parsed.isDefault) await client.query('UPDATE agent_git_credentials SET is_default = false, updated_at = now() WHERE user_id = $1 AND is_default', [userId]);
    await client.query(`INSERT INTO agent_git_credentials (id, user_id, host, username, token, repo_id, label, is_default) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
      id,
      userId,
      host,
      parsed.username ?? null,
      parsed.token,
      parsed.repoId ?? null,
      parsed.label ?? null,
      parsed.isDefault ?? false,
    ]);
  });
  return getGitCredential(pool, id, userId);
}

export async function getGitCredential(pool: pg.Pool, id: string, userId = DEFAULT_CREDENTIAL_USER): Promise<GitCredentialRecord> {
  const { rows } = await pool.query<Row>(`${SELECT} WHERE c.id = $1 AND c.user_id = $2`, [id, userId]);
  if (!rows[0]) throw new NotFoundError(`No git credential ${id}.`, { hint: 'Run `docdex manager git-credentials list` to see them.' });
  return toRecord(rows[0]);
}

export async function listGitCredentials(pool: pg.Pool, userId = DEFAULT_CREDENTIAL_USER): Promise<GitCredentialRecord[]> {
  const { rows } = await pool.query<Row>(`${SELECT} WHERE c.user_id = $1 ORDER BY c.host, c.created_at, c.id`, [userId]);
  return rows.map(toRecord);
}

export async function removeGitCredential(pool: pg.Pool, id: string, userId = DEFAULT_CREDENTIAL_USER): Promise<GitCredentialRecord> {
  const existing = await getGitCredential(pool, id, userId);
  await pool.query('DELETE FROM agent_git_credentials WHERE id = $1 AND user_id = $2', [id, userId]);
  return existing;
}

/** Makes `id` the default credential, or clears the default with null. */
export async function setDefaultGitCredential(pool: pg.Pool, id: string | null, userId = DEFAULT_CREDENTIAL_USER): Promise<GitCredentialRecord | null> {
  if (id !== null) await getGitCredential(pool, id, userId);
  // Two statements: the one-default index is checked row by row, so swapping in one UPDATE can collide.
  await withTransaction(pool, async (client) => {
    await client.query('UPDATE agent_git_credentials SET is_default = false, updated_at = now() WHERE user_id = $1 AND is_default', [userId]);
    if (id !== null) await client.query('UPDATE agent_git_credentials SET is_default = true, updated_at = now() WHERE user_id = $1 AND id = $2', [userId, id]);
  });
  return id === null ? null : getGitCredential(pool, id, userId);
}

/** A stored credential with its token: for manager-side code only, never for a response. */
export interface GitCredentialSecret {
  id: string;
  host: string;
  username?: string;
  token: string;
  repoId?: number;
}

export interface GitCredentialSet {
  gitCredentials: GitCredentialSecret[];
  defaultGitCredentialId?: string;
}

/** Every credential of the user with its token, plus the default's id (the sandbox forwarding's input). */
export async function loadGitCredentials(pool: pg.Pool, userId = DEFAULT_CREDENTIAL_USER): Promise<GitCredentialSet> {
  const { rows } = await pool.query<Row>(`${SELECT} WHERE c.user_id = $1 ORDER BY c.created_at, c.id`, [userId]);
  const gitCredentials = rows.map((r) => ({
    id: r.id,
    host: r.host,
    token: r.token,
    ...(r.username === null ? {} : { username: r.username }),
    ...(r.repo_id === null ? {} : { repoId: r.repo_id }),
  }));
  const def = rows.find((r) => r.is_default)?.id;
  return { gitCredentials, ...(def === undefined ? {} : { defaultGitCredentialId: def }) };
}

/**
 * The one credential for a host: the one bound to the repo wins, then the default, then the oldest
 * unbound one. A credential bound to another repo is never used.
 */
export function pickCredential(set: GitCredentialSet, host: string, repoId?: number): GitCredentialSecret | undefined {
  const forHost = set.gitCredentials.filter((c) => c.host === host);
  if (repoId !== undefined) {
    const bound = forHost.find((c) => c.repoId === repoId);
    if (bound) return bound;
  }
  const unbound = forHost.filter((c) => c.repoId === undefined);
  return unbound.find((c) => c.id === set.defaultGitCredentialId) ?? unbound[0];
}

/** The hosting CLI (GitHub CLI): its host and the two variables it reads its token from. */
export const HOSTING_CLI = { host: 'github.com', tokenVariables: ['GH_TOKEN', 'GITHUB_TOKEN'] as const };

export const CliEnvResponse = z
  .object({
    host: z.string().describe('The host whose credential feeds the hosting CLI'),
    credentialId: z.string().nullable(),
    env: z.record(z.string(), z.string()).describe('Variables to set for the hosting CLI; empty when no credential is configured'),
    variables: z.array(z.string()).describe('Every variable this environment manages (set or not)'),
  })
  .meta({ id: 'HostingCliEnv' });
export type CliEnvResponse = z.infer<typeof CliEnvResponse>;

/** The hosting CLI's environment: its token variables from the github.com credential (repo-bound first). */
export async function hostingCliEnv(pool: pg.Pool, options: { repoId?: number; userId?: string } = {}): Promise<CliEnvResponse> {
  const set = await loadGitCredentials(pool, options.userId ?? DEFAULT_CREDENTIAL_USER);
  const credential = pickCredential(set, HOSTING_CLI.host, options.repoId);
  const env: Record<string, string> = {};
  if (credential) for (const name of HOSTING_CLI.tokenVariables) env[name] = credential.token;
  return { host: HOSTING_CLI.host, credentialId: credential?.id ?? null, env, variables: [...HOSTING_CLI.tokenVariables] };
}
