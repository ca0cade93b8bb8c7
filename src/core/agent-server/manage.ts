import { findRepo } from '../agent/repos.js';
import { workspaceLayout } from '../agent/workspace.js';
import type { Config } from '../config.js';
import { openDatabase } from '../db/connect.js';
import type { Database } from '../db/connect.js';
import { addGitCredential, listGitCredentials, removeGitCredential } from './git-credentials.js';
import type { GitCredentialRecord } from './git-credentials.js';

/** One function per `docdex manager git-credentials` command: open the database, do the job, close it. */

async function withDatabase<T>(config: Config, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase(config, { max: 2, applicationName: 'docdex-git-credentials' });
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

export interface AddCredentialInput {
  host: string;
  token: string;
  username?: string;
  /** Repo id or name. */
  repo?: string;
  label?: string;
  isDefault?: boolean;
}

export async function addCredential(config: Config, input: AddCredentialInput): Promise<GitCredentialRecord> {
  return withDatabase(config, async (db) => {
    const repoId = input.repo === undefined ? undefined : (await findRepo({ pool: db.pool, workspace: workspaceLayout(config) }, input.repo)).id;
    return addGitCredential(db.pool, {
      host: input.host,
      token: input.token,
      ...(input.username === undefined ? {} : { username: input.username }),
      ...(repoId === undefined ? {} : { repoId }),
      ...(input.label === undefined ? {} : { label: input.label }),
      ...(input.isDefault === undefined ? {} : { isDefault: input.isDefault }),
    });
  });
}

export async function listCredentials(config: Config): Promise<GitCredentialRecord[]> {
  return withDatabase(config, (db) => listGitCredentials(db.pool));
}

export async function removeCredential(config: Config, id: string): Promise<GitCredentialRecord> {
  return withDatabase(config, (db) => removeGitCredential(db.pool, id));
}
