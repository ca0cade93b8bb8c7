import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/core/errors.js';
import { uploadJobErrors } from '../../src/core/stats/job-errors.js';
import { createUploadFromContent, createUploadFromPaths } from '../../src/core/upload/jobs.js';
import { getUploadJob, listUploadJobs } from '../../src/core/upload/job-rows.js';
import { processUploadFile } from '../../src/core/upload/worker.js';
import type { UploadJob } from '../../src/core/upload/job-rows.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { refusePagesLike } from '../helpers/store-failure.js';

/**
 * Listing upload jobs and their failed files. No workers run here: each job stays queued until the test
 * processes its files itself, so every status is the one the test arranged.
 */

let db: TestDatabase;
let dir: string;
const dbh = () => ({ pool: db.pool, info: db.info });

async function fileIds(jobId: string): Promise<number[]> {
  const { rows } = await db.pool.query<{ id: number }>('SELECT id FROM upload_files WHERE job_id = $1 ORDER BY id', [jobId]);
  return rows.map((r) => r.id);
}

async function setCreated(job: UploadJob, minutesAgo: number): Promise<void> {
  // Explicit times: jobs created in one test run can be microseconds apart, too close to show an order.
  await db.pool.query(`UPDATE upload_jobs SET created_at = now() - make_interval(mins => $2) WHERE id = $1`, [job.id, minutesAgo]);
}

beforeAll(async () => {
  db = await createTestDatabase();
  dir = mkdtempSync(path.join(os.tmpdir(), 'docdex-upload-list-'));
});

afterAll(async () => {
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('listUploadJobs', () => {
  let oldest: UploadJob;
  let middle: UploadJob;
  let newest: UploadJob;

  beforeAll(async () => {
    oldest = await createUploadFromContent(dbh(), db.config, { content: '# Oldest\n\n```\nold()\n```\n', title: 'oldest' });
    middle = await createUploadFromContent(dbh(), db.config, { content: '# Middle\n\n```\nmid()\n```\n', title: 'middle' });
    newest = await createUploadFromContent(dbh(), db.config, { content: '# Newest\n\n```\nnew()\n```\n', title: 'newest' });
    await setCreated(oldest, 30);
    await setCreated(middle, 20);
    await setCreated(newest, 10);
    for (const id of await fileIds(middle.id)) expect(await processUploadFile(db.pool, id)).toBe('done');
  });

  it('lists upload jobs newest first, with their source', async () => {
    const jobs = await listUploadJobs(db.pool, { limit: 10 });
    expect(jobs.map((j) => [j.name, j.status])).toEqual([
      ['newest', 'queued'],
      ['middle', 'completed'],
      ['oldest', 'queued'],
    ]);
    expect(jobs[1]).toMatchObject({ id: middle.id, source_name: 'middle', file_count: 1, processed_files: 1, snippets_extracted: 1 });
  });

  it('keeps to the limit, dropping the oldest', async () => {
    expect((await listUploadJobs(db.pool, { limit: 2 })).map((j) => j.name)).toEqual(['newest', 'middle']);
  });

  it('filters by status', async () => {
    expect((await listUploadJobs(db.pool, { status: ['queued', 'processing'], limit: 10 })).map((j) => j.name)).toEqual(['newest', 'oldest']);
    expect((await listUploadJobs(db.pool, { status: ['completed'], limit: 10 })).map((j) => j.id)).toEqual([middle.id]);
    expect(await listUploadJobs(db.pool, { status: ['failed'], limit: 10 })).toEqual([]);
  });
});

describe('uploadJobErrors', () => {
  it('lists failed files newest first: those the worker failed, then those refused on intake', async () => {
    mkdirSync(path.join(dir, 'mixed'));
    writeFileSync(path.join(dir, 'mixed', 'good.md'), '# Good\n\n```python\nheron_ok = 1\n```\n');
    writeFileSync(path.join(dir, 'mixed', 'binary.md'), Buffer.from([0x23, 0x20, 0, 1, 2]));
    writeFileSync(path.join(dir, 'mixed', 'poison.md'), '# Poison\n\n```python\nheron_poison = 1\n```\n');
    // The store refuses this one page at write time, as a real storage failure would.
    const allowPoison = await refusePagesLike(db.pool, 'poison', 'poisoned page');
    try {
      const job = await createUploadFromPaths(dbh(), db.config, { paths: [path.join(dir, 'mixed')], name: 'mixed', sourceUrl: 'https://docs.example/mixed/' });
      expect(await uploadJobErrors(db.pool, job.id)).toEqual([{ path: 'binary.md', url: null, error: expect.stringMatching(/binary content/), at: expect.any(String) }]);
      for (const id of await fileIds(job.id)) await processUploadFile(db.pool, id);
      expect(await getUploadJob(db.pool, job.id)).toMatchObject({ status: 'completed', processed_files: 3, failed_files: 2 });

      const errors = await uploadJobErrors(db.pool, job.id, { limit: 5 });
      expect(errors.map((e) => [e.path, e.url])).toEqual([
        ['poison.md', 'https://docs.example/mixed/poison.md'],
        ['binary.md', null],
      ]);
      expect(errors[0]!.error).toMatch(/could not be stored: poisoned page/);
      expect(Date.parse(errors[0]!.at)).toBeGreaterThan(Date.parse(errors[1]!.at));
      expect((await uploadJobErrors(db.pool, job.id, { limit: 1 })).map((e) => e.path)).toEqual(['poison.md']);
    } finally {
      await allowPoison();
    }
  });

  it('has nothing for a job without failures, and refuses an id that is not a UUID', async () => {
    const clean = (await listUploadJobs(db.pool, { limit: 10 })).find((j) => j.name === 'middle')!;
    expect(await uploadJobErrors(db.pool, clean.id)).toEqual([]);
    await expect(uploadJobErrors(db.pool, 'not-a-uuid')).rejects.toBeInstanceOf(ValidationError);
  });
});
