import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { addPage, createSource } from './fixtures.js';

describe('docdex search', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    const py = await createSource(db.pool, 'python', '3.12');
    await addPage(db.pool, py, 'https://python.example/library/asyncio-task.html', [
      { title: 'Running tasks concurrently | asyncio', description: 'Run awaitable objects concurrently.', code: 'results = await asyncio.gather(a(), b())', anchor: 'gather' },
    ]);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('prints readable results without colour when not on a terminal', async () => {
    const r = await runCli(['search', 'asyncio', 'gahter', '--source', 'pyhton'], { env: db.env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const out = String(r.stdout);
    expect(out).toContain('Also searched for: gahter → gather');
    expect(out).toContain('1. Running tasks concurrently | asyncio');
    expect(out).toContain('https://python.example/library/asyncio-task.html#gather');
    expect(out).toContain('results = await asyncio.gather(a(), b())');
    expect(out).not.toContain('\u001b[');
  });

  it('returns the core result as --json', async () => {
    const r = await runCli(['search', 'asyncio gather', '--language', 'py', '--limit', '5', '--json'], { env: db.env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const json = JSON.parse(String(r.stdout));
    expect(json).toMatchObject({ total: 1, limit: 5, offset: 0, fallback: false });
    expect(json.items[0]).toMatchObject({ source_name: 'python', version: '3.12', language: 'python', match: 'snippet' });
  });

  it('reports bad input as a user error', async () => {
    const r = await runCli(['search', 'x', '--source', 'no-such-library'], { env: db.env });
    expect(r.exitCode).toBe(1);
    expect(String(r.stderr)).toContain('No source matches "no-such-library"');
    expect(String(r.stderr)).not.toMatch(/\n\s+at /);
  });
});
