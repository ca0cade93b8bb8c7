import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { addPage, createSource } from '../search/fixtures.js';

describe('docdex sources', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    const s = await createSource(db.pool, 'FastAPI', '0.110');
    await addPage(db.pool, s, 'https://fastapi.example/tutorial/', [{ title: 'First steps', code: 'app = FastAPI()' }]);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('lists, shows and updates sources', async () => {
    const list = await runCli(['sources', 'list'], { env: db.env });
    expect(list.exitCode, String(list.stderr)).toBe(0);
    expect(String(list.stdout)).toMatch(/FastAPI\s+0\.110\s+crawl\s+1\s+1\s+1/);
    const json = JSON.parse(String((await runCli(['sources', 'list', '--json'], { env: db.env })).stdout));
    expect(json).toMatchObject({ total: 1, items: [{ name: 'FastAPI', snippet_count: 1, page_count: 1, version_count: 1 }] });

    const update = await runCli(['sources', 'update', 'fast api', '--set-version', '0.111', '--exclude', '/release-notes/**', '--depth', '2', '--json'], { env: db.env });
    expect(update.exitCode, String(update.stderr)).toBe(0);
    expect(JSON.parse(String(update.stdout))).toMatchObject({ version: '0.111', crawl_config: { exclude_patterns: ['/release-notes/**'], max_depth: 2 } });
    const show = await runCli(['sources', 'show', 'fastapi'], { env: db.env });
    expect(String(show.stdout)).toContain('FastAPI 0.111');
    expect(String(show.stdout)).toContain('exclude:      /release-notes/**');
    const nothing = await runCli(['sources', 'update', 'fastapi'], { env: db.env });
    expect(nothing.exitCode).toBe(2);
  });

  it('refuses to delete without a terminal unless --force is given', async () => {
    const refused = await runCli(['sources', 'delete', 'fastapi'], { env: db.env });
    expect(refused.exitCode).toBe(2);
    expect(String(refused.stderr)).toContain('--force');
    expect((await db.pool.query('SELECT count(*)::int AS n FROM snippets')).rows[0].n).toBe(1);
    const deleted = await runCli(['sources', 'delete', 'fastapi', '--force', '--json'], { env: db.env });
    expect(deleted.exitCode, String(deleted.stderr)).toBe(0);
    expect(JSON.parse(String(deleted.stdout))).toMatchObject({ name: 'FastAPI', documents: 1, snippets: 1, crawl_jobs: 1 });
    expect((await db.pool.query('SELECT count(*)::int AS n FROM snippets')).rows[0].n).toBe(0);
  });
});
