import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createUploadFromContent, createUploadFromPaths } from '../../src/core/upload/jobs.js';
import { processUploadFile } from '../../src/core/upload/worker.js';
import { createDashboardData } from '../../src/ui/data/postgres.js';
import type { DashboardData } from '../../src/ui/data/types.js';
import { Jobs } from '../../src/ui/screens/Jobs.js';
import { Sources } from '../../src/ui/screens/Sources.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { lines, renderWithProviders } from './render.js';

/**
 * Issue #49, through the dashboard's screens over a real database: a library whose README was indexed while its
 * docs site's crawl failed is `indexed`, as `docdex add --wait` counts it (it showed `failed`); an upload job
 * that completed with failed files is `partial`, as `docdex jobs status` says (it showed `completed`).
 */

let db: TestDatabase;
let data: DashboardData;
let dir: string;
let view: ReturnType<typeof renderWithProviders> | undefined;

async function processAll(jobId: string): Promise<void> {
  const files = await db.pool.query<{ id: number }>('SELECT id FROM upload_files WHERE job_id = $1', [jobId]);
  for (const f of files.rows) await processUploadFile(db.pool, f.id);
}

beforeAll(async () => {
  db = await createTestDatabase();
  data = createDashboardData(db, db.config);
  dir = mkdtempSync(path.join(os.tmpdir(), 'docdex-partial-states-'));
  // zod's shape: its README indexed (an upload job), then its docs site's crawl failed, newest.
  const readme = await createUploadFromContent(db, db.config, { content: 'Parse:\n\n```js\nzlike.parse(1)\n```\n', title: 'zodlike' });
  await processAll(readme.id);
  const { rows } = await db.pool.query<{ source_id: string }>('SELECT source_id FROM upload_jobs WHERE id = $1', [readme.id]);
  await db.pool.query(
    `INSERT INTO crawl_jobs (source_id, name, status, start_urls, error, created_at, completed_at)
     VALUES ($1, 'zodlike', 'failed', ARRAY['http://127.0.0.1:9/docs/'], 'the host refused the connection', now() + interval '1 minute', now() + interval '1 minute')`,
    [rows[0]!.source_id],
  );
  // A source whose only job failed before storing anything is still `failed`.
  const broken = await createUploadFromContent(db, db.config, { content: 'nothing', title: 'brokenlib' });
  await db.pool.query(`UPDATE upload_jobs SET status = 'failed', error = 'disk full', created_at = now() - interval '1 hour' WHERE id = $1`, [broken.id]);
  await db.pool.query(`UPDATE upload_files SET status = 'failed' WHERE job_id = $1`, [broken.id]);
  // An upload whose binary file was refused: completed, with one failed file.
  mkdirSync(path.join(dir, 'manual'));
  writeFileSync(path.join(dir, 'manual', 'intro.md'), '# Intro\n\n```python\nibis = 1\n```\n');
  writeFileSync(path.join(dir, 'manual', 'logo.md'), Buffer.from([0x23, 0x20, 0, 1, 2]));
  const manual = await createUploadFromPaths(db, db.config, { paths: [path.join(dir, 'manual')], name: 'manual' });
  await processAll(manual.id);
  await db.pool.query(`UPDATE upload_jobs SET created_at = now() - interval '30 minutes' WHERE id = $1`, [manual.id]);
});

afterEach(() => view?.unmount());

afterAll(async () => {
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the dashboard counts a library as the CLI does', () => {
  it('lists a library with an indexed origin and a failed one as indexed; one with no documents as failed', async () => {
    view = renderWithProviders(<Sources active width={100} height={20} />, { data });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('zodlike'), { timeout: 10_000 });
    const row = (name: string) => lines(view!.lastFrame()).find((l) => l.includes(name)) ?? '';
    expect(row('zodlike')).toMatch(/\bindexed\b/);
    expect(row('zodlike')).not.toMatch(/\bfailed\b/);
    expect(row('brokenlib')).toMatch(/\bfailed\b/);
    expect(row('manual')).toMatch(/\bindexed\b/);
  });

  it('shows an upload job that completed with failed files as partial, with its failed count', async () => {
    view = renderWithProviders(<Jobs active width={100} height={24} />, { data });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('manual'), { timeout: 10_000 });
    const frame = lines(view.lastFrame());
    const at = frame.findIndex((l) => / manual /.test(l));
    expect(frame[at]).toMatch(/ manual +partial +/);
    expect(frame[at + 1]).toContain('1/2 files · 1 failed');
  });
});
