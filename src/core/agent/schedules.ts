import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { PgBoss } from 'pg-boss';
import { z } from 'zod';
import { ConflictError, NotFoundError, UserError } from '../errors.js';
import { activeJobIds } from '../queue/boss.js';
import { git } from './git.js';
import { AGENT_QUEUES } from './queue.js';
import { getRepoById } from './repos.js';
import type { Repo, RepoContext } from './repos.js';

/**
 * Scheduled agent jobs per repo and their runs. pg-boss's cron clock drives the triggers: each enabled
 * job is one pg-boss schedule (key `schedule-<id>`) on the trigger queue, written whenever the job
 * changes. A cron expression is passed through; an interval becomes the recurrence rule
 * `FREQ=MINUTELY;INTERVAL=n`, which pg-boss evaluates the same way. A run gets a fresh detached worktree
 * under schedule-worktrees/, sends the prompt through a ScheduleRunner, and removes the worktree.
 */

export interface ScheduleContext extends RepoContext {
  boss: PgBoss;
}

const Name = z.string().trim().min(1).max(200);
const Prompt = z.string().min(1).max(100_000);
const Interval = z.number().int().min(1).max(43_200).describe('Minutes between runs (1 minute to 30 days)');
const Cron = z.string().trim().min(1).max(200).describe('A cron expression (5 or 6 fields), evaluated in `timezone`');
const Timezone = z
  .string()
  .min(1)
  .max(64)
  .refine((tz) => {
    try {
      new Intl.DateTimeFormat('en', { timeZone: tz });
      return true;
    } catch {
      return false;
    }
  }, 'an IANA time zone such as UTC or Europe/Berlin');
const Agent = z.string().min(1).max(100);
const Model = z
  .string()
  .regex(/^[^/\s]+\/\S+$/, 'expected "provider/model"')
  .max(200);

export const ScheduleCreate = z
  .object({
    name: Name,
    prompt: Prompt,
    intervalMinutes: Interval.optional(),
    cron: Cron.optional(),
    timezone: Timezone.optional(),
    agent: Agent.optional(),
    model: Model.optional(),
    enabled: z.boolean().optional(),
  })
  .strict()
  .refine((v) => (v.intervalMinutes === undefined) !== (v.cron === undefined), { message: 'give exactly one of intervalMinutes or cron', path: ['intervalMinutes'] })
  .meta({ id: 'ScheduleCreate' });
export type ScheduleCreate = z.infer<typeof ScheduleCreate>;

export const SchedulePatch = z
  .object({
    name: Name,
    prompt: Prompt,
    intervalMinutes: Interval,
    cron: Cron,
    timezone: Timezone,
    agent: Agent.nullable(),
    model: Model.nullable(),
    enabled: z.boolean(),
  })
  .partial()
  .strict()
  .refine((v) => v.intervalMinutes === undefined || v.cron === undefined, { message: 'give at most one of intervalMinutes or cron', path: ['intervalMinutes'] })
  .meta({ id: 'SchedulePatch' });
export type SchedulePatch = z.infer<typeof SchedulePatch>;

export const ScheduleRecord = z
  .object({
    id: z.number(),
    repoId: z.number(),
    repoName: z.string(),
    name: z.string(),
    prompt: z.string(),
    intervalMinutes: z.number().nullable(),
    cron: z.string().nullable(),
    timezone: z.string(),
    agent: z.string().nullable(),
    model: z.string().nullable(),
    enabled: z.boolean(),
    createdAt: z.number(),
    updatedAt: z.number(),
    lastRunAt: z.number().nullable(),
    nextRunAt: z.number().nullable().describe('Next trigger time; null when disabled'),
  })
  .meta({ id: 'Schedule' });
export type ScheduleRecord = z.infer<typeof ScheduleRecord>;

export const RunStatus = z.enum(['queued', 'running', 'completed', 'failed', 'cancelled']);
export type RunStatus = z.infer<typeof RunStatus>;

export const RunRecord = z
  .object({
    id: z.number(),
    scheduleId: z.number(),
    repoId: z.number(),
    status: RunStatus,
    trigger: z.enum(['schedule', 'manual']),
    createdAt: z.number(),
    startedAt: z.number().nullable(),
    finishedAt: z.number().nullable(),
    worktreePath: z.string().nullable(),
    sessionId: z.string().nullable(),
    log: z.string(),
    response: z.string().nullable(),
    error: z.string().nullable(),
    truncated: z.boolean().optional().describe('Lists only: log or response was shortened; GET the run for the full text'),
  })
  .meta({ id: 'ScheduleRun' });
export type RunRecord = z.infer<typeof RunRecord>;

export const RunList = z.object({ runs: z.array(RunRecord), total: z.number(), limit: z.number(), offset: z.number() }).meta({ id: 'ScheduleRunList' });
export type RunList = z.infer<typeof RunList>;

export const RUN_LIST_DEFAULT = 20;
export const RUN_LIST_MAX = 100;
/** Logs beyond this keep their end: the latest lines explain a failure. */
const MAX_LOG_CHARS = 256 * 1024;
const LIST_TEXT_CHARS = 4000;

interface ScheduleRow {
  id: number;
  repo_id: number;
  repo_name: string;
  name: string;
  prompt: string;
  interval_minutes: number | null;
  cron: string | null;
  timezone: string;
  agent: string | null;
  model: string | null;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
  last_run_at: Date | null;
}

interface RunRow {
  id: number;
  schedule_id: number;
  repo_id: number;
  status: RunStatus;
  trigger: 'schedule' | 'manual';
  queue_job_id: string | null;
  worktree_path: string | null;
  session_id: string | null;
  log: string;
  response: string | null;
  error: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

/** The expression pg-boss stores for a job: its cron, or its interval as a recurrence rule. */
export function recurrenceOf(schedule: { intervalMinutes: number | null; cron: string | null }): string {
  return schedule.cron ?? `FREQ=MINUTELY;INTERVAL=${schedule.intervalMinutes}`;
}

function nextRun(boss: PgBoss, row: ScheduleRow): number | null {
  if (!row.enabled) return null;
  try {
    return boss.previewSchedule(recurrenceOf({ intervalMinutes: row.interval_minutes, cron: row.cron }), { tz: row.timezone, count: 1 })[0]?.getTime() ?? null;
  } catch {
    return null;
  }
}

function toSchedule(boss: PgBoss, row: ScheduleRow): ScheduleRecord {
  return {
    id: row.id,
    repoId: row.repo_id,
    repoName: row.repo_name,
    name: row.name,
    prompt: row.prompt,
    intervalMinutes: row.interval_minutes,
    cron: row.cron,
    timezone: row.timezone,
    agent: row.agent,
    model: row.model,
    enabled: row.enabled,
    createdAt: row.created_at.getTime(),
    updatedAt: row.updated_at.getTime(),
    lastRunAt: row.last_run_at?.getTime() ?? null,
    nextRunAt: nextRun(boss, row),
  };
}

function toRun(row: RunRow, shorten = false): RunRecord {
  const cut = (text: string | null) => (text !== null && shorten && text.length > LIST_TEXT_CHARS ? text.slice(-LIST_TEXT_CHARS) : text);
  const truncated = shorten && (row.log.length > LIST_TEXT_CHARS || (row.response?.length ?? 0) > LIST_TEXT_CHARS);
  return {
    id: row.id,
    scheduleId: row.schedule_id,
    repoId: row.repo_id,
    status: row.status,
    trigger: row.trigger,
    createdAt: row.created_at.getTime(),
    startedAt: row.started_at?.getTime() ?? null,
    finishedAt: row.finished_at?.getTime() ?? null,
    worktreePath: row.worktree_path,
    sessionId: row.session_id,
    log: cut(row.log) ?? '',
    response: cut(row.response),
    error: row.error,
    ...(shorten ? { truncated } : {}),
  };
}

const SCHEDULE_SELECT = 'SELECT s.*, r.local_path AS repo_name FROM agent_schedules s JOIN agent_repos r ON r.id = s.repo_id';

/** Checks a cron expression (or rule) and time zone the way pg-boss will evaluate them. 400 when invalid. */
function assertRecurrence(boss: PgBoss, expression: string, tz: string): void {
  try {
    boss.previewSchedule(expression, { tz, count: 1 });
  } catch (error) {
    throw new UserError(`Invalid schedule "${expression}": ${(error as Error).message}`, { code: 'bad_request', exitCode: 2 });
  }
}

/** Writes (or removes) the pg-boss schedule of a job so the cron clock matches the row. */
export async function syncBossSchedule(boss: PgBoss, schedule: Pick<ScheduleRecord, 'id' | 'enabled' | 'intervalMinutes' | 'cron' | 'timezone'>): Promise<void> {
  const key = `schedule-${schedule.id}`;
  if (!schedule.enabled) {
    await boss.unschedule(AGENT_QUEUES.scheduleTrigger, key);
    return;
  }
  await boss.schedule(AGENT_QUEUES.scheduleTrigger, recurrenceOf(schedule), { scheduleId: schedule.id }, { tz: schedule.timezone, key });
}

/** Makes pg-boss's schedules match the table: after a restore, a crash between the two writes, or a repo removal. */
export async function reconcileSchedules(ctx: ScheduleContext): Promise<number> {
  const rows = (await ctx.pool.query<ScheduleRow>(SCHEDULE_SELECT)).rows;
  const wanted = new Set(rows.filter((r) => r.enabled).map((r) => `schedule-${r.id}`));
  for (const row of rows) await syncBossSchedule(ctx.boss, { id: row.id, enabled: row.enabled, intervalMinutes: row.interval_minutes, cron: row.cron, timezone: row.timezone });
  const existing = await ctx.boss.getSchedules(AGENT_QUEUES.scheduleTrigger);
  for (const s of existing) if (!wanted.has(s.key)) await ctx.boss.unschedule(AGENT_QUEUES.scheduleTrigger, s.key);
  return rows.length;
}

export async function listAllSchedules(ctx: ScheduleContext): Promise<ScheduleRecord[]> {
  const { rows } = await ctx.pool.query<ScheduleRow>(`${SCHEDULE_SELECT} ORDER BY s.repo_id, s.id`);
  return rows.map((r) => toSchedule(ctx.boss, r));
}

export async function listSchedules(ctx: ScheduleContext, repoId: number): Promise<ScheduleRecord[]> {
  await getRepoById(ctx, repoId);
  const { rows } = await ctx.pool.query<ScheduleRow>(`${SCHEDULE_SELECT} WHERE s.repo_id = $1 ORDER BY s.id`, [repoId]);
  return rows.map((r) => toSchedule(ctx.boss, r));
}

async function scheduleRow(ctx: ScheduleContext, repoId: number, scheduleId: number): Promise<ScheduleRow> {
  const { rows } = await ctx.pool.query<ScheduleRow>(`${SCHEDULE_SELECT} WHERE s.id = $1 AND s.repo_id = $2`, [scheduleId, repoId]);
  if (!rows[0]) {
    await getRepoById(ctx, repoId);
    throw new NotFoundError(`No schedule ${scheduleId} in repo ${repoId}.`);
  }
  return rows[0];
}

export async function getSchedule(ctx: ScheduleContext, repoId: number, scheduleId: number): Promise<ScheduleRecord> {
  return toSchedule(ctx.boss, await scheduleRow(ctx, repoId, scheduleId));
}

export async function createSchedule(ctx: ScheduleContext, repoId: number, input: ScheduleCreate): Promise<ScheduleRecord> {
  await getRepoById(ctx, repoId);
  const tz = input.timezone ?? 'UTC';
  assertRecurrence(ctx.boss, recurrenceOf({ intervalMinutes: input.intervalMinutes ?? null, cron: input.cron ?? null }), tz);
  const { rows } = await ctx.pool.query<{ id: number }>(
    `INSERT INTO agent_schedules (repo_id, name, prompt, interval_minutes, cron, timezone, agent, model, enabled)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
    [repoId, input.name, input.prompt, input.intervalMinutes ?? null, input.cron ?? null, tz, input.agent ?? null, input.model ?? null, input.enabled ?? true],
  );
  const created = await getSchedule(ctx, repoId, rows[0]!.id);
  try {
    await syncBossSchedule(ctx.boss, created);
  } catch (error) {
    await ctx.pool.query('DELETE FROM agent_schedules WHERE id = $1', [created.id]);
    throw error;
  }
  return created;
}

export async function updateSchedule(ctx: ScheduleContext, repoId: number, scheduleId: number, patch: SchedulePatch): Promise<ScheduleRecord> {
  const row = await scheduleRow(ctx, repoId, scheduleId);
  // Giving one trigger kind replaces the other.
  const interval = patch.intervalMinutes ?? (patch.cron !== undefined ? null : row.interval_minutes);
  const cron = patch.cron ?? (patch.intervalMinutes !== undefined ? null : row.cron);
  const tz = patch.timezone ?? row.timezone;
  assertRecurrence(ctx.boss, recurrenceOf({ intervalMinutes: interval, cron }), tz);
  await ctx.pool.query(
    `UPDATE agent_schedules SET name = $3, prompt = $4, interval_minutes = $5, cron = $6, timezone = $7, agent = $8, model = $9,
            enabled = $10, updated_at = now()
      WHERE id = $1 AND repo_id = $2`,
    [
      scheduleId,
      repoId,
      patch.name ?? row.name,
      patch.prompt ?? row.prompt,
      interval,
      cron,
      tz,
      patch.agent === undefined ? row.agent : patch.agent,
      patch.model === undefined ? row.model : patch.model,
      patch.enabled ?? row.enabled,
    ],
  );
  const updated = await getSchedule(ctx, repoId, scheduleId);
  await syncBossSchedule(ctx.boss, updated);
  return updated;
}

export async function deleteSchedule(ctx: ScheduleContext, repoId: number, scheduleId: number): Promise<ScheduleRecord> {
  const schedule = await getSchedule(ctx, repoId, scheduleId);
  const { rowCount } = await ctx.pool.query(`SELECT 1 FROM agent_schedule_runs WHERE schedule_id = $1 AND status = 'running'`, [scheduleId]);
  if (rowCount !== 0) throw new ConflictError(`Schedule ${scheduleId} has a run in progress.`, { hint: 'Cancel the run first.' });
  await ctx.boss.unschedule(AGENT_QUEUES.scheduleTrigger, `schedule-${scheduleId}`);
  await ctx.pool.query('DELETE FROM agent_schedules WHERE id = $1', [scheduleId]);
  return schedule;
}

/** Queues a run of a job now (manual) or from the cron clock (schedule). */
export async function startRun(ctx: ScheduleContext, repoId: number, scheduleId: number, trigger: 'manual' | 'schedule' = 'manual'): Promise<RunRecord> {
  await scheduleRow(ctx, repoId, scheduleId);
  const { rows } = await ctx.pool.query<RunRow>(`INSERT INTO agent_schedule_runs (schedule_id, repo_id, status, trigger) VALUES ($1, $2, 'queued', $3) RETURNING *`, [scheduleId, repoId, trigger]);
  const run = rows[0]!;
  await ctx.pool.query('UPDATE agent_schedules SET last_run_at = now() WHERE id = $1', [scheduleId]);
  try {
    const jobId = await ctx.boss.send(AGENT_QUEUES.scheduleRun, { runId: run.id });
    await ctx.pool.query('UPDATE agent_schedule_runs SET queue_job_id = $2 WHERE id = $1', [run.id, jobId]);
  } catch (error) {
    await ctx.pool.query('DELETE FROM agent_schedule_runs WHERE id = $1', [run.id]);
    throw error;
  }
  return toRun(run);
}

/**
 * The cron trigger. A disabled or deleted job does nothing; a job whose previous run is still queued or
 * running is skipped rather than stacked, so a slow agent cannot build an ever-growing backlog.
 */
export async function handleTrigger(ctx: ScheduleContext, scheduleId: number): Promise<RunRecord | undefined> {
  const { rows } = await ctx.pool.query<{ repo_id: number; enabled: boolean; busy: boolean }>(
    `SELECT repo_id, enabled, EXISTS (SELECT 1 FROM agent_schedule_runs WHERE schedule_id = s.id AND status IN ('queued', 'running')) AS busy
       FROM agent_schedules s WHERE id = $1`,
    [scheduleId],
  );
  const row = rows[0];
  if (!row || !row.enabled || row.busy) return undefined;
  return startRun(ctx, row.repo_id, scheduleId, 'schedule');
}

export interface RunListQuery {
  repoId?: number;
  scheduleId?: number;
  status?: RunStatus;
  limit?: number;
  offset?: number;
}

export async function listRuns(ctx: ScheduleContext, query: RunListQuery): Promise<RunList> {
  if (query.repoId !== undefined && query.scheduleId !== undefined) await scheduleRow(ctx, query.repoId, query.scheduleId);
  const limit = query.limit ?? RUN_LIST_DEFAULT;
  const offset = query.offset ?? 0;
  if (!Number.isInteger(limit) || limit < 1 || limit > RUN_LIST_MAX) throw new UserError(`limit must be 1 to ${RUN_LIST_MAX}.`, { code: 'bad_request' });
  const params = [query.scheduleId ?? null, query.status ?? null];
  const where = 'WHERE ($1::int IS NULL OR schedule_id = $1) AND ($2::text IS NULL OR status = $2)';
  const [{ rows }, count] = await Promise.all([
    ctx.pool.query<RunRow>(`SELECT * FROM agent_schedule_runs ${where} ORDER BY id DESC LIMIT $3 OFFSET $4`, [...params, limit, offset]),
    ctx.pool.query<{ total: number }>(`SELECT count(*)::int AS total FROM agent_schedule_runs ${where}`, params),
  ]);
  return { runs: rows.map((r) => toRun(r, true)), total: count.rows[0]?.total ?? 0, limit, offset };
}

async function runRow(ctx: ScheduleContext, repoId: number, scheduleId: number, runId: number): Promise<RunRow> {
  const { rows } = await ctx.pool.query<RunRow>('SELECT * FROM agent_schedule_runs WHERE id = $1 AND schedule_id = $2 AND repo_id = $3', [runId, scheduleId, repoId]);
  if (!rows[0]) {
    await scheduleRow(ctx, repoId, scheduleId);
    throw new NotFoundError(`No run ${runId} of schedule ${scheduleId}.`);
  }
  return rows[0];
}

export async function getRun(ctx: ScheduleContext, repoId: number, scheduleId: number, runId: number): Promise<RunRecord> {
  return toRun(await runRow(ctx, repoId, scheduleId, runId));
}

export async function deleteRun(ctx: ScheduleContext, repoId: number, scheduleId: number, runId: number): Promise<RunRecord> {
  const row = await runRow(ctx, repoId, scheduleId, runId);
  if (row.status === 'queued' || row.status === 'running') throw new ConflictError(`Run ${runId} is ${row.status}.`, { hint: 'Cancel it first.' });
  await ctx.pool.query('DELETE FROM agent_schedule_runs WHERE id = $1', [runId]);
  return toRun(row);
}

/** Deletes the finished runs of a job (queued and running ones stay). */
export async function deleteRuns(ctx: ScheduleContext, repoId: number, scheduleId: number): Promise<{ deleted: number }> {
  await scheduleRow(ctx, repoId, scheduleId);
  const { rowCount } = await ctx.pool.query(`DELETE FROM agent_schedule_runs WHERE schedule_id = $1 AND status NOT IN ('queued', 'running')`, [scheduleId]);
  return { deleted: rowCount ?? 0 };
}

/** Cancels a queued or running run; 409 once it has finished. A running run is stopped within seconds. */
export async function cancelRun(ctx: ScheduleContext, repoId: number, scheduleId: number, runId: number): Promise<RunRecord> {
  const row = await runRow(ctx, repoId, scheduleId, runId);
  const { rows } = await ctx.pool.query<RunRow>(
    `UPDATE agent_schedule_runs SET status = 'cancelled', finished_at = now(), error = coalesce(error, 'Cancelled.')
      WHERE id = $1 AND status IN ('queued', 'running') RETURNING *`,
    [runId],
  );
  if (!rows[0]) throw new ConflictError(`Run ${runId} has already finished (${row.status}).`);
  if (row.status === 'queued' && row.queue_job_id) await ctx.boss.cancel(AGENT_QUEUES.scheduleRun, row.queue_job_id).catch(() => undefined);
  return toRun(rows[0]);
}

/** What a run hands to the agent server, and what comes back. */
export interface ScheduleRunRequest {
  prompt: string;
  agent: string | null;
  model: string | null;
  /** The fresh worktree the agent works in. */
  directory: string;
  repo: Repo;
  scheduleId: number;
  runId: number;
  signal: AbortSignal;
  log(line: string): Promise<void>;
  /** Records the agent session as soon as it exists, so a run that fails or is cancelled later still names it. */
  session(sessionId: string): Promise<void>;
}

export interface ScheduleRunner {
  run(request: ScheduleRunRequest): Promise<{ response: string }>;
}

/** Until the agent server integration exists, a run fails here with a clear reason. */
export const unavailableRunner: ScheduleRunner = {
  run() {
    return Promise.reject(new Error('No agent server is available: scheduled runs send their prompt to the managed opencode server, which this docdex version does not run yet.'));
  },
};

async function appendLog(ctx: ScheduleContext, runId: number, line: string): Promise<void> {
  await ctx.pool.query(`UPDATE agent_schedule_runs SET log = right(log || $2, ${MAX_LOG_CHARS}) WHERE id = $1`, [runId, `[${new Date().toISOString()}] ${line}\n`]);
}

// How often a running run looks for its own cancellation (which may come from another process).
const CANCEL_POLL_MS = 2000;

/**
 * The run job: claims a queued run, makes its worktree, hands the prompt to the runner and records the
 * outcome. A run cancelled meanwhile keeps its `cancelled` status: every final write is conditional on
 * the run still being `running`.
 */
export async function executeRun(ctx: ScheduleContext, runId: number, runner: ScheduleRunner): Promise<RunRecord | undefined> {
  const claimed = await ctx.pool.query<RunRow>(`UPDATE agent_schedule_runs SET status = 'running', started_at = now() WHERE id = $1 AND status = 'queued' RETURNING *`, [runId]);
  const run = claimed.rows[0];
  if (!run) return undefined;
  const log = (line: string) => appendLog(ctx, runId, line);
  const abort = new AbortController();
  const poll = setInterval(() => {
    ctx.pool.query<{ status: string }>('SELECT status FROM agent_schedule_runs WHERE id = $1', [runId]).then(
      ({ rows }) => {
        if (rows[0]?.status !== 'running') abort.abort(new Error('Cancelled.'));
      },
      () => undefined,
    );
  }, CANCEL_POLL_MS);
  poll.unref();
  let worktree: string | undefined;
  let repo: Repo | undefined;
  let outcome: { status: 'completed'; response: string } | { status: 'failed'; error: string };
  try {
    const { rows } = await ctx.pool.query<ScheduleRow>(`${SCHEDULE_SELECT} WHERE s.id = $1`, [run.schedule_id]);
    const schedule = rows[0];
    if (!schedule) throw new Error('The schedule was deleted.');
    repo = await getRepoById(ctx, run.repo_id);
    if (repo.cloneStatus !== 'ready') throw new Error(`Repo "${repo.localPath}" is ${repo.cloneStatus}, not ready.`);
    await mkdir(ctx.workspace.scheduleWorktreesDir, { recursive: true });
    worktree = path.join(ctx.workspace.scheduleWorktreesDir, `${repo.localPath}-s${schedule.id}-r${runId}`);
    await git(ctx.workspace, ['worktree', 'add', '--detach', '--', worktree, 'HEAD'], { cwd: repo.fullPath });
    await ctx.pool.query('UPDATE agent_schedule_runs SET worktree_path = $2 WHERE id = $1', [runId, worktree]);
    await log(`worktree ${worktree} at HEAD of ${repo.localPath}`);
    await log(`sending the prompt${schedule.agent ? ` to agent ${schedule.agent}` : ''}${schedule.model ? ` with model ${schedule.model}` : ''}`);
    const result = await runner.run({
      prompt: schedule.prompt,
      agent: schedule.agent,
      model: schedule.model,
      directory: worktree,
      repo,
      scheduleId: schedule.id,
      runId,
      signal: abort.signal,
      log,
      session: async (sessionId) => void (await ctx.pool.query('UPDATE agent_schedule_runs SET session_id = $2 WHERE id = $1', [runId, sessionId])),
    });
    outcome = { status: 'completed', response: result.response };
    await log('completed');
  } catch (error) {
    outcome = { status: 'failed', error: (error as Error).message };
    await log(`failed: ${(error as Error).message}`).catch(() => undefined);
  } finally {
    clearInterval(poll);
  }
  if (worktree !== undefined && repo !== undefined) {
    const source = repo.fullPath;
    await git(ctx.workspace, ['worktree', 'remove', '--force', '--', worktree], { cwd: source }).catch(async () => {
      await rm(worktree!, { recursive: true, force: true });
      await git(ctx.workspace, ['worktree', 'prune'], { cwd: source }).catch(() => undefined);
    });
  }
  const { rows } = await ctx.pool.query<RunRow>(
    outcome.status === 'completed'
      ? `UPDATE agent_schedule_runs SET status = 'completed', response = $2, finished_at = now() WHERE id = $1 AND status = 'running' RETURNING *`
      : `UPDATE agent_schedule_runs SET status = 'failed', error = $2, finished_at = now() WHERE id = $1 AND status = 'running' RETURNING *`,
    outcome.status === 'completed' ? [runId, outcome.response] : [runId, outcome.error],
  );
  return rows[0] ? toRun(rows[0]) : toRun((await ctx.pool.query<RunRow>('SELECT * FROM agent_schedule_runs WHERE id = $1', [runId])).rows[0]!);
}

/**
 * Runs left `running` by a process that died are failed at start-up, so they do not block their job forever.
 * A run whose pg-boss job is still active belongs to another live process and is left alone; only the runs
 * read here are failed, so one that starts meanwhile is never touched.
 */
export async function failInterruptedRuns(ctx: ScheduleContext): Promise<number> {
  const running = await ctx.pool.query<{ id: string; queue_job_id: string | null }>(`SELECT id::text, queue_job_id FROM agent_schedule_runs WHERE status = 'running'`);
  if (running.rows.length === 0) return 0;
  const jobIds = running.rows.flatMap((r) => (r.queue_job_id === null ? [] : [r.queue_job_id]));
  const active = await activeJobIds(ctx.boss, AGENT_QUEUES.scheduleRun, jobIds);
  const interrupted = running.rows.filter((r) => r.queue_job_id === null || !active.has(r.queue_job_id)).map((r) => r.id);
  const { rowCount } = await ctx.pool.query(
    `UPDATE agent_schedule_runs SET status = 'failed', finished_at = now(), error = 'Interrupted: the process running it stopped.'
      WHERE status = 'running' AND id = ANY($1::bigint[])`,
    [interrupted],
  );
  return rowCount ?? 0;
}
