import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { Config } from '../config.js';
import type { ConnectionInfo } from '../db/connect.js';
import { publish } from '../events/notify.js';
import { extractInProcess } from '../extract-pool/in-process.js';
import type { ExtractInput, ExtractResult } from '../extract/index.js';
import { createExtractionPool, ExtractionError } from '../extract-pool/pool.js';
import type { ExtractionPool } from '../extract-pool/pool.js';
import { createBoss } from '../queue/boss.js';
import { storePage } from '../store/pages.js';
import type { InTransactionStep } from '../store/pages.js';
import { documentStages, inTransactionSteps, runPostCommitStages, settleStages, stageUpkeep } from '../pipeline/stages.js';
import type { PostCommitStage, StageServices } from '../pipeline/stages.js';
import { contentTypeFor } from './files.js';
import { ensureUploadQueue, UPLOAD_QUEUE } from './queue.js';
import type { UploadFileJobData } from './queue.js';
import { withTransaction } from '../db/transaction.js';

/**
 * Processing upload files: extract, store through the shared page store (dedup with crawled pages of the
 * same source), and count. The file's "done" mark and the job's counters are written by an in-transaction
 * step given to the store, inside the page's own transaction: a page is never stored without being counted, or counted twice when
 * pg-boss retries a file whose worker died after the commit.
 */

interface FinishedFile {
  failed: boolean;
  snippets: number;
  path: string;
  error: string | null;
}

async function finishFile(client: pg.ClientBase, jobId: string, file: FinishedFile): Promise<void> {
  const { rows } = await client.query<{
    status: string;
    file_count: number;
    processed_files: number;
    failed_files: number;
    snippets_extracted: number;
    elapsed: number | null;
  }>(
    `UPDATE upload_jobs SET
       processed_files = processed_files + 1,
       failed_files = failed_files + $2,
       snippets_extracted = snippets_extracted + $3,
       file_errors = CASE WHEN $4::text IS NULL THEN file_errors
                          ELSE file_errors || jsonb_build_array(jsonb_build_object('path', $5::text, 'error', $4::text)) END,
       status = CASE WHEN status = 'cancelled' THEN status
                     WHEN processed_files + 1 < file_count THEN 'processing'
                     WHEN failed_files + $2 >= file_count THEN 'failed'
                     WHEN llm_enhance AND EXISTS (SELECT 1 FROM llm_pages_pending($1)) THEN 'enhancing' ELSE 'completed' END,
       error = CASE WHEN processed_files + 1 >= file_count AND failed_files + $2 >= file_count THEN 'every file failed' ELSE error END,
       started_at = COALESCE(started_at, now()),
       completed_at = CASE WHEN status = 'cancelled' THEN completed_at
                           WHEN processed_files + 1 >= file_count
                            AND NOT (llm_enhance AND failed_files + $2 < file_count AND EXISTS (SELECT 1 FROM llm_pages_pending($1)))
                           THEN now() ELSE completed_at END,
       updated_at = now()
     WHERE id = $1
     RETURNING status, file_count, processed_files, failed_files, snippets_extracted,
               extract(epoch FROM now() - started_at)::float8 AS elapsed`,
    [jobId, file.failed ? 1 : 0, file.snippets, file.error, file.path],
  );
  const job = rows[0];
  if (!job) return;
  const rate = job.elapsed && job.elapsed > 0 ? job.processed_files / job.elapsed : undefined;
  const remaining = job.file_count - job.processed_files;
  const counters = {
    file_count: job.file_count,
    processed_files: job.processed_files,
    failed_files: job.failed_files,
    snippets_extracted: job.snippets_extracted,
  };
  // NOTIFY inside the transaction is delivered on commit: followers never hear of work that rolled back.
  await publish(client, {
    event: 'upload_progress',
    jobId,
    kind: 'upload',
    state: job.status,
    counters,
    ...(rate === undefined ? {} : { rate, etaSeconds: rate > 0 ? remaining / rate : null }),
    currentUrl: file.path,
    error: file.error,
  });
  if (job.status === 'completed' || job.status === 'failed') {
    await publish(client, {
      event: 'job_complete',
      jobId,
      kind: 'upload',
      state: job.status,
      counters,
      error: job.status === 'failed' ? 'every file failed' : null,
    });
  }
}

const countUploadedPage: InTransactionStep = async (client, write) => {
  if (write.job.kind !== 'upload') return;
  const { rows } = await client.query<{ path: string }>(
    `UPDATE upload_files SET status = 'done', snippets = $3, content = NULL, updated_at = now()
      WHERE job_id = $1 AND url = $2 AND status = 'pending' RETURNING path`,
    [write.job.id, write.url, write.snippets.length],
  );
  if (rows[0]) await finishFile(client, write.job.id, { failed: false, snippets: write.snippets.length, path: rows[0].path, error: null });
};

async function recordFailure(pool: pg.Pool, fileId: number, jobId: string, error: string): Promise<void> {
  await withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ path: string }>(
      `UPDATE upload_files SET status = 'failed', error = $2, content = NULL, updated_at = now()
        WHERE id = $1 AND status = 'pending' RETURNING path`,
      [fileId, error],
    );
    if (rows[0]) await finishFile(client, jobId, { failed: true, snippets: 0, path: rows[0].path, error });
  });
}

// Connection loss, shutdown, deadlock or serialisation failure, out of resources: worth retrying the file.
function isTransient(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return false;
  return /^(08|40|53|57)/.test(code) || ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE'].includes(code);
}

/** `cancelled`: its job was cancelled, so the file stays pending for a resume. */
export type FileOutcome = 'done' | 'failed' | 'already-processed' | 'cancelled';

export interface ProcessHooks {
  /** What follows each committed page (core/pipeline/stages.ts). Default: none. */
  stages?: readonly PostCommitStage[];
  /** Lent to the stages: pg-boss and where their errors go (the pool is the one given to processUploadFile). */
  services?: Omit<StageServices, 'pool'>;
  /** Extracts the file (the upload worker's thread pool); in this thread when absent. Rejects with ExtractionError. */
  extract?: (input: ExtractInput) => Promise<ExtractResult>;
}

/** Processes one stored upload file. Idempotent: a file already done or failed is left alone. */
export async function processUploadFile(pool: pg.Pool, fileId: number, hooks: ProcessHooks = {}): Promise<FileOutcome> {
  const { rows } = await pool.query<{
    job_id: string;
    path: string;
    url: string;
    content: string | null;
    content_type: string | null;
    status: string;
    source_id: string | null;
    job_status: string;
  }>(
    `SELECT f.job_id, f.path, f.url, f.content, f.content_type, f.status, j.source_id, j.status AS job_status
       FROM upload_files f JOIN upload_jobs j ON j.id = f.job_id WHERE f.id = $1`,
    [fileId],
  );
  const file = rows[0];
  if (!file || file.status !== 'pending') return 'already-processed';
  if (file.job_status === 'cancelled') return 'cancelled';
  const started = await pool.query<{ file_count: number; processed_files: number; failed_files: number; snippets_extracted: number }>(
    `UPDATE upload_jobs SET status = 'processing', started_at = COALESCE(started_at, now()), updated_at = now()
      WHERE id = $1 AND status = 'queued' RETURNING file_count, processed_files, failed_files, snippets_extracted`,
    [file.job_id],
  );
  if (started.rows[0]) {
    await publish(pool, { event: 'upload_progress', jobId: file.job_id, kind: 'upload', state: 'processing', counters: started.rows[0], currentUrl: file.path });
  }
  if (file.source_id === null) {
    await recordFailure(pool, fileId, file.job_id, 'the upload has no source');
    return 'failed';
  }
  try {
    const input: ExtractInput = { url: file.url, contentType: file.content_type ?? contentTypeFor(file.path) ?? 'text/plain', body: file.content ?? '' };
    const { page, snippets, sections } = await (hooks.extract ?? extractInProcess)(input);
    const stages = hooks.stages ?? [];
    const job = { kind: 'upload', id: file.job_id } as const;
    const title = page.title || file.path;
    const write = {
      sourceId: file.source_id,
      url: file.url,
      title,
      markdown: page.markdown,
      contentHash: page.contentHash,
      job,
      snippets,
      sections: sections ?? [],
      flags: page.flags,
      flaggedPassage: page.flaggedPassage,
    };
    const stored = await storePage(pool, write, inTransactionSteps(stages, [countUploadedPage]));
    const services: StageServices = { pool, onError: () => undefined, ...hooks.services };
    await runPostCommitStages(stages, { job, sourceId: file.source_id, title, stored }, services);
    return 'done';
  } catch (error) {
    if (isTransient(error)) throw error;
    if (error instanceof ExtractionError) {
      await recordFailure(pool, fileId, file.job_id, error.message);
      return 'failed';
    }
    await recordFailure(pool, fileId, file.job_id, `could not be stored: ${(error as Error).message}`);
    return 'failed';
  }
}

export interface UploadWorkers {
  stop(): Promise<void>;
}

async function startLocalLlmStage(db: { pool: pg.Pool; info: ConnectionInfo }, config: Config, stages: readonly PostCommitStage[], onError?: (error: unknown) => void): Promise<UploadWorkers> {
  // Loaded only with enhancement on: the model client and tokenizer are large.
  const { startLlmWorkers } = await import('../llm/worker.js');
  return startLlmWorkers(db, config, { upkeep: stageUpkeep(stages), pollingIntervalSeconds: 0.5, sweepIntervalMs: 1000, ...(onError ? { onError } : {}) });
}

/**
 * Starts processing the upload queue in this process (the daemon, `docdex worker`, `docdex upload --wait`).
 * Reuses a started pg-boss when given; otherwise starts one and stops it with the workers.
 */
export async function startUploadWorkers(
  db: { pool: pg.Pool; info: ConnectionInfo },
  config: Config,
  options: {
    boss?: PgBoss;
    concurrency?: number;
    pollingIntervalSeconds?: number;
    onError?: (error: unknown) => void;
    /** Worker threads that extract files. Default: a pool of these workers' own (EXTRACT_THREADS), closed with them. */
    extraction?: ExtractionPool;
    /** What follows each committed file (core/pipeline/stages.ts). Default: documentStages(config). */
    stages?: readonly PostCommitStage[];
    /** Also run the LLM stage here (`upload --wait`), so a job started with enhancement on gets through enhancing. */
    llmStage?: boolean;
  } = {},
): Promise<UploadWorkers> {
  const stages = options.stages ?? documentStages(config);
  const llm = options.llmStage && config.llm.enabled ? await startLocalLlmStage(db, config, stages, options.onError) : null;
  // Uploaded files are untrusted: their extraction runs in worker threads with a time budget, off this thread.
  const extraction = options.extraction ?? createExtractionPool(config.extract);
  const own = options.boss === undefined;
  const boss = options.boss ?? createBoss(db.info, { max: 2, instanceName: 'docdex-upload-worker' });
  if (own) {
    boss.on('error', () => undefined);
    await boss.start();
  }
  await ensureUploadQueue(boss);
  const services = { boss, onError: (error: unknown) => options.onError?.(error) };
  await boss.work<UploadFileJobData>(
    UPLOAD_QUEUE,
    // Two cores: more parallel files only contend for the CPU the extractor needs.
    { batchSize: 1, localConcurrency: options.concurrency ?? 2, pollingIntervalSeconds: options.pollingIntervalSeconds ?? 1 },
    async (jobs) => {
      for (const job of jobs) {
        await processUploadFile(db.pool, job.data.fileId, { stages, services, extract: (input) => extraction.extract(input) });
      }
    },
  );
  return {
    async stop() {
      await boss.offWork(UPLOAD_QUEUE).catch(() => undefined);
      if (own) await boss.stop({ graceful: true, close: true, timeout: 10_000 }).catch(() => undefined);
      if (options.extraction === undefined) await extraction.close();
      await llm?.stop();
      await settleStages(stages, db.pool);
    },
  };
}
