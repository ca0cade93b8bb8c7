import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { docPage, TestSite } from '../crawl/helpers/site.js';

/**
 * Issue #49, item 6, through the real binary: one way to list, follow, cancel and resume any job. Upload jobs
 * (what `upload`, `add` and `sources recrawl` print) are followed like crawls; `sources recrawl` waits;
 * `crawl list --source` takes a library name.
 */

let db: TestDatabase;
let site: TestSite;
let docs: string;

async function cli(args: string[], timeout = 120_000): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const r = await runCli(args, { env: db.env, timeout });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

function writeDocs(dir: string, count: number): string {
  const root = path.join(docs, dir);
  mkdirSync(root, { recursive: true });
  for (let i = 0; i < count; i++) writeFileSync(path.join(root, `page-${i}.md`), `# Page ${i}\n\nHow to call it:\n\n\`\`\`js\nwidgetCall${i}({ size: ${i} })\n\`\`\`\n`);
  return root;
}

function jobIdIn(text: string): string {
  const match = /job ([0-9a-f]{8}-[0-9a-f-]{27})/.exec(text);
  expect(match, text).not.toBeNull();
  return match![1]!;
}

beforeAll(async () => {
  db = await createTestDatabase();
  site = await TestSite.start({
    '/': { body: docPage({ title: 'Gadget home', siteName: 'Gadget 1.2 documentation', links: ['/one'] }) },
    '/one': { body: docPage({ title: 'one', siteName: 'Gadget 1.2 documentation' }) },
  });
  docs = mkdtempSync(path.join(os.tmpdir(), 'docdex-jobs-'));
}, 60_000);

afterAll(async () => {
  await site?.close();
  rmSync(docs, { recursive: true, force: true });
  await db?.drop();
});

describe('docdex jobs', () => {
  it('follows an upload job that upload printed: crawl status and jobs status both know it; --wait runs it to the end', async () => {
    const queued = await cli(['upload', writeDocs('manual', 3), '--name', 'manual', '--version', '2.0']);
    expect(queued.exitCode, queued.stderr).toBe(0);
    const id = jobIdIn(queued.stdout);

    const crawlStatus = await cli(['crawl', 'status', id.slice(0, 8)]);
    expect(crawlStatus.exitCode, crawlStatus.stderr).toBe(0);
    expect(crawlStatus.stdout).toContain(`manual 2.0: queued (upload job ${id})`);

    const followed = await cli(['jobs', 'status', id, '--wait']);
    expect(followed.exitCode, followed.stderr).toBe(0);
    expect(followed.stdout).toMatch(/^Indexed: 3 of 3 files, 3 snippets, into manual@2\.0/m);
    const json = JSON.parse((await cli(['jobs', 'status', id, '--json'])).stdout) as { kind: string; status: string; snippets_extracted: number };
    expect(json).toMatchObject({ kind: 'upload', status: 'completed', snippets_extracted: 3 });
  }, 240_000);

  it('cancels an upload job and resumes it: every file is processed once', async () => {
    const queued = await cli(['upload', writeDocs('cancelled', 4), '--name', 'cancelled-manual', '--json']);
    const id = (JSON.parse(queued.stdout) as { id: string }).id;
    const cancelled = await cli(['jobs', 'cancel', id]);
    expect(cancelled.exitCode, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toContain(`Cancelled upload job ${id} of cancelled-manual after 0 of 4 files. Resume with \`docdex jobs resume ${id}\`.`);
    const status = await cli(['jobs', 'status', id]);
    expect(status.stdout).toContain('cancelled-manual: cancelled (upload job');
    const again = await cli(['jobs', 'cancel', id]);
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toMatch(/^Error: Upload job .* is already cancelled\.$/m);

    const resumed = await cli(['jobs', 'resume', id.slice(0, 8), '--wait']);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/^Indexed: 4 of 4 files, 4 snippets, into cancelled-manual/m);
    const { rows } = await db.pool.query<{ processed_files: number; snippet_count: number }>(
      `SELECT j.processed_files, s.snippet_count FROM upload_jobs j JOIN sources s ON s.id = j.source_id WHERE j.id = $1`,
      [id],
    );
    expect(rows[0]).toEqual({ processed_files: 4, snippet_count: 4 });
    const done = await cli(['jobs', 'resume', id]);
    expect(done.exitCode).toBe(1);
    expect(done.stderr).toMatch(/is completed: there is nothing to resume/);
  }, 240_000);

  it('follows a queued crawl, lists every kind together, and filters by library name', async () => {
    const queued = await cli(['crawl', 'start', site.url('/'), '--depth', '1']);
    expect(queued.exitCode, queued.stderr).toBe(0);
    const id = jobIdIn(queued.stdout);
    const followed = await cli(['jobs', 'status', id, '--wait']);
    expect(followed.exitCode, followed.stderr).toBe(0);
    expect(followed.stdout).toMatch(/^Crawl of gadget completed: 2 pages crawled/m);

    const list = await cli(['jobs', 'list']);
    expect(list.exitCode, list.stderr).toBe(0);
    const lines = list.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^JOB +KIND +STATUS +PROGRESS +SNIPPETS +CREATED +NAME$/);
    expect(lines[1]).toMatch(new RegExp(`^${id.slice(0, 8)} +crawl +completed +2/2 pages +2 +\\S+ \\S+ +gadget 1\\.2$`));
    expect(list.stdout).toMatch(/ upload +completed +4\/4 files +4 .* cancelled-manual$/m);

    const byName = JSON.parse((await cli(['jobs', 'list', '--source', 'manual', '--json'])).stdout) as { items: Array<{ kind: string; name: string }> };
    expect(byName.items.map((j) => `${j.kind} ${j.name}`)).toEqual(['upload manual']);
    const crawls = JSON.parse((await cli(['crawl', 'list', '--source', 'gadget', '--json'])).stdout) as { items: Array<{ job_id: string }> };
    expect(crawls.items.map((j) => j.job_id)).toEqual([id]);
    const missing = await cli(['jobs', 'status', 'ffffffff']);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toMatch(/^Error: No job "ffffffff": no crawl or upload job has that id\.$/m);
  }, 240_000);

  it('sources recrawl --wait runs the recrawl to the end and says how it ended', async () => {
    const recrawl = await cli(['sources', 'recrawl', 'gadget', '--wait']);
    expect(recrawl.exitCode, recrawl.stderr).toBe(0);
    expect(recrawl.stdout).toMatch(/^Crawl of gadget completed: .* \(job [0-9a-f-]+\)\.$/m);
    const queued = await cli(['sources', 'recrawl', 'gadget']);
    expect(queued.stdout).toMatch(/^Recrawl queued: crawl job [0-9a-f-]+\. Follow it with `docdex jobs status [0-9a-f-]+ --wait`/m);
    const id = jobIdIn(queued.stdout);
    const cancelled = await cli(['jobs', 'cancel', id]);
    expect(cancelled.exitCode, cancelled.stderr).toBe(0);
    const resumed = await cli(['jobs', 'resume', id, '--wait']);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/^Crawl of gadget completed/m);
  }, 240_000);
});
