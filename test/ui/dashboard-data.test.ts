import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish } from '../../src/core/events/notify.js';
import type { JobEvent } from '../../src/core/events/notify.js';
import { storePage } from '../../src/core/store/pages.js';
import { createUploadFromContent, createUploadFromPaths } from '../../src/core/upload/jobs.js';
import { processUploadFile } from '../../src/core/upload/worker.js';
import { isConnectionError } from '../../src/ui/data/connection.js';
import { createDashboardData } from '../../src/ui/data/postgres.js';
import type { DashboardData } from '../../src/ui/data/types.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { refusePagesLike } from '../helpers/store-failure.js';

/** The dashboard's data port over a real database: what the TUI shows is what the core functions return. */

let db: TestDatabase;
let data: DashboardData;
let sourceId: string;
let jobId: string;
let runningId: string;

async function insertSource(name: string, version: string, config: object): Promise<string> {
  const { rows } = await db.pool.query<{ id: string }>(`INSERT INTO sources (name, version, base_url, crawl_config) VALUES ($1, $2, 'http://127.0.0.1:9/docs/', $3) RETURNING id`, [
    name,
    version,
    JSON.stringify(config),
  ]);
  return rows[0]!.id;
}

async function insertJob(source: string, name: string, status: string): Promise<string> {
  const { rows } = await db.pool.query<{ id: string }>(
    `INSERT INTO crawl_jobs (source_id, name, status, start_urls, pages_found, pages_crawled, pages_failed, snippets_stored)
     VALUES ($1, $2, $3, ARRAY['http://127.0.0.1:9/docs/'], 4, 2, 1, 2) RETURNING id`,
    [source, name, status],
  );
  return rows[0]!.id;
}

function snippet(code: string, position: number) {
  return {
    title: `Example ${position}`,
    description: 'An example.',
    language: 'python',
    code,
    filename: null,
    codeHash: createHash('md5').update(code).digest('hex'),
    position,
    sourceUrl: 'http://127.0.0.1:9/docs/a#intro',
    languageConfidence: 'declared' as const,
  };
}

beforeAll(async () => {
  db = await createTestDatabase();
  data = createDashboardData(db, db.config);
  sourceId = await insertSource('alpha', '1.0', { start_urls: ['http://127.0.0.1:9/docs/'], url_patterns: ['/docs/*', '/api/*'] });
  jobId = await insertJob(sourceId, 'alpha', 'failed');
  await storePage(db.pool, {
    sourceId,
    url: 'http://127.0.0.1:9/docs/a',
    title: 'A',
    markdown: '# A',
    contentHash: 'h1',
    etag: null,
    lastModified: null,
    job: { kind: 'crawl', id: jobId },
    snippets: [snippet('def dashboard_probe():\n    return 1', 0), snippet('print("other")', 1)],
  });
  await db.pool.query(
    `INSERT INTO crawl_frontier (job_id, url, depth, status, last_error, http_status, updated_at) VALUES
       ($1, 'http://127.0.0.1:9/docs/old', 1, 'failed', 'connection refused', NULL, now() - interval '1 minute'),
       ($1, 'http://127.0.0.1:9/docs/new', 1, 'failed', NULL, 404, now()),
       ($1, 'http://127.0.0.1:9/docs/a', 0, 'done', NULL, 200, now())`,
    [jobId],
  );
  const other = await insertSource('beta', '', { start_urls: ['http://127.0.0.1:9/b/'] });
  runningId = await insertJob(other, 'beta', 'running');
});

afterAll(async () => {
  await db?.drop();
});

describe('createDashboardData', () => {
  it('reads statistics and sources with their state', async () => {
    const stats = await data.stats();
    expect(stats.totals).toMatchObject({ sources: 2, documents: 1, snippets: 2 });
    const sources = await data.sources();
    expect(sources.map((s) => [s.name, s.version, s.snippets, s.pages, s.state])).toEqual([
      // Its one page is stored though its newest crawl failed: indexed, as the CLI counts it (issue #49).
      ['alpha', '1.0', 2, 1, 'indexed'],
      ['beta', '', 0, 0, 'running'],
    ]);
    expect(data.display).toContain(db.name);
  });

  it('lists jobs, running first among the newest, and the last page errors newest first', async () => {
    const jobs = await data.jobs({ limit: 10 });
    expect(jobs.map((j) => [j.name, j.status]).sort()).toEqual([
      ['alpha', 'failed'],
      ['beta', 'running'],
    ]);
    expect(jobs.find((j) => j.id === jobId)).toMatchObject({ crawled: 2, failed: 1, total: 4, snippets: 2, kind: 'crawl' });
    expect(await data.jobErrors({ id: jobId, kind: 'crawl' }, { limit: 5 })).toEqual([
      { location: 'http://127.0.0.1:9/docs/new', error: 'HTTP 404' },
      { location: 'http://127.0.0.1:9/docs/old', error: 'connection refused' },
    ]);
  });

  it('searches and lists a source’s snippets', async () => {
    const { hits } = await data.search({ query: 'dashboard_probe', limit: 10 });
    expect(hits[0]).toMatchObject({ title: 'Example 0', language: 'python', sourceName: 'alpha', sourceVersion: '1.0', url: 'http://127.0.0.1:9/docs/a#intro' });
    expect(hits[0]!.code).toContain('def dashboard_probe()');
    expect(await data.search({ query: 'dashboard_probe', language: 'javascript', limit: 10 })).toEqual({ hits: [] });
    const snippets = await data.sourceSnippets(sourceId, { limit: 50 });
    expect(snippets.map((s) => s.title)).toEqual(['Example 0', 'Example 1']);
  });

  it('edits name, version and URL patterns, including removing one', async () => {
    expect(await data.sourceEdit(sourceId)).toEqual({ name: 'alpha', version: '1.0', urlPatterns: ['/docs/*', '/api/*'] });
    await data.updateSource(sourceId, { name: 'alpha-docs', version: '1.1', urlPatterns: ['/docs/*'] });
    expect(await data.sourceEdit(sourceId)).toEqual({ name: 'alpha-docs', version: '1.1', urlPatterns: ['/docs/*'] });
    // A clash with another source is refused and changes nothing.
    await expect(data.updateSource(sourceId, { name: 'beta', version: '', urlPatterns: [] })).rejects.toThrow(/already exists/);
    expect(await data.sourceEdit(sourceId)).toEqual({ name: 'alpha-docs', version: '1.1', urlPatterns: ['/docs/*'] });
  });

  it('cancels and resumes jobs, warning when no worker will pick them up', async () => {
    await data.cancelCrawl(runningId);
    expect((await db.pool.query('SELECT status FROM crawl_jobs WHERE id = $1', [runningId])).rows[0].status).toBe('cancelled');
    await expect(data.cancelCrawl(runningId)).rejects.toThrow(/already cancelled/);
    const resumed = await data.resumeCrawl(runningId);
    expect(resumed.jobId).toBe(runningId);
    expect(resumed.warning).toMatch(/No crawl worker is running/);
    expect((await db.pool.query('SELECT status FROM crawl_jobs WHERE id = $1', [runningId])).rows[0].status).toBe('queued');
  });

  it('follows job events through LISTEN/NOTIFY', async () => {
    const events: JobEvent[] = [];
    const sub = await data.subscribe(
      (e) => events.push(e),
      () => undefined,
    );
    try {
      await publish(db.pool, { event: 'crawl_progress', jobId, kind: 'crawl', state: 'running', counters: { pages_crawled: 3 } });
      for (let i = 0; i < 50 && events.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(events[0]).toMatchObject({ jobId, counters: { pages_crawled: 3 } });
    } finally {
      await sub.close();
    }
  });

  it('reports a dropped event connection as a connection loss', async () => {
    const errors: Error[] = [];
    const sub = await data.subscribe(
      () => undefined,
      (e) => errors.push(e),
    );
    try {
      await db.pool.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'docdex-listen' AND datname = current_database()`);
      for (let i = 0; i < 100 && errors.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(errors.length).toBeGreaterThan(0);
      expect(errors.some(isConnectionError)).toBe(true);
    } finally {
      await sub.close();
    }
  });

  it('fails a ping to an unreachable server with a connection error', async () => {
    const pool = new pg.Pool({ connectionString: 'postgres://u:p@127.0.0.1:1/x', connectionTimeoutMillis: 2000 });
    const dead = createDashboardData({ pool, info: { mode: 'external', config: {}, display: 'nowhere' } }, db.config);
    const error = await dead.ping().catch((e: unknown) => e);
    expect(isConnectionError(error)).toBe(true);
    await pool.end();
  });

  it('deletes a source', async () => {
    await data.deleteSource(sourceId);
    expect((await data.sources()).map((s) => s.name)).toEqual(['beta']);
  });
});

describe('createDashboardData with upload jobs', () => {
  // Its own database: the jobs list is asserted whole, whatever the tests above did to theirs.
  let udb: TestDatabase;
  let port: DashboardData;
  let dir: string;
  let crawlId: string;
  let finishedId: string;
  let queuedId: string;

  beforeAll(async () => {
    udb = await createTestDatabase();
    port = createDashboardData(udb, udb.config);
    dir = mkdtempSync(path.join(os.tmpdir(), 'docdex-dashboard-upload-'));
    const source = await udb.pool.query<{ id: string }>(`INSERT INTO sources (name, version, base_url) VALUES ('gamma', '', 'http://127.0.0.1:9/g/') RETURNING id`);
    const crawl = await udb.pool.query<{ id: string }>(
      `INSERT INTO crawl_jobs (source_id, name, status, start_urls, created_at) VALUES ($1, 'gamma', 'running', ARRAY['http://127.0.0.1:9/g/'], now() - interval '1 hour') RETURNING id`,
      [source.rows[0]!.id],
    );
    crawlId = crawl.rows[0]!.id;

    // No upload worker runs here: the test processes the files itself, so the job's state is known.
    mkdirSync(path.join(dir, 'manual'));
    writeFileSync(path.join(dir, 'manual', 'intro.md'), '# Intro\n\n```python\nibis = 1\n```\n');
    writeFileSync(path.join(dir, 'manual', 'logo.md'), Buffer.from([0x23, 0x20, 0, 1, 2]));
    writeFileSync(path.join(dir, 'manual', 'broken.md'), '# Broken\n\n```python\nibis_broken = 1\n```\n');
    // The store refuses this one page at write time, as a real storage failure would.
    await refusePagesLike(udb.pool, 'broken', 'disk full');
    const finished = await createUploadFromPaths(udb, udb.config, { paths: [path.join(dir, 'manual')], name: 'manual' });
    finishedId = finished.id;
    const files = await udb.pool.query<{ id: number }>('SELECT id FROM upload_files WHERE job_id = $1', [finishedId]);
    for (const f of files.rows) await processUploadFile(udb.pool, f.id);
    await udb.pool.query(`UPDATE upload_jobs SET created_at = now() - interval '30 minutes' WHERE id = $1`, [finishedId]);

    const queued = await createUploadFromContent(udb, udb.config, { content: 'Feed it:\n\n```js\nkiwi.feed()\n```\n', title: 'kiwi notes' });
    queuedId = queued.id;
  });

  afterAll(async () => {
    await udb?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('lists upload jobs with the crawls, active first, counted in files', async () => {
    const jobs = await port.jobs({ limit: 10 });
    expect(jobs.map((j) => [j.kind, j.name, j.status])).toEqual([
      ['upload', 'kiwi notes', 'queued'],
      ['crawl', 'gamma', 'running'],
      ['upload', 'manual', 'completed'],
    ]);
    expect(jobs[0]).toMatchObject({ id: queuedId, total: 1, done: 0 });
    expect(jobs[2]).toMatchObject({ id: finishedId, total: 3, done: 3, crawled: 1, failed: 2, snippets: 1 });
    // Past the limit only the finished job goes: active ones of either kind always show.
    expect((await port.jobs({ limit: 1 })).map((j) => j.id)).toEqual([queuedId, crawlId]);
  });

  it('gives each source the state of its newest job while it is active, else what it holds', async () => {
    const states = Object.fromEntries((await port.sources()).map((s) => [s.name, s.state]));
    expect(states).toEqual({ gamma: 'running', manual: 'indexed', 'kiwi notes': 'queued' });
  });

  it('gives an upload job’s failed files as its errors, newest first', async () => {
    const errors = await port.jobErrors({ id: finishedId, kind: 'upload' }, { limit: 5 });
    expect(errors.map((e) => e.location)).toEqual(['broken.md', 'logo.md']);
    expect(errors[0]!.error).toMatch(/could not be stored: disk full/);
    expect(errors[1]!.error).toMatch(/binary content/);
    expect(await port.jobErrors({ id: queuedId, kind: 'upload' }, { limit: 5 })).toEqual([]);
  });
});
