import type pg from 'pg';
import { NotFoundError, ValidationError } from '../errors.js';
import { subscribe } from '../events/notify.js';
import type { JobEvent } from '../events/notify.js';
import type { UnresolvedInclude } from '../extract/includes.js';
import { LLM_PROGRESS_LATERAL } from '../llm/job-stage.js';
import { isUuid } from '../sources/resolve.js';
import type { FileProblem, SkippedFile } from './files.js';
import type { QueueDb } from './queue.js';

/**
 * Upload jobs as rows to read: a job by id, the newest jobs, and waiting for one to finish. Apart from jobs.ts,
 * which creates them (reads files, resolves includes, queues on pg-boss), so that what only reads a job
 * (`docdex jobs`, `crawl status`, the dashboard, the REST and MCP status calls) loads none of that.
 */

export type UploadStatus = 'queued' | 'processing' | 'enhancing' | 'completed' | 'failed' | 'cancelled';

export interface UploadJob {
  id: string;
  name: string;
  source_type: string;
  source_id: string | null;
  source_name: string | null;
  version: string | null;
  status: UploadStatus;
  /** Files of the job, including those rejected on intake (binary, too large, not UTF-8). */
  file_count: number;
  /** Files finished, successfully or not. */
  processed_files: number;
  failed_files: number;
  snippets_extracted: number;
  file_errors: FileProblem[];
  /** Files of unsupported formats found in uploaded directories, not part of the job. */
  skipped_files: SkippedFile[];
  /** Include directives of the job's files replaced by what they include, from the same commit or folder. */
  includes_resolved: number;
  /** Include directives kept as written (outside the repository, not found, a region the file lacks ...). */
  includes_unresolved: number;
  /** The first of those: the file, the directive and why. */
  unresolved_includes: UnresolvedInclude[];
  error: string | null;
  /** Started with LLM enhancement on, and how far the LLM stage has got (see CrawlJob). */
  llm_enhance: boolean;
  llm_pages_total: number;
  llm_pages_done: number;
  llm_pages_failed: number;
  llm_snippets_enhanced: number;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  updated_at: string;
}

const JOB_COLUMNS = `j.id, j.name, j.source_type, j.source_id, src.name AS source_name, src.version, j.status, j.file_count,
  j.processed_files, j.failed_files, j.snippets_extracted, j.file_errors, j.skipped_files, j.includes_resolved,
  j.includes_unresolved, j.unresolved_includes, j.error, j.created_at,
  j.started_at, j.completed_at, j.updated_at, j.llm_enhance, llm.llm_pages_total, llm.llm_pages_done, llm.llm_pages_failed, llm.llm_snippets_enhanced`;

export async function getUploadJob(pool: pg.Pool | pg.ClientBase, id: string): Promise<UploadJob> {
  if (!isUuid(id)) throw new ValidationError(`Upload job id must be a UUID, got ${JSON.stringify(id)}.`);
  const { rows } = await pool.query<UploadJob>(`SELECT ${JOB_COLUMNS} FROM upload_jobs j LEFT JOIN sources src ON src.id = j.source_id ${LLM_PROGRESS_LATERAL} WHERE j.id = $1`, [id]);
  if (!rows[0]) throw new NotFoundError(`Upload job ${id} not found.`);
  return rows[0];
}

/** Whether `id` names an upload job (add_library's git and README jobs are upload jobs). */
export async function isUploadJob(pool: pg.Pool | pg.ClientBase, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const { rows } = await pool.query('SELECT 1 FROM upload_jobs WHERE id = $1', [id]);
  return rows.length > 0;
}

export interface ListUploadJobsOptions {
  /** Only jobs in these states; every state when absent. */
  status?: readonly UploadStatus[];
  limit: number;
}

/** Upload jobs, newest first. */
export async function listUploadJobs(pool: pg.Pool | pg.ClientBase, options: ListUploadJobsOptions): Promise<UploadJob[]> {
  const limit = Math.max(1, Math.min(500, Math.floor(options.limit)));
  const { rows } = await pool.query<UploadJob>(
    `SELECT ${JOB_COLUMNS} FROM upload_jobs j LEFT JOIN sources src ON src.id = j.source_id ${LLM_PROGRESS_LATERAL}
      WHERE ($1::text[] IS NULL OR j.status = ANY($1::text[]))
      ORDER BY j.created_at DESC, j.id
      LIMIT $2`,
    [options.status === undefined ? null : [...options.status], limit],
  );
  return rows;
}

/** Enhancing is not finished: the job completes once the LLM stage is through with its pages. */
function isFinished(job: UploadJob): boolean {
  return job.status === 'completed' || job.status === 'failed' || job.status === 'cancelled';
}

/**
 * Resolves with the final job once it is completed, failed or cancelled. Progress comes from NOTIFY events (any worker,
 * any machine); the job row is also polled, because a notification sent while the listener was connecting
 * is lost.
 */
export async function waitForUpload(
  db: { pool: pg.Pool; info: QueueDb['info'] },
  id: string,
  onProgress?: (event: JobEvent) => void,
  options: { pollMs?: number; signal?: AbortSignal } = {},
): Promise<UploadJob> {
  const initial = await getUploadJob(db.pool, id);
  if (isFinished(initial)) return initial;
  if (options.signal?.aborted) throw new Error('aborted');
  return new Promise<UploadJob>((resolve, reject) => {
    let done = false;
    let subscription: Awaited<ReturnType<typeof subscribe>> | undefined;
    const finish = (error: unknown, job?: UploadJob) => {
      if (done) return;
      done = true;
      clearInterval(timer);
      options.signal?.removeEventListener('abort', onAbort);
      void subscription?.close();
      if (job) resolve(job);
      else reject(error instanceof Error ? error : new Error(String(error)));
    };
    const check = () => {
      getUploadJob(db.pool, id).then(
        (job) => {
          if (isFinished(job)) finish(undefined, job);
        },
        (error: unknown) => finish(error),
      );
    };
    const timer = setInterval(check, options.pollMs ?? 2000);
    const onAbort = () => finish(new Error('aborted'));
    options.signal?.addEventListener('abort', onAbort);
    subscribe(
      db.info,
      (event) => {
        if (event.jobId !== id || event.kind !== 'upload') return;
        onProgress?.(event);
        if (event.event === 'job_complete') check();
      },
      { channels: ['upload_progress', 'job_complete'], onError: () => undefined },
    ).then(
      (s) => {
        subscription = s;
        if (done) void s.close();
        else check();
      },
      () => undefined,
    );
  });
}
