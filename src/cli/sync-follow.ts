import type { Config } from '../core/config.js';
import type { Database } from '../core/db/connect.js';
import { listProjectLibraries } from '../core/project/store.js';
import type { ProjectLibraryRow } from '../core/project/store.js';
import type { SyncResult } from '../core/project/sync.js';
import { followAddedJobs } from './add-follow.js';
import type { FollowOptions } from './crawl-follow.js';

/**
 * `docdex sync` (waiting): every queued job runs here as `docdex add --wait` runs them, then the project's
 * libraries are read again, so the exit code reflects what the index holds once the jobs are done.
 */
export async function followSync(db: Database, config: Config, result: SyncResult, options: FollowOptions): Promise<ProjectLibraryRow[]> {
  if (result.jobs.length > 0) await followAddedJobs(db, config, result.added, options);
  return result.project_id === null ? [] : listProjectLibraries(db.pool, result.project_id);
}
