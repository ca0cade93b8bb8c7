import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import lockfile from 'proper-lockfile';

// An import unpacks the whole pack (up to DOCDEX_PACK_MAX_MB) into DOCDEX_HOME/tmp/pack-<random> and removes it
// when it ends. A killed import cannot remove its folder, so every import, and every `docdex serve` and `docdex
// worker` at start, first removes the folders no import is using. Which ones are in use says a lock beside each
// (`pack-<random>.lock`, proper-lockfile: a directory whose time the holder renews every UPDATE_MS): a folder is
// abandoned once its lock is gone or has not been renewed for STALE_MS, so a running import in another process,
// even one on another machine or in another container sharing the folder, keeps its folder, and a dead one's is
// removed at most STALE_MS after it died. Process ids would be quicker but lie across pid namespaces and reuse.

const PREFIX = 'pack-';
const LOCK_SUFFIX = '.lock';
const STALE_MS = 10_000;
const UPDATE_MS = 2_000;

export interface PackTempDir {
  /** The private, empty folder the pack is unpacked into. */
  dir: string;
  /** Removes the folder, then gives up its lock. */
  remove(): Promise<void>;
}

function lockOptions(dir: string): Parameters<typeof lockfile.lock>[1] {
  return {
    lockfilePath: dir + LOCK_SUFFIX,
    realpath: false,
    stale: STALE_MS,
    update: UPDATE_MS,
    retries: 0,
    // Renewing failed or came too late (this process stalled past STALE_MS): another import may now take the
    // folder for abandoned and remove it, which fails this import on its next read, cleanly. proper-lockfile's
    // default would throw from a timer and end the process.
    onCompromised: () => undefined,
  };
}

/** Takes the lock of `dir`, or returns undefined when a live holder has it. */
async function tryLock(dir: string): Promise<(() => Promise<void>) | undefined> {
  try {
    return await lockfile.lock(dir, lockOptions(dir));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOCKED') return undefined;
    throw error;
  }
}

async function modifiedWithin(file: string, ms: number): Promise<boolean> {
  const info = await stat(file).catch(() => undefined);
  return info !== undefined && Date.now() - info.mtimeMs < ms;
}

/**
 * Removes the pack folders (and stray locks) under `home`/tmp that no running import holds. A folder without
 * a lock that changed within STALE_MS is left too: an import of a docdex from before these locks may be using it.
 */
export async function removeAbandonedPackDirs(home: string): Promise<string[]> {
  const tmp = path.join(home, 'tmp');
  const names = await readdir(tmp).catch(() => [] as string[]);
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith(PREFIX)) continue;
    const dir = path.join(tmp, name.endsWith(LOCK_SUFFIX) ? name.slice(0, -LOCK_SUFFIX.length) : name);
    // A lock with its folder is handled with the folder; a stray one (an import killed between taking its lock
    // and making its folder, or between removing it and unlocking) is taken and given up, which removes it.
    if (name.endsWith(LOCK_SUFFIX) && names.includes(path.basename(dir))) continue;
    const locked = names.includes(name + LOCK_SUFFIX);
    if (!name.endsWith(LOCK_SUFFIX) && !locked && (await modifiedWithin(dir, STALE_MS))) continue;
    const release = await tryLock(dir);
    if (release === undefined) continue;
    try {
      if (!name.endsWith(LOCK_SUFFIX)) {
        await rm(dir, { recursive: true, force: true });
        removed.push(dir);
      }
    } finally {
      await release().catch(() => undefined);
    }
  }
  return removed;
}

/**
 * A new private folder under `home`/tmp for one import, after the abandoned ones are removed. The lock is taken
 * before the folder exists, so no other process ever sees the folder unlocked while this import lives.
 */
export async function createPackTempDir(home: string): Promise<PackTempDir> {
  const tmp = path.join(home, 'tmp');
  await mkdir(tmp, { recursive: true, mode: 0o700 });
  await removeAbandonedPackDirs(home);
  for (;;) {
    const dir = path.join(tmp, PREFIX + randomBytes(8).toString('hex'));
    const release = await tryLock(dir);
    if (release === undefined) continue;
    try {
      await mkdir(dir, { mode: 0o700 });
    } catch (error) {
      await release();
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw error;
    }
    return {
      dir,
      remove: async () => {
        try {
          await rm(dir, { recursive: true, force: true });
        } finally {
          await release().catch(() => undefined);
        }
      },
    };
  }
}
