import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribe } from '../../src/core/events/notify.js';
import type { JobEvent, Subscription } from '../../src/core/events/notify.js';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { docPage, TestSite } from '../crawl/helpers/site.js';
import { answerFor, startStubServer } from './stub-server.js';
import type { StubServer } from './stub-server.js';

// Runs the built binary (bin/run.js over dist/): `npm run build` first. The model is a real HTTP server on
// 127.0.0.1 answering /v1/chat/completions the way an OpenAI-compatible endpoint does.

const MODEL_DESCRIPTION =
  'Prints the greeting for this page through the standard output stream, which is the smallest complete program the guide uses to check that a fresh zeppelin installation really works.';

let db: TestDatabase;
let stub: StubServer;
let site: TestSite;
let events: JobEvent[];
let subscription: Subscription;

function llmEnv(baseUrl: string): NodeJS.ProcessEnv {
  return { ...db.env, CODE_ENABLE_LLM_EXTRACTION: 'true', CODE_LLM_BASE_URL: baseUrl, CODE_LLM_EXTRACTION_MODEL: 'stub-model' };
}

interface JobJson {
  job_id?: string;
  id: string;
  status: string;
  llm_enhance: boolean;
  llm_pages_total: number;
  llm_pages_done: number;
  llm_pages_failed: number;
  llm_snippets_enhanced: number;
}

async function sourceSnippets(name: string): Promise<Array<{ description: string; llm_enhanced: boolean }>> {
  const { rows } = await db.pool.query<{ description: string; llm_enhanced: boolean }>(
    `SELECT s.description, s.llm_enhanced FROM snippets s JOIN sources src ON src.id = s.source_id WHERE src.name = $1 AND s.kind = 'snippet' ORDER BY s.id`,
    [name],
  );
  return rows;
}

async function waitForEnhancing(name: string): Promise<string> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const { rows } = await db.pool.query<{ id: string }>("SELECT id FROM crawl_jobs WHERE name = $1 AND status = 'enhancing'", [name]);
    if (rows[0]) return rows[0].id;
    if (Date.now() > deadline) throw new Error(`job ${name} never reached enhancing`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function statesOf(jobId: string): string[] {
  return events.filter((e) => e.jobId === jobId).map((e) => `${e.event}:${e.state}`);
}

beforeAll(async () => {
  [db, stub] = await Promise.all([createTestDatabase(), startStubServer()]);
  // Slow enough that the model is still answering when the pages are all stored: the job must wait for it.
  stub.setDefault((body) => ({ content: answerFor(body, () => ({ description: MODEL_DESCRIPTION })), delayMs: 1500 }));
  site = await TestSite.start({
    '/': { body: docPage({ title: 'Zeppelin home', links: ['/one', '/two'], code: 'print("home")' }) },
    '/one': { body: docPage({ title: 'Zeppelin one', code: 'print("one")' }) },
    '/two': { body: docPage({ title: 'Zeppelin two', code: 'print("two")' }) },
  });
  events = [];
  subscription = await subscribe(db.info, (e) => events.push(e), { channels: ['crawl_progress', 'upload_progress', 'job_complete'] });
});

afterAll(async () => {
  await subscription?.close();
  await site?.close();
  await stub?.close();
  await db?.drop();
});

describe('LLM enhancement inside the job', () => {
  it('crawl start --wait returns only once the model has enhanced every snippet, after an enhancing stage', async () => {
    const r = await runCli(['crawl', 'start', site.url('/'), '--name', 'zeppelin', '--depth', '1', '--wait', '--json'], { env: llmEnv(stub.baseUrl), timeout: 120_000 });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const job = JSON.parse(String(r.stdout)) as JobJson;
    expect(job).toMatchObject({ status: 'completed', llm_enhance: true, llm_pages_total: 3, llm_pages_done: 3, llm_pages_failed: 0 });
    expect(job.llm_snippets_enhanced).toBeGreaterThanOrEqual(3);
    const snippets = await sourceSnippets('zeppelin');
    expect(snippets.length).toBe(3);
    expect(snippets.every((s) => s.llm_enhanced && s.description === MODEL_DESCRIPTION)).toBe(true);
    expect(stub.chatRequests().length).toBeGreaterThanOrEqual(1);
    // The model's words are searchable the moment --wait returns.
    const search = await runCli(['search', 'zeppelin installation', '--source', 'zeppelin', '--json'], { env: db.env });
    expect(search.exitCode, String(search.stderr)).toBe(0);
    expect(String(search.stdout)).toContain(MODEL_DESCRIPTION);
    const states = statesOf(job.id);
    expect(states).toContain('crawl_progress:enhancing');
    expect(states.indexOf('crawl_progress:enhancing')).toBeLessThan(states.indexOf('job_complete:completed'));
    const status = await runCli(['crawl', 'status', job.id], { env: db.env });
    expect(String(status.stdout)).toMatch(/llm: {6}3\/3 pages through the LLM, \d+ snippets enhanced\n/);
  });

  it('a recrawl of the unchanged site makes no model call and completes without enhancing', async () => {
    const before = stub.chatRequests().length;
    const r = await runCli(['crawl', 'start', site.url('/'), '--name', 'zeppelin', '--depth', '1', '--wait', '--json'], { env: llmEnv(stub.baseUrl), timeout: 120_000 });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const job = JSON.parse(String(r.stdout)) as JobJson;
    expect(job).toMatchObject({ status: 'completed', llm_pages_total: 0 });
    expect(stub.chatRequests().length).toBe(before);
    expect(statesOf(job.id)).not.toContain('crawl_progress:enhancing');
  });

  it('upload --wait waits for the model too', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'docdex-llm-upload-'));
    try {
      const file = path.join(dir, 'airship.md');
      await writeFile(file, '# Airship guide\n\nStart the airship:\n\n```python\nairship.start(altitude=300)\n```\n\nLand it:\n\n```python\nairship.land()\n```\n');
      const r = await runCli(['upload', file, '--name', 'airship', '--wait', '--json'], { env: llmEnv(stub.baseUrl), timeout: 120_000 });
      expect(r.exitCode, String(r.stderr)).toBe(0);
      const job = JSON.parse(String(r.stdout)) as JobJson;
      expect(job).toMatchObject({ status: 'completed', llm_enhance: true, llm_pages_total: 1, llm_pages_done: 1, llm_pages_failed: 0 });
      const snippets = await sourceSnippets('airship');
      expect(snippets.length).toBe(2);
      expect(snippets.every((s) => s.llm_enhanced && s.description === MODEL_DESCRIPTION)).toBe(true);
      expect(statesOf(job.id)).toContain('upload_progress:enhancing');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('LLM enhancement inside the job: failures and cancel', () => {
  it('a model that refuses every request ends the job completed, with the enhancement errors counted, not hanging', async () => {
    const refusing = await startStubServer();
    refusing.setDefault(() => ({ status: 401, body: { error: { message: 'bad key', type: 'invalid_request_error' } } }));
    try {
      site.set('/refused', { body: docPage({ title: 'Refused', code: 'print("refused")' }) });
      const started = Date.now();
      const r = await runCli(['crawl', 'start', site.url('/refused'), '--name', 'refused', '--depth', '0', '--wait', '--json'], { env: llmEnv(refusing.baseUrl), timeout: 120_000 });
      expect(r.exitCode, String(r.stderr)).toBe(0);
      expect(Date.now() - started).toBeLessThan(60_000);
      const job = JSON.parse(String(r.stdout)) as JobJson;
      expect(job).toMatchObject({ status: 'completed', llm_pages_total: 1, llm_pages_done: 1, llm_pages_failed: 1, llm_snippets_enhanced: 0 });
      expect(refusing.chatRequests().length).toBeGreaterThanOrEqual(1);
      // The snippets stay as extracted, and searchable.
      const snippets = await sourceSnippets('refused');
      expect(snippets.map((s) => s.llm_enhanced)).toEqual([false]);
      const plain = await runCli(['crawl', 'status', job.id], { env: db.env });
      expect(String(plain.stdout)).toMatch(/llm: {6}1\/1 pages through the LLM, 0 snippets enhanced, 1 with enhancement errors/);
    } finally {
      await refusing.close();
    }
  });

  it('crawl cancel stops a job in enhancing: no model call after it, the follower exits with the cancelled job', async () => {
    const slow = await startStubServer();
    slow.setDefault((body) => ({ content: answerFor(body, () => ({ description: MODEL_DESCRIPTION })), delayMs: 3000 }));
    try {
      const pages = ['a', 'b', 'c', 'd'];
      site.set('/fleet', { body: docPage({ title: 'Fleet', links: pages.map((p) => `/fleet/${p}`), code: 'print("fleet")' }) });
      for (const p of pages) site.set(`/fleet/${p}`, { body: docPage({ title: `Fleet ${p}`, code: `print("fleet ${p}")` }) });
      const env = { ...llmEnv(slow.baseUrl), CODE_LLM_MAX_CONCURRENCY: '1' };
      const follower = runCli(['crawl', 'start', site.url('/fleet'), '--name', 'fleet', '--depth', '1', '--wait', '--json'], { env, timeout: 120_000 });
      const jobId = await waitForEnhancing('fleet');
      const cancel = await runCli(['crawl', 'cancel', jobId], { env: db.env });
      expect(cancel.exitCode, String(cancel.stderr)).toBe(0);
      const askedAtCancel = slow.chatRequests().length;
      const r = await follower;
      expect(r.exitCode).toBe(1);
      expect(JSON.parse(String(r.stdout))).toMatchObject({ job_id: jobId, status: 'cancelled' });
      expect(askedAtCancel).toBeLessThan(5);
      // Give a worker that ignored the cancel time to send its next request.
      await new Promise((resolve) => setTimeout(resolve, 4000));
      expect(slow.chatRequests().length).toBe(askedAtCancel);
      const queued = await db.pool.query(`SELECT 1 FROM pgboss.job WHERE name = 'docdex-llm-enhance' AND group_id = $1 AND state IN ('created', 'retry')`, [jobId]);
      expect(queued.rowCount).toBe(0);
    } finally {
      await slow.close();
    }
  });

  it('a model server that is down is one clear error before any work starts', async () => {
    const down = await startStubServer();
    const baseUrl = down.baseUrl;
    await down.close();
    const r = await runCli(['crawl', 'start', site.url('/'), '--name', 'down', '--wait'], { env: llmEnv(baseUrl), timeout: 60_000 });
    expect(r.exitCode).toBe(1);
    expect(String(r.stderr)).toMatch(/^Error: The LLM endpoint .* is unreachable/m);
    const jobs = await db.pool.query("SELECT 1 FROM crawl_jobs WHERE name = 'down'");
    expect(jobs.rowCount).toBe(0);
  });
});
