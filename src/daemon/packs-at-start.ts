import { installPacksFromDir } from '../core/pack/dir.js';
import { removeAbandonedPackDirs } from '../core/pack/temp-dir.js';
import type { ServiceStarter } from './server.js';

/**
 * DOCDEX_PACKS_DIR: `docdex serve` and `docdex worker` install the packs of that folder before their workers
 * start, so a container image can ship with its docs. Nothing keeps running afterwards (null service). First,
 * with or without the folder, the unpacked packs of killed imports are removed from DOCDEX_HOME/tmp.
 */
export const packsAtStart: ServiceStarter = async (db, config, log) => {
  const removed = await removeAbandonedPackDirs(config.home).catch((error: unknown) => {
    log.warn({ err: error }, 'could not remove the folders of interrupted pack imports');
    return [];
  });
  if (removed.length > 0) log.info({ folders: removed.length }, 'removed the unpacked packs of interrupted imports');
  const dir = config.packs.dir;
  if (dir === undefined) return null;
  const outcomes = await installPacksFromDir(db.pool, dir, { home: config.home, maxBytes: config.packs.maxBytes });
  for (const o of outcomes) {
    if (o.error) log.warn({ file: o.file, code: o.error.code, hint: o.error.hint }, `pack not installed: ${o.error.message}`);
    for (const l of o.libraries ?? []) log.info({ file: o.file, library: `${l.name}@${l.version}`, status: l.status, snippets: l.snippets }, 'pack');
  }
  return null;
};
