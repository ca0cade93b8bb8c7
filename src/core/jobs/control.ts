import type pg from 'pg';
import type { Config } from '../config.js';
import { cancelCrawl, resumeCrawl } from '../crawl/jobs.js';
import type { CrawlJob } from '../crawl/jobs.js';
import type { ConnectionInfo } from '../db/connect.js';
import type { Provenance } from '../net/provenance.js';
import { cancelUpload, resumeUpload } from '../upload/control.js';
import type { UploadJob } from '../upload/job-rows.js';
import { resolveJob } from './jobs.js';

/**
 * Cancel and resume for a job of either kind (`docdex jobs cancel|resume`). Apart from jobs.ts, which only
 * reads: a resume queues the job's work again on pg-boss, and a read command (`jobs list`, `crawl status`)
 * loads none of that.
 */

export type JobChange = { kind: 'crawl'; job: CrawlJob } | { kind: 'upload'; job: UploadJob };

/** Cancels a queued or running job of either kind; what it stored stays searchable and it can be resumed. */
export async function cancelJob(pool: pg.Pool, ref: string): Promise<JobChange> {
  const job = await resolveJob(pool, ref);
  return job.kind === 'crawl' ? { kind: 'crawl', job: await cancelCrawl(pool, job.id) } : { kind: 'upload', job: await cancelUpload(pool, job.id) };
}

/**
 * Resumes a cancelled or failed job of either kind: a crawl from its frontier, an upload with its files not yet
 * processed. `askedBy` is who asks (net/provenance.ts): the local user's resume keeps the loopback permission of
 * start URLs they typed; REST never widens it.
 */
export async function resumeJob(db: { pool: pg.Pool; info: ConnectionInfo }, config: Config, ref: string, options: { askedBy?: Provenance } = {}): Promise<JobChange> {
  const job = await resolveJob(db.pool, ref);
  if (job.kind === 'crawl') return { kind: 'crawl', job: await resumeCrawl(db, config, job.id, options) };
  return { kind: 'upload', job: await resumeUpload(db, job.id) };
}
