import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { docPage, TestSite } from './helpers/site.js';

// Runs the built binary (bin/run.js over dist/): `npm run build` first.
let db: TestDatabase;
let site: TestSite;

beforeAll(async () => {
  db = await createTestDatabase();
  site = await TestSite.start({
    '/': { body: docPage({ title: 'CLI home', links: ['/one', '/two'] }) },
    '/one': { body: docPage({ title: 'one' }) },
    '/two': { body: docPage({ title: 'two' }) },
    '/gone': { status: 404 },
  });
});

afterAll(async () => {
  await site?.close();
  await db?.drop();
});

async function counts(): Promise<{ sources: number; jobs: number }> {
  const { rows } = await db.pool.query<{ sources: number; jobs: number }>('SELECT (SELECT count(*) FROM sources)::int AS sources, (SELECT count(*) FROM crawl_jobs)::int AS jobs');
  return rows[0]!;
}

describe('crawl CLI', () => {
  it('rejects bad input with exit code 2 and creates nothing', async () => {
    const url = site.url('/');
    const cases = [
      ['crawl', 'start', 'not-a-url', '--name', 'x'],
      ['crawl', 'start', url, '--depth', '4'],
      ['crawl', 'start', url, '--concurrency', '0'],
      ['crawl', 'start', url, '--concurrency', '21'],
      ['crawl', 'start', url, '--url-patterns', '/docs/[a'],
    ];
    const results = await Promise.all(cases.map((args) => runCli(args, { env: db.env })));
    results.forEach((r, i) => {
      expect(r.exitCode, `${cases[i]!.join(' ')}: ${String(r.stderr)}`).toBe(2);
      expect(String(r.stderr)).toMatch(/Invalid crawl request/);
    });
    expect(await counts()).toEqual({ sources: 0, jobs: 0 });
  });

  it('crawl start --wait --json runs the crawl in-process and exits 0 with the final job', async () => {
    const r = await runCli(['crawl', 'start', site.url('/'), '--name', 'cli-site', '--version', '1.0', '--depth', '1', '--wait', '--json'], { env: db.env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const job = JSON.parse(String(r.stdout)) as Record<string, unknown>;
    expect(job).toMatchObject({ status: 'completed', name: 'cli-site', version: '1.0', pages_crawled: 3, snippets_stored: 3, max_depth: 1 });
    expect(job.job_id).toBe(job.id);

    const status = await runCli(['crawl', 'status', String(job.job_id).slice(0, 8)], { env: db.env });
    expect(status.exitCode).toBe(0);
    expect(String(status.stdout)).toMatch(/cli-site 1\.0: completed/);
    const list = await runCli(['crawl', 'list', '--json'], { env: db.env });
    expect((JSON.parse(String(list.stdout)) as { total: number; items: Array<{ job_id: string }> }).items[0]!.job_id).toBe(job.job_id);
    const cancel = await runCli(['crawl', 'cancel', String(job.job_id)], { env: db.env });
    expect(cancel.exitCode).toBe(1);
    expect(String(cancel.stderr)).toMatch(/already completed/);
    const missing = await runCli(['crawl', 'status', '00000000-0000-0000-0000-000000000000'], { env: db.env });
    expect(missing.exitCode).toBe(1);
    expect(String(missing.stderr)).toMatch(/No job .*: no crawl or upload job has that id/);
  });

  it('crawl status lists the failed pages; crawl list has a header row', async () => {
    site.set('/broken-links', { body: docPage({ title: 'broken links', links: ['/gone', '/one'] }) });
    const r = await runCli(['crawl', 'start', site.url('/broken-links'), '--name', 'cli-broken', '--depth', '1', '--wait', '--json'], { env: db.env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const job = JSON.parse(String(r.stdout)) as { job_id: string; pages_failed: number };
    expect(job.pages_failed).toBe(1);

    const status = await runCli(['crawl', 'status', job.job_id.slice(0, 8)], { env: db.env });
    expect(status.exitCode, String(status.stderr)).toBe(0);
    expect(String(status.stdout)).toContain('  last errors:');
    expect(String(status.stdout)).toContain(`    ${site.url('/gone')}  HTTP 404`);
    const json = JSON.parse(String((await runCli(['crawl', 'status', job.job_id, '--json'], { env: db.env })).stdout)) as { recent_errors: Array<{ url: string; http_status: number }> };
    expect(json.recent_errors).toMatchObject([{ url: site.url('/gone'), http_status: 404 }]);

    const list = await runCli(['crawl', 'list'], { env: db.env });
    expect(list.exitCode, String(list.stderr)).toBe(0);
    const lines = String(list.stdout).trimEnd().split('\n');
    expect(lines[0]).toMatch(/^JOB +STATUS +PAGES +SNIPPETS +CREATED +NAME$/);
    expect(lines[1]).toMatch(new RegExp(`^${job.job_id.slice(0, 8)} +completed +2/3 +2 +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d +cli-broken$`));
    expect(String(list.stdout)).not.toMatch(/\b1 snippets\b/);
  });

  it('exits non-zero when the crawl fails, printing plain progress lines without a TTY', async () => {
    const r = await runCli(['crawl', 'start', site.url('/gone'), '--name', 'cli-gone', '--wait'], { env: db.env });
    expect(r.exitCode).toBe(1);
    const out = String(r.stdout);
    expect(out).toMatch(/^crawl [0-9a-f]{8} (queued|running): /m);
    expect(out).toMatch(/Crawl of cli-gone failed: No page was crawled: HTTP 404/);
  });

  it('crawl start without --wait queues the job; crawl health reports it stalled with no worker', async () => {
    const r = await runCli(['crawl', 'start', site.url('/'), '--name', 'queued-only'], { env: db.env });
    expect(r.exitCode).toBe(0);
    expect(String(r.stdout)).toMatch(/queued: job [0-9a-f-]{36}/);
    expect(String(r.stderr)).toMatch(/No worker is running/);
    const health = await runCli(['crawl', 'health', '--json'], { env: db.env });
    expect(health.exitCode).toBe(1);
    const report = JSON.parse(String(health.stdout)) as { workers: { live: number }; stalled: Array<{ name: string; reason: string }> };
    expect(report.workers.live).toBe(0);
    expect(report.stalled.find((s) => s.name === 'queued-only')?.reason).toMatch(/no worker/);
  });
});
