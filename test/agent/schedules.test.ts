import { existsSync, readdirSync } from 'node:fs';
import { execa } from 'execa';
import type { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRepository } from '../../src/core/agent/manage.js';
import { AGENT_QUEUES, ensureAgentQueues } from '../../src/core/agent/queue.js';
import { executeRun, failInterruptedRuns, handleTrigger } from '../../src/core/agent/schedules.js';
import type { ScheduleContext, ScheduleRunner } from '../../src/core/agent/schedules.js';
import { createBoss } from '../../src/core/queue/boss.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { makeBareRepo, startAgentDaemon, waitFor } from './helpers.js';
import type { AgentDaemon } from './helpers.js';

let db: TestDatabase;
let daemon: AgentDaemon;
let origin: Awaited<ReturnType<typeof makeBareRepo>>;
let boss: PgBoss;
let ctx: ScheduleContext;
let repoId: number;

beforeAll(async () => {
  db = await createTestDatabase();
  origin = await makeBareRepo();
  daemon = await startAgentDaemon(db);
  repoId = (await addRepository(daemon.config, { source: origin.bare, name: 'app' }, { wait: true })).id;
  boss = createBoss(db.info, { max: 2 });
  boss.on('error', () => undefined);
  await boss.start();
  await ensureAgentQueues(boss);
  ctx = { pool: db.pool, workspace: daemon.workspace, boss };
});
afterAll(async () => {
  await boss?.stop({ graceful: false, close: true });
  await daemon?.close();
  origin?.cleanup();
  await db?.drop();
});

const api = (method: string, route: string, body?: unknown) => daemon.call(method, `/api/internal${route}`, { body });
const bossSchedule = async (id: number) => (await boss.getSchedules(AGENT_QUEUES.scheduleTrigger)).find((s) => s.key === `schedule-${id}`);

describe('schedule jobs', () => {
  it('creates jobs with an interval or a cron expression, each driven by a pg-boss schedule', async () => {
    const every = await api('POST', `/repos/${repoId}/schedules`, { name: 'Every 45 minutes', prompt: 'Check the build.', intervalMinutes: 45, model: 'anthropic/claude-sonnet-4-5' });
    expect(every.status).toBe(201);
    expect(every.body).toMatchObject({ repoId, repoName: 'app', intervalMinutes: 45, cron: null, timezone: 'UTC', agent: null, model: 'anthropic/claude-sonnet-4-5', enabled: true, lastRunAt: null });
    expect(every.body.nextRunAt).toBeGreaterThan(Date.now());
    expect(await bossSchedule(every.body.id)).toMatchObject({ cron: 'FREQ=MINUTELY;INTERVAL=45', data: { scheduleId: every.body.id } });

    const nightly = await api('POST', `/repos/${repoId}/schedules`, { name: 'Nightly', prompt: 'Update deps.', cron: '0 2 * * *', timezone: 'Europe/Berlin', agent: 'build' });
    expect(nightly.status).toBe(201);
    expect(await bossSchedule(nightly.body.id)).toMatchObject({ cron: '0 2 * * *', timezone: 'Europe/Berlin' });

    const listed = await api('GET', `/repos/${repoId}/schedules`);
    expect(listed.body.schedules.map((s: { name: string }) => s.name)).toEqual(['Every 45 minutes', 'Nightly']);
    expect((await api('GET', '/schedules/all')).body.schedules).toHaveLength(2);
    expect((await api('GET', `/repos/${repoId}/schedules/${nightly.body.id}`)).body).toMatchObject({ name: 'Nightly', agent: 'build' });
  });

  it('rejects invalid jobs with 400 and unknown repos or jobs with 404', async () => {
    const bad = [
      { name: 'x', prompt: 'p' },
      { name: 'x', prompt: 'p', intervalMinutes: 5, cron: '* * * * *' },
      { name: 'x', prompt: 'p', intervalMinutes: 0 },
      { name: 'x', prompt: 'p', intervalMinutes: 43_201 },
      { name: 'x', prompt: 'p', cron: 'every day' },
      { name: 'x', prompt: 'p', cron: '* * * * *', timezone: 'Mars/Olympus' },
      { name: '', prompt: 'p', intervalMinutes: 5 },
      { name: 'x', prompt: '', intervalMinutes: 5 },
      { name: 'x', prompt: 'p', intervalMinutes: 5, model: 'no-slash' },
      { name: 'x', prompt: 'p', intervalMinutes: 5, unknown: 1 },
    ];
    for (const body of bad) {
      const res = await api('POST', `/repos/${repoId}/schedules`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('bad_request');
    }
    expect((await api('POST', '/repos/999/schedules', { name: 'x', prompt: 'p', intervalMinutes: 5 })).status).toBe(404);
    expect((await api('GET', '/repos/999/schedules')).status).toBe(404);
    expect((await api('GET', `/repos/${repoId}/schedules/999`)).status).toBe(404);
    expect((await api('GET', `/repos/${repoId}/schedules/abc`)).status).toBe(400);
    expect((await api('PATCH', `/repos/${repoId}/schedules/999`, { enabled: false })).status).toBe(404);
  });

  it('changes jobs: pausing removes the pg-boss schedule, a cron replaces an interval', async () => {
    const id = (await api('GET', `/repos/${repoId}/schedules`)).body.schedules[0].id as number;
    const paused = await api('PATCH', `/repos/${repoId}/schedules/${id}`, { enabled: false, model: null });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ enabled: false, model: null, nextRunAt: null, intervalMinutes: 45 });
    expect(await bossSchedule(id)).toBeUndefined();
    const cron = await api('PATCH', `/repos/${repoId}/schedules/${id}`, { enabled: true, cron: '*/10 * * * *' });
    expect(cron.body).toMatchObject({ enabled: true, cron: '*/10 * * * *', intervalMinutes: null, name: 'Every 45 minutes' });
    expect(await bossSchedule(id)).toMatchObject({ cron: '*/10 * * * *' });
    const back = await api('PATCH', `/repos/${repoId}/schedules/${id}`, { intervalMinutes: 15 });
    expect(back.body).toMatchObject({ cron: null, intervalMinutes: 15 });
    expect((await api('PATCH', `/repos/${repoId}/schedules/${id}`, { intervalMinutes: 5, cron: '* * * * *' })).status).toBe(400);
    expect((await api('PATCH', `/repos/${repoId}/schedules/${id}`, { cron: 'nope' })).status).toBe(400);
  });
});

describe('runs', () => {
  it('runs a job on request in a fresh worktree, and fails clearly while no agent server exists', async () => {
    const id = (await api('GET', `/repos/${repoId}/schedules`)).body.schedules[0].id as number;
    const queued = await api('POST', `/repos/${repoId}/schedules/${id}/run`);
    expect(queued.status).toBe(202);
    expect(queued.body).toMatchObject({ status: 'queued', trigger: 'manual', scheduleId: id, repoId });
    const done = await waitFor(async () => {
      const run = (await api('GET', `/repos/${repoId}/schedules/${id}/runs/${queued.body.id}`)).body;
      return ['completed', 'failed'].includes(run.status) ? run : undefined;
    });
    expect(done).toMatchObject({ status: 'failed', error: expect.stringContaining('No agent server is available'), startedAt: expect.any(Number), finishedAt: expect.any(Number) });
    expect(done.log).toContain('worktree');
    expect(done.worktreePath).toContain(daemon.workspace.scheduleWorktreesDir);
    // The worktree is cleaned up, in git too.
    expect(existsSync(done.worktreePath)).toBe(false);
    const worktrees = await execa('git', ['worktree', 'list', '--porcelain'], { cwd: `${daemon.workspace.reposDir}/app` });
    expect(worktrees.stdout).not.toContain('schedule-worktrees');
    expect((await api('GET', `/repos/${repoId}/schedules/${id}`)).body.lastRunAt).toEqual(expect.any(Number));
  });

  it('completes a run with a working runner, which sees the worktree at HEAD', async () => {
    const id = (await api('GET', `/repos/${repoId}/schedules`)).body.schedules[1].id as number;
    // Stop the daemon's worker from taking this run: it is claimed here, by executeRun.
    const { rows } = await db.pool.query<{ id: number }>(`INSERT INTO agent_schedule_runs (schedule_id, repo_id, status, trigger) VALUES ($1, $2, 'queued', 'manual') RETURNING id`, [id, repoId]);
    const seen: string[] = [];
    const runner: ScheduleRunner = {
      async run(request) {
        seen.push(request.directory, request.prompt, String(request.agent));
        expect(existsSync(`${request.directory}/README.md`)).toBe(true);
        await request.session('ses_123');
        await request.log('agent says hello');
        return { response: 'All dependencies are current.' };
      },
    };
    const run = await executeRun(ctx, rows[0]!.id, runner);
    expect(run).toMatchObject({ status: 'completed', response: 'All dependencies are current.', sessionId: 'ses_123', error: null });
    expect(run!.log).toContain('agent says hello');
    expect(seen.slice(1)).toEqual(['Update deps.', 'build']);
    expect(existsSync(seen[0]!)).toBe(false);
  });

  it('stops a running run on cancel, and keeps it cancelled', async () => {
    const id = (await api('GET', `/repos/${repoId}/schedules`)).body.schedules[1].id as number;
    const { rows } = await db.pool.query<{ id: number }>(`INSERT INTO agent_schedule_runs (schedule_id, repo_id, status, trigger) VALUES ($1, $2, 'queued', 'manual') RETURNING id`, [id, repoId]);
    const runId = rows[0]!.id;
    const runner: ScheduleRunner = {
      run: async (request) => {
        await request.session('ses_cancelled');
        return new Promise((_resolve, reject) => {
          void api('POST', `/repos/${repoId}/schedules/${id}/runs/${runId}/cancel`).then((res) => expect(res.body.status).toBe('cancelled'));
          request.signal.addEventListener('abort', () => reject(new Error('aborted by cancel')));
        });
      },
    };
    const run = await executeRun(ctx, runId, runner);
    // The session it had started is named, though the run never completed (issue #51).
    expect(run).toMatchObject({ status: 'cancelled', error: 'Cancelled.', sessionId: 'ses_cancelled' });
    expect((await api('POST', `/repos/${repoId}/schedules/${id}/runs/${runId}/cancel`)).status).toBe(409);
  });

  it('lists runs newest first with limits, gets, deletes and cancels them with the right status codes', async () => {
    const id = (await api('GET', `/repos/${repoId}/schedules`)).body.schedules[1].id as number;
    const list = await api('GET', `/repos/${repoId}/schedules/${id}/runs`);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ total: 2, limit: 20, offset: 0 });
    expect(list.body.runs.map((r: { status: string }) => r.status)).toEqual(['cancelled', 'completed']);
    expect((await api('GET', `/repos/${repoId}/schedules/${id}/runs?limit=1&offset=1`)).body.runs[0].status).toBe('completed');
    expect((await api('GET', `/repos/${repoId}/schedules/${id}/runs?limit=100`)).status).toBe(200);
    for (const q of ['limit=101', 'limit=0', 'offset=-1', 'status=weird']) expect((await api('GET', `/repos/${repoId}/schedules/${id}/runs?${q}`)).status, q).toBe(400);
    const all = await api('GET', '/schedules/all/runs?status=failed');
    expect(all.body.runs.every((r: { status: string }) => r.status === 'failed')).toBe(true);
    expect(all.body.total).toBe(1);

    // Queued and running runs are not deleted; finished ones are.
    // Inserted directly (no queue job), so the daemon's worker cannot finish it meanwhile.
    const queued = (await db.pool.query<{ id: number }>(`INSERT INTO agent_schedule_runs (schedule_id, repo_id, status, trigger) VALUES ($1, $2, 'running', 'manual') RETURNING id`, [id, repoId]))
      .rows[0]!;
    expect((await api('DELETE', `/repos/${repoId}/schedules/${id}/runs/${queued.id}`)).status).toBe(409);
    expect((await api('DELETE', `/repos/${repoId}/schedules/${id}`)).status).toBe(409);
    const cancelled = await api('POST', `/repos/${repoId}/schedules/${id}/runs/${queued.id}/cancel`);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', finishedAt: expect.any(Number) });
    const one = list.body.runs[1].id as number;
    expect((await api('DELETE', `/repos/${repoId}/schedules/${id}/runs/${one}`)).body).toMatchObject({ id: one, status: 'completed' });
    expect((await api('GET', `/repos/${repoId}/schedules/${id}/runs/${one}`)).status).toBe(404);
    expect((await api('POST', `/repos/${repoId}/schedules/${id}/runs/${one}/cancel`)).status).toBe(404);
    expect((await api('DELETE', `/repos/${repoId}/schedules/${id}/runs`)).body).toEqual({ deleted: 2 });
    expect((await api('GET', `/repos/${repoId}/schedules/${id}/runs`)).body.total).toBe(0);
  });

  it('creates a run per cron trigger, except for paused jobs and jobs with a run still active', async () => {
    const id = (await api('GET', `/repos/${repoId}/schedules`)).body.schedules[1].id as number;
    await api('PATCH', `/repos/${repoId}/schedules/${id}`, { enabled: false });
    expect(await handleTrigger(ctx, id)).toBeUndefined();
    await api('PATCH', `/repos/${repoId}/schedules/${id}`, { enabled: true });
    const active = (await db.pool.query<{ id: number }>(`INSERT INTO agent_schedule_runs (schedule_id, repo_id, status, trigger) VALUES ($1, $2, 'running', 'schedule') RETURNING id`, [id, repoId]))
      .rows[0]!;
    expect(await handleTrigger(ctx, id)).toBeUndefined();
    await db.pool.query(`UPDATE agent_schedule_runs SET status = 'failed' WHERE id = $1`, [active.id]);
    const run = await handleTrigger(ctx, id);
    expect(run).toMatchObject({ trigger: 'schedule', status: 'queued', scheduleId: id });
    expect(await handleTrigger(ctx, 99_999)).toBeUndefined();
    // The daemon's worker takes the triggered run and fails it (no agent server yet).
    await waitFor(async () => ((await api('GET', `/repos/${repoId}/schedules/${id}/runs/${run!.id}`)).body.status === 'failed' ? true : undefined));
  });

  it('fails runs left running by a process that stopped', async () => {
    const id = (await api('GET', `/repos/${repoId}/schedules`)).body.schedules[1].id as number;
    const orphan = (
      await db.pool.query<{ id: number }>(`INSERT INTO agent_schedule_runs (schedule_id, repo_id, status, trigger, queue_job_id) VALUES ($1, $2, 'running', 'manual', $3) RETURNING id`, [
        id,
        repoId,
        '00000000-0000-0000-0000-000000000000',
      ])
    ).rows[0]!;
    expect(await failInterruptedRuns(ctx)).toBe(1);
    expect((await api('GET', `/repos/${repoId}/schedules/${id}/runs/${orphan.id}`)).body).toMatchObject({ status: 'failed', error: expect.stringContaining('Interrupted') });
  });

  it('deletes a job with its runs and its pg-boss schedule', async () => {
    const id = (await api('GET', `/repos/${repoId}/schedules`)).body.schedules[1].id as number;
    const res = await api('DELETE', `/repos/${repoId}/schedules/${id}`);
    expect(res.status).toBe(200);
    expect(await bossSchedule(id)).toBeUndefined();
    expect((await api('GET', `/repos/${repoId}/schedules/${id}`)).status).toBe(404);
    expect(readdirSync(daemon.workspace.scheduleWorktreesDir)).toEqual([]);
  });
});
