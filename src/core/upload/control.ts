import type pg from 'pg';
import { withTransaction } from '../db/transaction.js';
import { ConflictError } from '../errors.js';
import { publish } from '../events/notify.js';
import { dropQueuedEnhancements } from '../llm/job-stage.js';
import { deleteQueuedJobsWithData } from '../queue/jobs-table.js';
import { getUploadJob } from './job-rows.js';
import type { UploadJob } from './job-rows.js';
import { queueFiles, UPLOAD_QUEUE, withBoss } from './queue.js';
import type { QueueDb } from './queue.js';

/**
 * Stopping and restarting an upload job (an upload, a git checkout, a package README), as crawls are stopped
 * and resumed (migration 034). A cancelled job's files that were not processed stay pending with their
 * content; their queued work is dropped, and a worker that meets one leaves it alone (worker.ts). A resume
 * queues exactly those files again: processed files are never processed twice.
 */

function counters(job: UploadJob): Record<string, number> {
  return { file_count: job.file_count, processed_files: job.processed_files, failed_files: job.failed_files, snippets_extracted: job.snippets_extracted };
}

/** Cancels a queued, processing or enhancing upload job; what it stored stays searchable. */
export async function cancelUpload(pool: pg.Pool, id: string): Promise<UploadJob> {
  const job = await getUploadJob(pool, id);
  const { rowCount } = await pool.query(
    `UPDATE upload_jobs SET status = 'cancelled', completed_at = now(), updated_at = now()
      WHERE id = $1 AND status IN ('queued', 'processing', 'enhancing')`,
    [job.id],
  );
  if (rowCount === 0) {
    throw new ConflictError(`Upload job ${job.id} is already ${job.status}.`, {
      hint: job.status === 'completed' ? 'Nothing to cancel.' : `Resume it with \`docdex jobs resume ${job.id}\`.`,
    });
  }
  await deleteQueuedJobsWithData(pool, UPLOAD_QUEUE, 'uploadJobId', job.id);
  await dropQueuedEnhancements(pool, job.id);
  const cancelled = await getUploadJob(pool, job.id);
  await publish(pool, { event: 'job_complete', jobId: job.id, kind: 'upload', state: 'cancelled', counters: counters(cancelled), error: null });
  return cancelled;
}

/** Queues a cancelled or failed upload job's unprocessed files again. */
export async function resumeUpload(db: QueueDb, id: string): Promise<UploadJob> {
  const job = await getUploadJob(db.pool, id);
  if (job.status !== 'cancelled' && job.status !== 'failed') {
    throw new ConflictError(`Upload job ${job.id} is ${job.status}: there is nothing to resume.`, {
      hint: job.status === 'completed' ? 'Upload the files again to index them anew.' : `Follow it with \`docdex jobs status ${job.id} --wait\`.`,
    });
  }
  await withBoss(db, (boss) =>
    withTransaction(db.pool, async (client) => {
      const pending = await client.query<{ id: number }>(`SELECT id FROM upload_files WHERE job_id = $1 AND status = 'pending' ORDER BY id`, [job.id]);
      if (pending.rows.length === 0) {
        throw new ConflictError(`Upload job ${job.id} has no file left to process: each one was processed or refused.`, {
          hint: 'Upload the failed files again (`docdex upload`), or re-add the library with --refresh.',
        });
      }
      await client.query(
        `UPDATE upload_jobs SET status = CASE WHEN processed_files = 0 THEN 'queued' ELSE 'processing' END, completed_at = NULL, error = NULL, updated_at = now()
          WHERE id = $1 AND status IN ('cancelled', 'failed')`,
        [job.id],
      );
      await queueFiles(
        boss,
        client,
        job.id,
        pending.rows.map((r) => Number(r.id)),
      );
    }),
  );
  return getUploadJob(db.pool, job.id);
}
