import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/core/errors.js';
import { subscribe } from '../../src/core/events/notify.js';
import type { JobEvent } from '../../src/core/events/notify.js';
import { searchSnippets } from '../../src/core/search/search.js';
import { createUploadFromContent, createUploadFromPaths } from '../../src/core/upload/jobs.js';
import { getUploadJob, waitForUpload } from '../../src/core/upload/job-rows.js';
import { startUploadWorkers } from '../../src/core/upload/worker.js';
import type { UploadWorkers } from '../../src/core/upload/worker.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { refusePagesLike } from '../helpers/store-failure.js';

let db: TestDatabase;
let workers: UploadWorkers;
let dir: string;

function write(rel: string, content: string | Buffer): string {
  const file = path.join(dir, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
  return file;
}

beforeAll(async () => {
  db = await createTestDatabase();
  workers = await startUploadWorkers({ pool: db.pool, info: db.info }, db.config, { pollingIntervalSeconds: 0.5 });
  dir = mkdtempSync(path.join(os.tmpdir(), 'docdex-upload-test-'));
});

afterAll(async () => {
  await workers?.stop();
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const dbh = () => ({ pool: db.pool, info: db.info });

describe('upload', () => {
  it('uploads a directory tree with every format, skipping what is not docs', async () => {
    const root = path.join(dir, 'tree');
    write('tree/guide.md', '# Guide\n\nInstall the quokkalib package:\n\n```bash\npip install quokkalib\n```\n');
    write('tree/nested/deep/notes.markdown', '# Notes\n\nCall the frobnicate helper:\n\n```python\nquokkalib.frobnicate(level=3)\n```\n');
    write('tree/page.mdx', 'import X from \'./x\'\n\n# MDX page\n\nRender it:\n\n```jsx\n<QuokkaWidget size="large" />\n```\n');
    write('tree/plain.txt', 'Plain text notes.\n\n    quokka_plain_block = True\n');
    write('tree/api.rst', 'API\n===\n\nUse the client:\n\n.. code-block:: python\n\n   client = quokkalib.Client(rst_mode=True)\n');
    write('tree/manual.adoc', '= Manual\n\nStart the server:\n\n[source,shell]\n----\nquokka-server --adoc-port 8080\n----\n');
    write('tree/logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0]));
    write('tree/node_modules/dep/readme.md', '# Dependency\n\n```js\nshouldNotBeIndexed()\n```\n');
    write('tree/.git/description.md', '# git\n\n```\nshouldNotBeIndexed()\n```\n');
    write('tree/.hidden/secret.md', '# hidden\n\n```\nshouldNotBeIndexed()\n```\n');

    const events: JobEvent[] = [];
    const sub = await subscribe(db.info, (e) => events.push(e));
    const job = await createUploadFromPaths(dbh(), db.config, { paths: [root], version: '1.0' });
    expect(job).toMatchObject({ name: 'tree', source_type: 'upload', version: '1.0', file_count: 6, status: 'queued', processed_files: 0 });
    expect(job.skipped_files).toEqual([{ path: 'logo.png', reason: 'unsupported format' }]);

    const progress: JobEvent[] = [];
    const done = await waitForUpload(dbh(), job.id, (e) => progress.push(e));
    // waitForUpload may see the finished job before this listener's NOTIFY arrives: a second connection.
    const deadline = Date.now() + 5000;
    while (!events.some((e) => e.jobId === job.id && e.event === 'job_complete') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await sub.close();
    expect(done).toMatchObject({ status: 'completed', file_count: 6, processed_files: 6, failed_files: 0, file_errors: [] });
    expect(done.snippets_extracted).toBeGreaterThanOrEqual(6);
    expect(done.completed_at).not.toBeNull();

    const mine = events.filter((e) => e.jobId === job.id);
    expect(mine.filter((e) => e.event === 'upload_progress').length).toBeGreaterThanOrEqual(6);
    expect(mine.filter((e) => e.event === 'job_complete')).toHaveLength(1);
    expect(mine.at(-1)).toMatchObject({ event: 'job_complete', state: 'completed', counters: { processed_files: 6 } });

    const docs = await db.pool.query<{ url: string; source_type: string }>('SELECT url, source_type FROM documents WHERE upload_job_id = $1 ORDER BY url', [job.id]);
    expect(docs.rows.map((r) => path.basename(new URL(r.url).pathname)).sort()).toEqual(['api.rst', 'guide.md', 'manual.adoc', 'notes.markdown', 'page.mdx', 'plain.txt']);
    expect(docs.rows.every((r) => r.source_type === 'uploaded')).toBe(true);
    const leaked = await db.pool.query("SELECT 1 FROM snippets WHERE code LIKE '%shouldNotBeIndexed%'");
    expect(leaked.rowCount).toBe(0);

    // Uploaded content is searchable through the same search, with detected languages.
    for (const [query, code] of [
      ['frobnicate', 'quokkalib.frobnicate(level=3)'],
      ['QuokkaWidget', '<QuokkaWidget size="large" />'],
      ['rst_mode', 'client = quokkalib.Client(rst_mode=True)'],
      ['adoc port', 'quokka-server --adoc-port 8080'],
      ['quokka_plain_block', 'quokka_plain_block = True'],
      ['install quokkalib', 'pip install quokkalib'],
    ] as const) {
      const r = await searchSnippets(db.pool, { query, source: 'tree' });
      expect(r.items[0]?.code, query).toBe(code);
    }
    const py = await searchSnippets(db.pool, { query: 'frobnicate', language: 'python' });
    expect(py.items[0]?.source_name).toBe('tree');
  });

  it('gives each bad file its own error and processes the others', async () => {
    write('mixed/good.md', '# Good\n\n```python\nwombat_ok = 1\n```\n');
    write('mixed/binary.md', Buffer.concat([Buffer.from('# x\n'), Buffer.from([0, 1, 2, 3])]));
    write('mixed/latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    const big = write('mixed/huge.md', '');
    truncateSync(big, 50 * 1024 * 1024);
    // A file the store rejects at write time (here: a trigger in this test database) fails alone, and leaves
    // no document or snippet behind.
    const allowPoison = await refusePagesLike(db.pool, 'poison', 'poisoned page');
    write('mixed/poison.md', '# Poison\n\n```python\nwombat_poison = 1\n```\n');

    const job = await createUploadFromPaths(dbh(), db.config, { paths: [path.join(dir, 'mixed')], name: 'mixed-docs' });
    expect(job.file_count).toBe(5);
    expect(job.failed_files).toBe(3);
    const done = await waitForUpload(dbh(), job.id);
    expect(done).toMatchObject({ status: 'completed', file_count: 5, processed_files: 5, failed_files: 4 });
    const errors = Object.fromEntries(done.file_errors.map((e) => [e.path, e.error]));
    expect(errors['binary.md']).toMatch(/binary content/);
    expect(errors['latin1.txt']).toMatch(/not valid UTF-8 \(first bad byte at offset 3\)/);
    expect(errors['huge.md']).toMatch(/50\.0 MB; the limit is 10 MB/);
    expect(errors['poison.md']).toMatch(/poisoned page/);
    expect(errors['good.md']).toBeUndefined();

    const stored = await db.pool.query<{ url: string }>('SELECT url FROM documents WHERE upload_job_id = $1', [job.id]);
    expect(stored.rows.map((r) => path.basename(r.url))).toEqual(['good.md']);
    const poison = await db.pool.query("SELECT 1 FROM snippets WHERE code LIKE '%wombat_poison%'");
    expect(poison.rowCount).toBe(0);
    expect((await searchSnippets(db.pool, { query: 'wombat_ok' })).items[0]?.code).toBe('wombat_ok = 1');
    const files = await db.pool.query<{ status: string; content: string | null }>('SELECT status, content FROM upload_files WHERE job_id = $1', [job.id]);
    expect(files.rows.map((f) => f.status).sort()).toEqual(['done', 'failed']);
    expect(files.rows.every((f) => f.content === null)).toBe(true);
    await allowPoison();
  });

  it('refuses uploads with nothing usable in them, writing nothing', async () => {
    const before = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM upload_jobs');
    await expect(createUploadFromPaths(dbh(), db.config, { paths: [path.join(dir, 'missing.md')] })).rejects.toThrow(/No such file or directory/);
    mkdirSync(path.join(dir, 'empty'));
    await expect(createUploadFromPaths(dbh(), db.config, { paths: [path.join(dir, 'empty')] })).rejects.toThrow(/contains no files: nothing to upload/);
    write('only-images/a.png', 'x');
    await expect(createUploadFromPaths(dbh(), db.config, { paths: [path.join(dir, 'only-images')] })).rejects.toThrow(/only unsupported files/);
    const bin = write('single.bin.md', Buffer.from([0x23, 0x20, 0, 0, 0]));
    const error = await createUploadFromPaths(dbh(), db.config, { paths: [bin] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toBe('single.bin.md: binary content (contains NUL bytes); upload text files only.');
    await expect(createUploadFromPaths(dbh(), db.config, { paths: [write('x.pdf', 'x')] })).rejects.toThrow(/unsupported format ".pdf"/);
    await expect(createUploadFromContent(dbh(), db.config, { content: new Uint8Array([0xff, 0xfe, 0x41]) })).rejects.toThrow(/not valid UTF-8/);
    await expect(createUploadFromContent(dbh(), db.config, { content: '   ' })).rejects.toThrow(/empty/);
    await expect(createUploadFromContent(dbh(), db.config, { content: 'x', sourceUrl: 'ftp://x' })).rejects.toThrow(/http\(s\) URL/);
    const after = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM upload_jobs');
    expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
  });

  it('uploads pasted markdown under its source URL', async () => {
    const job = await createUploadFromContent(dbh(), db.config, {
      content: 'Make a platypus:\n\n```python\nplatypus = Platypus(bill="duck")\n```\n',
      title: 'Platypus guide',
      sourceUrl: 'https://docs.example/platypus',
    });
    expect(job).toMatchObject({ name: 'Platypus guide', file_count: 1 });
    const done = await waitForUpload(dbh(), job.id);
    expect(done).toMatchObject({ status: 'completed', snippets_extracted: 1 });
    const r = await searchSnippets(db.pool, { query: 'platypus' });
    expect(r.items[0]).toMatchObject({ code: 'platypus = Platypus(bill="duck")', source_name: 'Platypus guide' });
    expect(r.items[0]!.source_url.startsWith('https://docs.example/platypus')).toBe(true);
    expect((await getUploadJob(db.pool, job.id)).status).toBe('completed');

    // Without a source URL, a file upload (POST /upload/file) gets a stable upload:// URL from its name.
    const file = await createUploadFromContent(dbh(), db.config, {
      content: new TextEncoder().encode('Call it:\n\n```js\nechidna.spike()\n```\n'),
      filename: 'echidna.md',
    });
    expect(await waitForUpload(dbh(), file.id)).toMatchObject({ status: 'completed', name: 'echidna', snippets_extracted: 1 });
    const found = await searchSnippets(db.pool, { query: 'echidna spike' });
    expect(found.items[0]).toMatchObject({ code: 'echidna.spike()', source_url: 'upload://echidna/echidna.md', language: 'javascript' });
  });
});
