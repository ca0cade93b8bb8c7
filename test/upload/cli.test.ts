import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

describe('docdex upload', () => {
  let db: TestDatabase;
  let dir: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    dir = mkdtempSync(path.join(os.tmpdir(), 'docdex-upload-cli-'));
  });
  afterAll(async () => {
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('uploads a directory and waits for it, listing skipped and failed files', async () => {
    mkdirSync(path.join(dir, 'docs', 'guide'), { recursive: true });
    writeFileSync(path.join(dir, 'docs', 'guide', 'start.md'), '# Start\n\nCreate a narwhal:\n\n```python\nnarwhal = Narwhal(tusk=True)\n```\n');
    writeFileSync(path.join(dir, 'docs', 'broken.txt'), Buffer.from([0x61, 0xff, 0x62]));
    writeFileSync(path.join(dir, 'docs', 'diagram.svg'), '<svg/>');
    const r = await runCli(['upload', path.join(dir, 'docs'), '--name', 'narwhal', '--version', '1.0', '--wait'], { env: db.env, timeout: 120_000 });
    // A failed file fails the command, naming the file; the others are indexed all the same.
    expect(r.exitCode, String(r.stderr)).toBe(1);
    expect(String(r.stdout)).toContain('skipped diagram.svg: unsupported format');
    expect(String(r.stdout)).toContain('Indexed: 1 of 2 files, 1 snippet, into narwhal');
    expect(String(r.stderr)).toContain('error broken.txt: not valid UTF-8');
    expect(String(r.stderr)).toMatch(/^Error: 1 of 2 files failed: broken\.txt\.$/m);

    const search = JSON.parse(String((await runCli(['search', 'narwhal', '--json'], { env: db.env })).stdout));
    expect(search.items[0]).toMatchObject({ code: 'narwhal = Narwhal(tusk=True)', source_name: 'narwhal', version: '1.0' });
  });

  it('queues without --wait and reports a missing path clearly', async () => {
    writeFileSync(path.join(dir, 'one.md'), '# One\n\n```\necho one\n```\n');
    const queued = await runCli(['upload', path.join(dir, 'one.md'), '--json'], { env: db.env });
    expect(queued.exitCode, String(queued.stderr)).toBe(0);
    expect(JSON.parse(String(queued.stdout))).toMatchObject({ name: 'one', status: 'queued', file_count: 1, source_type: 'upload' });
    const missing = await runCli(['upload', path.join(dir, 'nope.md')], { env: db.env });
    expect(missing.exitCode).toBe(2);
    expect(String(missing.stderr)).toContain(`No such file or directory: ${path.join(dir, 'nope.md')}`);
  });
});
