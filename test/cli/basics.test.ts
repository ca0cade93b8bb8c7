import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

describe('the built docdex binary', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it('prints its version and help', async () => {
    const version = await runCli(['--version'], { env: db.env });
    expect(version.exitCode).toBe(0);
    expect(String(version.stdout)).toMatch(/^docdex\/\d+\.\d+\.\d+/);
    const help = await runCli(['--help'], { env: db.env });
    expect(help.exitCode).toBe(0);
    for (const topic of ['init', 'db']) expect(String(help.stdout)).toContain(topic);
  });

  it("describes every topic in its own words, not with its first command's description", async () => {
    // Without an entry in package.json, oclif shows the description of the topic's alphabetically first
    // command: `crawl  Cancel a queued or running crawl`.
    const topics = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { oclif: { topics: Record<string, { description: string }> } }).oclif.topics;
    const dirs = readdirSync(path.join(ROOT, 'src', 'commands'), { recursive: true, withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) =>
        path
          .relative(path.join(ROOT, 'src', 'commands'), path.join(e.parentPath, e.name))
          .split(path.sep)
          .join(':'),
      );
    expect(dirs.length).toBeGreaterThan(5);
    for (const dir of dirs) expect(topics[dir]?.description, dir).toBeTruthy();
    // Help wraps long lines; compare with the whitespace collapsed.
    const help = String((await runCli(['--help'], { env: db.env })).stdout).replace(/\s+/g, ' ');
    for (const topic of dirs.filter((d) => !d.includes(':'))) expect(help).toContain(` ${topic} ${topics[topic]!.description}`);
  });

  it('init is idempotent and reports the schema version', async () => {
    const first = await runCli(['init', '--json'], { env: db.env });
    expect(first.exitCode, String(first.stderr)).toBe(0);
    expect(JSON.parse(String(first.stdout))).toMatchObject({ mode: 'external', dropped: false, applied: [] });
    const second = await runCli(['init'], { env: db.env });
    expect(second.exitCode).toBe(0);
    expect(String(second.stdout)).toContain('schema already up to date');
  });

  it('refuses init --drop without a TTY unless --force is given', async () => {
    await db.pool.query("INSERT INTO sources (name) VALUES ('keep-me')");
    const refused = await runCli(['init', '--drop'], { env: db.env });
    expect(refused.exitCode).toBe(2);
    expect(String(refused.stderr)).toContain('Refusing to continue without confirmation');
    expect(String(refused.stderr)).toContain('--force');
    expect(String(refused.stderr)).not.toMatch(/\n\s+at /); // no stack trace
    expect((await db.pool.query('SELECT count(*)::int AS n FROM sources')).rows[0].n).toBe(1);

    const forced = await runCli(['init', '--drop', '--force'], { env: db.env });
    expect(forced.exitCode, String(forced.stderr)).toBe(0);
    expect((await db.pool.query('SELECT count(*)::int AS n FROM sources')).rows[0].n).toBe(0);
  });

  it('reports an invalid variable in one line with exit code 2 and no secret', async () => {
    const bad = await runCli(['db', 'status'], { env: { ...db.env, MAX_CONCURRENT_CRAWLS: '50' } });
    expect(bad.exitCode).toBe(2);
    expect(String(bad.stderr).trim().split('\n')[0]).toBe('Error: Invalid environment variable MAX_CONCURRENT_CRAWLS="50": expected a whole number from 1 to 20.');
    const secret = await runCli(['db', 'status'], { env: { ...db.env, DATABASE_URL: 'nope://user:hunter2@x' } });
    expect(secret.exitCode).toBe(2);
    expect(String(secret.stderr)).not.toContain('hunter2');
  });

  it('explains an unreachable external database without a stack trace', async () => {
    const result = await runCli(['init'], { env: { ...db.env, DATABASE_URL: 'postgres://u:p@127.0.0.1:1/x' } });
    expect(result.exitCode).toBe(1);
    expect(String(result.stderr)).toContain('cannot connect');
    expect(String(result.stderr)).not.toMatch(/\n\s+at /);
  });
});
