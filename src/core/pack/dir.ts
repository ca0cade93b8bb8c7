import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type pg from 'pg';
import { UserError, isUserError } from '../errors.js';
import type { InstalledLibrary } from './install.js';
import { importPackFrom } from './location.js';

export interface DirPackOutcome {
  file: string;
  libraries?: InstalledLibrary[];
  error?: UserError;
}

/** Serialises installs from the packs folder across processes: serve and worker may start together. */
const PACKS_LOCK = "hashtext('docdex.packs_dir')";

/**
 * Installs every `*.docdex` file of `dir` (DOCDEX_PACKS_DIR), in name order, as `docdex import` would
 * without --replace: an identical installed version is a no-op, so a container can do this at every start.
 * A pack that is refused (invalid, or a different version already installed) is reported in its outcome
 * and the others still install; anything that is not a UserError (the database gone) is thrown.
 */
export async function installPacksFromDir(pool: pg.Pool, dir: string, options: { home: string; maxBytes: number }): Promise<DirPackOutcome[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch((error: unknown) => {
    throw new UserError(`DOCDEX_PACKS_DIR (${dir}) cannot be read: ${(error as Error).message}.`, {
      code: 'invalid_config',
      hint: 'Point DOCDEX_PACKS_DIR at a folder of .docdex files, or unset it.',
    });
  });
  const names = entries.filter((e) => e.isFile() && e.name.endsWith('.docdex')).map((e) => e.name);
  const lock = await pool.connect();
  try {
    await lock.query(`SELECT pg_advisory_lock(${PACKS_LOCK})`);
    const outcomes: DirPackOutcome[] = [];
    for (const name of names.sort()) {
      const file = path.join(dir, name);
      try {
        const summary = await importPackFrom(pool, file, { ...options, outbound: { allow: [], allowLoopback: false } });
        outcomes.push({ file, libraries: summary.libraries });
      } catch (error) {
        if (!isUserError(error)) throw error;
        outcomes.push({ file, error });
      }
    }
    return outcomes;
  } finally {
    await lock.query(`SELECT pg_advisory_unlock(${PACKS_LOCK})`).catch(() => undefined);
    lock.release();
  }
}
