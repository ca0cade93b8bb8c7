import { installPacksFromDir } from '../core/pack/dir.js';
import type { ServiceStarter } from './server.js';

/**
 * DOCDEX_PACKS_DIR: `docdex serve` and `docdex worker` install the packs of that folder before their workers
 * start, so a container image can ship with its docs. Nothing keeps running afterwards (null service).
 */
export const packsAtStart: ServiceStarter = async (db, config, log) => {
  const dir = config.packs.dir;
  if (dir === undefined) return null;
  const outcomes = await installPacksFromDir(db.pool, dir, { home: config.home, maxBytes: config.packs.maxBytes });
  for (const o of outcomes) {
    if (o.error) log.warn({ file: o.file, code: o.error.code, hint: o.error.hint }, `pack not installed: ${o.error.message}`);
    for (const l of o.libraries ?? []) log.info({ file: o.file, library: `${l.name}@${l.version}`, status: l.status, snippets: l.snippets }, 'pack');
  }
  return null;
};
