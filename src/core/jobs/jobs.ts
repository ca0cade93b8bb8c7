import type pg from 'pg';
import { NotFoundError, ValidationError } from '../errors.js';
import { parseLibraryRef } from '../library-ref.js';
import { resolveLibrary } from '../sources/resolve.js';
import { crawlJobReport, uploadJobErrors } from '../stats/job-errors.js';
import type { CrawlJobReport, FileError } from '../stats/job-errors.js';
import { getUploadJob } from '../upload/job-rows.js';
import type { UploadJob } from '../upload/job-rows.js';

/**
 * Every job, whatever produced it, behind one set of calls (`docdex jobs`, issue #49): crawls (`crawl start`,
 * a docs site of `add`, `sources recrawl`) and upload jobs (`upload`, the git checkouts and package READMEs of
 * `add`, a git source's recrawl). A job is named by its id or a unique prefix of it, in either table.
 * Reading only: cancelling and resuming, which queue work, are control.ts.
 */

export const JOB_KINDS = ['crawl', 'upload'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

/** Every state a job of either kind can be in: a crawl runs, an upload processes; both may be enhancing. */
export const JOB_STATUSES = ['queued', 'running', 'processing', 'enhancing', 'completed', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export interface JobSummary {
  id: string;
  kind: JobKind;
  status: JobStatus;
  /** The library it indexes (its source's name now, else the name it was started with). */
  name: string;
  version: string;
  source_id: string | null;
  /** Pages (crawl) or files (upload) finished, out of `total` found so far. */
  done: number;
  /** Pages (crawl) or files (upload) that failed, counted in `done`. */
  failed: number;
  total: number;
  unit: 'pages' | 'files';
  snippets: number;
  error: string | null;
  created_at: string;
  completed_at: string | null;
}

export interface ListJobsOptions {
  kind?: JobKind;
  status?: JobStatus;
  /** A library reference (name, name@version, or source id): a bare name means every version of it. */
  source?: string;
  limit?: number;
  offset?: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const ALL_JOBS = `(
  SELECT j.id, 'crawl' AS kind, j.status, coalesce(s.name, j.name) AS name, coalesce(s.version, j.version, '') AS version, j.source_id,
         j.pages_crawled + j.pages_skipped + j.pages_failed AS done, j.pages_failed AS failed, j.pages_found AS total, 'pages' AS unit, j.snippets_stored AS snippets,
         j.error, j.created_at, j.completed_at
    FROM crawl_jobs j LEFT JOIN sources s ON s.id = j.source_id
  UNION ALL
  SELECT u.id, 'upload', u.status, coalesce(s.name, u.name), coalesce(s.version, ''), u.source_id,
         u.processed_files, u.failed_files, u.file_count, 'files', u.snippets_extracted, u.error, u.created_at, u.completed_at
    FROM upload_jobs u LEFT JOIN sources s ON s.id = u.source_id) a`;

/**
 * The source ids a library reference names for listing its jobs: a bare name every version of the library
 * (exact, else its one clear match, as `--source` everywhere), `name@version` that version, an id itself.
 */
export async function sourceIdsOf(pool: pg.Pool, text: string): Promise<string[]> {
  const ref = parseLibraryRef(text);
  if (ref.kind === 'id') return [ref.id];
  const library = await resolveLibrary(pool, ref);
  return ref.version === null ? library.versions.map((v) => v.id) : [library.id];
}

/** Crawl and upload jobs together, newest first, with the total for pagination. */
export async function listJobs(pool: pg.Pool, options: ListJobsOptions = {}): Promise<{ items: JobSummary[]; total: number; limit: number; offset: number }> {
  const limit = Math.max(1, Math.min(500, options.limit ?? 20));
  const offset = Math.max(0, options.offset ?? 0);
  const sourceIds = options.source === undefined ? null : await sourceIdsOf(pool, options.source);
  const { rows } = await pool.query<JobSummary & { created_at: Date; completed_at: Date | null; n: number }>(
    `SELECT a.*, count(*) OVER ()::int AS n FROM ${ALL_JOBS}
      WHERE ($1::text IS NULL OR a.kind = $1) AND ($2::text IS NULL OR a.status = $2) AND ($3::uuid[] IS NULL OR a.source_id = ANY($3::uuid[]))
      ORDER BY a.created_at DESC, a.id
      LIMIT $4 OFFSET $5`,
    [options.kind ?? null, options.status ?? null, sourceIds, limit, offset],
  );
  const items = rows.map(({ n: _n, ...r }) => ({
    ...r,
    done: Number(r.done),
    failed: Number(r.failed),
    total: Number(r.total),
    snippets: Number(r.snippets),
    created_at: new Date(r.created_at).toISOString(),
    completed_at: r.completed_at === null ? null : new Date(r.completed_at).toISOString(),
  }));
  return { items, total: rows[0]?.n ?? (offset > 0 ? await countJobs(pool, options.kind ?? null, options.status ?? null, sourceIds) : 0), limit, offset };
}

async function countJobs(pool: pg.Pool, kind: string | null, status: string | null, sourceIds: string[] | null): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${ALL_JOBS} WHERE ($1::text IS NULL OR a.kind = $1) AND ($2::text IS NULL OR a.status = $2) AND ($3::uuid[] IS NULL OR a.source_id = ANY($3::uuid[]))`,
    [kind, status, sourceIds],
  );
  return rows[0]!.n;
}

function noSuchJob(ref: string): NotFoundError {
  return new NotFoundError(`No job ${JSON.stringify(ref.slice(0, 80))}: no crawl or upload job has that id.`, { hint: 'List the jobs with `docdex jobs list`.' });
}

/** The job a full id or a unique prefix (4 characters at least, as `jobs list` prints) names, in either table. */
export async function resolveJob(pool: pg.Pool, ref: string): Promise<{ kind: JobKind; id: string }> {
  const text = ref.trim().toLowerCase();
  if (!/^[0-9a-f-]{4,36}$/.test(text)) throw noSuchJob(ref);
  const pattern = UUID.test(text) ? text : `${text}%`;
  const { rows } = await pool.query<{ kind: JobKind; id: string }>(
    `SELECT 'crawl' AS kind, id::text FROM crawl_jobs WHERE id::text LIKE $1
     UNION ALL
     SELECT 'upload', id::text FROM upload_jobs WHERE id::text LIKE $1
     LIMIT 2`,
    [pattern],
  );
  if (rows.length === 0) throw noSuchJob(ref);
  if (rows.length > 1) throw new ValidationError(`Job id prefix ${ref.trim()} is ambiguous.`, { hint: 'Give more characters of the id.' });
  return rows[0]!;
}

/** A job of either kind as `jobs status` shows it, with its latest failed pages or files. */
export type JobReport = ({ kind: 'crawl' } & CrawlJobReport) | ({ kind: 'upload' } & UploadJob & { recent_errors: FileError[] });

export async function jobReport(pool: pg.Pool, ref: string, options: { limit?: number } = {}): Promise<JobReport> {
  const job = await resolveJob(pool, ref);
  if (job.kind === 'crawl') return { kind: 'crawl', ...(await crawlJobReport(pool, job.id, options)) };
  const upload = await getUploadJob(pool, job.id);
  const recent = upload.failed_files > 0 ? await uploadJobErrors(pool, job.id, options) : [];
  return { kind: 'upload', ...upload, recent_errors: recent };
}
