import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { ConnectionInfo } from '../db/connect.js';
import { createBoss } from '../queue/boss.js';

/** The pg-boss queue of upload work: one job per file, so any number of workers share a large upload. */
export const UPLOAD_QUEUE = 'upload-file';

export interface UploadFileJobData {
  uploadJobId: string;
  fileId: number;
}

export interface QueueDb {
  pool: pg.Pool;
  info: ConnectionInfo;
  /** A started pg-boss to reuse (the daemon's); otherwise a short-lived one is started per call. */
  boss?: PgBoss;
}

const ensured = new WeakSet<PgBoss>();

export async function ensureUploadQueue(boss: PgBoss): Promise<void> {
  if (ensured.has(boss)) return;
  // Retries cover a worker dying mid-file; a file that fails for its content is recorded, not retried.
  if (!(await boss.getQueue(UPLOAD_QUEUE))) await boss.createQueue(UPLOAD_QUEUE, { retryLimit: 3, retryDelay: 5, expireInSeconds: 900 });
  ensured.add(boss);
}

export async function withBoss<T>(db: QueueDb, fn: (boss: PgBoss) => Promise<T>): Promise<T> {
  if (db.boss) {
    await ensureUploadQueue(db.boss);
    return fn(db.boss);
  }
  const boss = createBoss(db.info, { max: 2, instanceName: 'docdex-upload' });
  boss.on('error', () => undefined);
  await boss.start();
  try {
    await ensureUploadQueue(boss);
    return await fn(boss);
  } finally {
    await boss.stop({ graceful: false, close: true });
  }
}

/** Queues file jobs inside the caller's transaction, so they exist exactly when the upload rows commit. */
export async function queueFiles(boss: PgBoss, client: pg.ClientBase, uploadJobId: string, fileIds: number[]): Promise<void> {
  if (fileIds.length === 0) return;
  const db = { executeSql: async (text: string, values?: unknown[]) => client.query(text, values) };
  await boss.insert(
    UPLOAD_QUEUE,
    fileIds.map((fileId) => ({ data: { uploadJobId, fileId } satisfies UploadFileJobData })),
    { db },
  );
}
