import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { withTransaction } from '../db/transaction.js';
import { publish } from '../events/notify.js';
import { deleteQueuedJobsInGroups, liveJobDataValues } from '../queue/jobs-table.js';
import type { LlmJobKind } from './budget.js';
import { ensureQueue, LLM_QUEUE, QUEUE_OPTIONS } from './queue.js';
import type { PageEnhancementJob } from './queue.js';
import type { IndexUpkeep } from './upkeep.js';

/**
 * The LLM stage as a stage of its job: a crawl or upload started with enhancement on reads `enhancing` once its
 * pages are stored and the model still has some to see (migration 022: llm_pages_pending), and `completed` only
 * when every one of them has been through the stage, enhanced or given up on (llm_pages_done). A page the model
 * could not enhance (an endpoint that keeps failing, an unusable answer, the job's budget spent) is counted as
 * an enhancement error; the job still completes, because its snippets are stored and searchable without the
 * model (the spec: "the service works without it").
 */

// Only these two names are ever interpolated into SQL.
const TABLE: Record<LlmJobKind, string> = { crawl: 'crawl_jobs', upload: 'upload_jobs' };
// The counters each kind's job_complete event carries, as the crawl controller and upload worker send them.
const JOB_COUNTERS: Record<LlmJobKind, string> = {
  crawl: 'pages_found, pages_crawled, pages_skipped, pages_failed, snippets_stored',
  upload: 'file_count, processed_files, failed_files, snippets_extracted',
};

/** How far the LLM stage of one job has got, in pages, with the snippets it changed and the pages it gave up on. */
export interface LlmStageProgress {
  llm_pages_total: number;
  llm_pages_done: number;
  llm_pages_failed: number;
  llm_snippets_enhanced: number;
}

/**
 * The stage's progress as columns of a job row aliased `j` (join it LATERAL): pages still waiting are only
 * counted while the job can have any, so listing finished jobs stays cheap.
 */
export const LLM_PROGRESS_LATERAL = `LEFT JOIN LATERAL (
   SELECT count(*)::int AS llm_pages_done, count(f.error)::int AS llm_pages_failed, coalesce(sum(f.snippets_enhanced), 0)::int AS llm_snippets_enhanced,
          count(*)::int + CASE WHEN j.llm_enhance AND j.status IN ('running', 'processing', 'enhancing')
                               THEN (SELECT count(*)::int FROM llm_pages_pending(j.id)) ELSE 0 END AS llm_pages_total
     FROM llm_pages_done f WHERE f.job_id = j.id) llm ON true`;

export async function readLlmProgress(pool: pg.Pool | pg.ClientBase, jobId: string): Promise<LlmStageProgress> {
  const { rows } = await pool.query<{ pending: number; done: number; failed: number; enhanced: number }>(
    `SELECT (SELECT count(*)::int FROM llm_pages_pending($1)) AS pending, count(*)::int AS done, count(error)::int AS failed,
            coalesce(sum(snippets_enhanced), 0)::int AS enhanced
       FROM llm_pages_done WHERE job_id = $1`,
    [jobId],
  );
  const r = rows[0]!;
  return { llm_pages_total: r.pending + r.done, llm_pages_done: r.done, llm_pages_failed: r.failed, llm_snippets_enhanced: r.enhanced };
}

/** Records that the stage is through with one page of the job: `error` set when it gave up on it. */
export async function recordPageDone(pool: pg.Pool | pg.ClientBase, job: PageEnhancementJob, outcome: { enhanced: number; error: string | null }): Promise<void> {
  await pool.query(
    `INSERT INTO llm_pages_done (job_id, document_id, snippets_enhanced, error)
     SELECT $1, d.id, $3, $4 FROM documents d WHERE d.id = $2
     ON CONFLICT (job_id, document_id) DO UPDATE SET
       snippets_enhanced = llm_pages_done.snippets_enhanced + excluded.snippets_enhanced, error = excluded.error, done_at = now()`,
    [job.jobId, job.documentId, outcome.enhanced, outcome.error],
  );
}

/** Whether the job still wants its pages enhanced: not cancelled, failed or finished meanwhile. */
export async function jobWantsEnhancement(pool: pg.Pool, kind: LlmJobKind, jobId: string): Promise<boolean> {
  const { rows } = await pool.query<{ ok: boolean }>(`SELECT status IN ('queued', 'running', 'processing', 'enhancing') AS ok FROM ${TABLE[kind]} WHERE id = $1`, [jobId]);
  return rows[0]?.ok ?? false;
}

/** What completing a job needs from index upkeep (lent by whoever started the LLM workers). */
type CompletionUpkeep = Pick<IndexUpkeep, 'beforeJobCompletes'>;

/**
 * Completes an enhancing job once none of its pages waits for the stage, and announces it like any completed
 * job. Returns whether this call completed it (another process may have).
 */
export async function completeEnhancedJob(pool: pg.Pool, kind: LlmJobKind, jobId: string, upkeep: CompletionUpkeep): Promise<boolean> {
  const waiting = await pool.query(`SELECT 1 FROM ${TABLE[kind]} WHERE id = $1 AND status = 'enhancing' AND NOT EXISTS (SELECT 1 FROM llm_pages_pending($1))`, [jobId]);
  if (waiting.rowCount === 0) return false;
  // As when a crawl completes: the model's new words are counted and merged before the job reads completed.
  await upkeep.beforeJobCompletes(pool);
  const { rows } = await pool.query<Record<string, number>>(
    `UPDATE ${TABLE[kind]} SET status = 'completed', completed_at = now(), updated_at = now()
      WHERE id = $1 AND status = 'enhancing' AND NOT EXISTS (SELECT 1 FROM llm_pages_pending($1))
      RETURNING ${JOB_COUNTERS[kind]}`,
    [jobId],
  );
  if (!rows[0]) return false;
  const progress = await readLlmProgress(pool, jobId);
  await publish(pool, { event: 'job_complete', jobId, kind, state: 'completed', counters: { ...rows[0], ...progress }, error: null });
  return true;
}

/** Announces the stage's progress on the job's own channel, so a dashboard or follower shows enhancing n of m. */
export async function publishLlmProgress(pool: pg.Pool | pg.ClientBase, kind: LlmJobKind, jobId: string): Promise<void> {
  const progress = await readLlmProgress(pool, jobId);
  await publish(pool, {
    event: kind === 'crawl' ? 'crawl_progress' : 'upload_progress',
    jobId,
    kind,
    state: 'enhancing',
    counters: { ...progress },
  });
}

/** Deletes the queued (not yet started) enhancement jobs of a job that will not use them (cancelled). */
export async function dropQueuedEnhancements(db: pg.Pool | pg.ClientBase, jobId: string): Promise<number> {
  return deleteQueuedJobsInGroups(db, LLM_QUEUE, [jobId]);
}

// A page is stored (committed) before its enhancement is queued: one stored this recently may still be on its way.
const REQUEUE_AFTER_SECONDS = 30;

interface LostPage {
  job_kind: LlmJobKind;
  job_id: string;
  source_id: string;
  document_id: string;
  title: string;
  snippet_ids: number[];
}

/**
 * Pages of enhancing jobs that wait for the stage with no enhancement job queued or running: their queueing
 * failed, or a cancel dropped them and the job was resumed. Left alone, they would hold the job in enhancing.
 */
async function lostPages(client: pg.ClientBase): Promise<LostPage[]> {
  const { rows } = await client.query<LostPage>(
    `WITH enhancing AS (
       SELECT 'crawl' AS job_kind, id FROM crawl_jobs WHERE status = 'enhancing'
       UNION ALL SELECT 'upload', id FROM upload_jobs WHERE status = 'enhancing')
     SELECT e.job_kind, e.id AS job_id, d.source_id, d.id AS document_id, d.title,
            array(SELECT o.snippet_id FROM snippet_occurrences o JOIN snippets s ON s.id = o.snippet_id
                   WHERE o.document_id = d.id AND s.kind = 'snippet' ORDER BY o.position) AS snippet_ids
       FROM enhancing e CROSS JOIN LATERAL llm_pages_pending(e.id) p JOIN documents d ON d.id = p.document_id
      WHERE d.updated_at < now() - make_interval(secs => $1)`,
    [REQUEUE_AFTER_SECONDS],
  );
  if (rows.length === 0) return rows;
  const queued = await liveJobDataValues(client, LLM_QUEUE, [...new Set(rows.map((r) => r.job_id))], 'documentId');
  return rows.filter((r) => !queued.has(r.document_id));
}

/**
 * One pass over the enhancing jobs: queue their lost pages again, and complete those with nothing left. Run by
 * every process that runs the LLM stage; a transaction-level advisory lock lets one of them at a time do it.
 */
export async function sweepEnhancingJobs(pool: pg.Pool, boss: PgBoss, upkeep: CompletionUpkeep): Promise<void> {
  await ensureQueue(boss);
  const jobs = await withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ ok: boolean }>(`SELECT pg_try_advisory_xact_lock(hashtext('docdex-llm-sweep')) AS ok`);
    if (!rows[0]?.ok) return [];
    const lost = await lostPages(client);
    for (const page of lost) {
      const data: PageEnhancementJob = {
        jobKind: page.job_kind,
        jobId: page.job_id,
        sourceId: page.source_id,
        documentId: page.document_id,
        snippetIds: page.snippet_ids.map(Number),
        pageTitle: page.title,
      };
      await boss.send(LLM_QUEUE, { ...data }, { ...QUEUE_OPTIONS, group: { id: page.job_id } });
    }
    const enhancing = await client.query<{ kind: LlmJobKind; id: string }>(
      `SELECT 'crawl' AS kind, id FROM crawl_jobs WHERE status = 'enhancing' UNION ALL SELECT 'upload', id FROM upload_jobs WHERE status = 'enhancing'`,
    );
    return enhancing.rows;
  });
  for (const job of jobs) await completeEnhancedJob(pool, job.kind, job.id, upkeep);
}

/**
 * After the stage finished a page: completes the job when that was its last, else tells its followers how far
 * the stage has got while the job reads enhancing (during the crawl itself the job's own progress is shown).
 */
export async function afterPageEnhanced(pool: pg.Pool, kind: LlmJobKind, jobId: string, upkeep: CompletionUpkeep): Promise<void> {
  if (await completeEnhancedJob(pool, kind, jobId, upkeep)) return;
  const { rows } = await pool.query<{ status: string }>(`SELECT status FROM ${TABLE[kind]} WHERE id = $1`, [jobId]);
  if (rows[0]?.status === 'enhancing') await publishLlmProgress(pool, kind, jobId);
}
