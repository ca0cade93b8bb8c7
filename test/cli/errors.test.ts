import { execa } from 'execa';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closestCommands, unknownCommandError, withCliNames } from '../../src/cli/errors.js';
import { BIN, runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

const STACK = /\n\s+at /;

describe('CLI errors: one format', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it('prints a parse error with --json as one {error, code, hint} object and exit 2', async () => {
    for (const args of [
      ['search', 'json', '--frobnicate', '--json'],
      ['search', '--json'],
      ['search', 'x', '--limit', 'abc', '--json'],
      ['crawl', 'list', '--status', 'bogus', '--json'],
    ]) {
      const result = await runCli(args, { env: db.env });
      expect(result.exitCode, args.join(' ')).toBe(2);
      expect(String(result.stdout).length, args.join(' ')).toBeLessThan(1000);
      const body = JSON.parse(String(result.stdout)) as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual(['code', 'error', 'hint']);
      expect(body.code).toBe('usage_error');
      expect(String(body.hint)).toContain(`docdex ${args[0]}`);
    }
  });

  it('prints a parse error without --json as one Error: line and one Hint: line, no help dump', async () => {
    const result = await runCli(['search', 'json', '--frobnicate'], { env: db.env });
    expect(result.exitCode).toBe(2);
    expect(String(result.stdout)).toBe('');
    expect(String(result.stderr).trimEnd().split('\n')).toEqual(['Error: Nonexistent flag: --frobnicate', 'Hint: Run `docdex search --help` for its arguments and flags.']);
    const missing = await runCli(['search'], { env: db.env });
    expect(missing.exitCode).toBe(2);
    expect(String(missing.stderr).trimEnd().split('\n')).toHaveLength(2);
    expect(String(missing.stderr)).toMatch(/^Error: Missing 1 required arg: query/);
  });

  it('names the closest commands, as typed, for an unknown command', async () => {
    const result = await runCli(['serach', 'json'], { env: db.env });
    expect(result.exitCode).toBe(2);
    expect(String(result.stderr).trimEnd().split('\n')).toEqual(['Error: Unknown command: docdex serach.', 'Hint: Did you mean `docdex search`?']);
    const json = await runCli(['crawl', 'lsit', '--json'], { env: db.env });
    expect(json.exitCode).toBe(2);
    expect(JSON.parse(String(json.stdout))).toEqual({ error: 'Unknown command: docdex crawl lsit.', code: 'unknown_command', hint: 'Did you mean `docdex crawl list`?' });
  });

  it('names CLI flags, not API fields, in crawl request errors', async () => {
    const result = await runCli(['crawl', 'start', 'http://127.0.0.1:9/', '--concurrency', '50'], { env: db.env });
    expect(result.exitCode).toBe(2);
    expect(String(result.stderr)).toContain('--concurrency');
    expect(String(result.stderr)).not.toMatch(/max_concurrent_crawls|max_depth|start_urls|url_patterns/);
  });

  it('says a host could not be resolved, not that robots.txt is unreachable', async () => {
    // .invalid never resolves (RFC 2606).
    const result = await runCli(['crawl', 'start', 'http://no-such-host.invalid/docs/', '--wait', '--depth', '0'], { env: db.env, timeout: 120_000 });
    expect(result.exitCode).toBe(1);
    expect(String(result.stdout)).toContain('could not resolve host no-such-host.invalid');
    expect(String(result.stdout)).not.toContain('robots.txt');
  });

  it('adds stack traces, with their causes, under DEBUG=docdex*', async () => {
    const plain = await runCli(['crawl', 'start', 'ftp://x.test/'], { env: db.env });
    expect(String(plain.stderr)).not.toMatch(STACK);
    for (const args of [['crawl', 'start', 'ftp://x.test/'], ['search', '--frobnicate'], ['serach']]) {
      const debug = await runCli(args, { env: { ...db.env, DEBUG: 'docdex*' } });
      expect(debug.exitCode, args.join(' ')).toBe(2);
      expect(String(debug.stderr), args.join(' ')).toMatch(STACK);
      expect(String(debug.stderr)).toMatch(/^Error: /m);
    }
  });

  it('ends quietly with exit 0 when the reader of its output goes away (EPIPE)', async () => {
    const source = await db.pool.query<{ id: string }>("INSERT INTO sources (name) VALUES ('pipe') RETURNING id");
    await db.pool.query("INSERT INTO crawl_jobs (source_id, name, status, start_urls) SELECT $1, 'pipe-' || i, 'completed', ARRAY['https://example.com/' || i] FROM generate_series(1, 500) AS i", [
      source.rows[0]!.id,
    ]);
    const docdex = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)}`;
    for (const script of [`set -o pipefail; ${docdex} crawl list --limit 500 | head -1 >/dev/null`, `set -o pipefail; ${docdex} crawl list --limit 500 --json | head -1 >/dev/null`]) {
      const result = await execa('bash', ['-c', script], { env: db.env, extendEnv: false, reject: false, timeout: 60_000 });
      expect(result.exitCode, String(result.stderr)).toBe(0);
      expect(String(result.stderr)).toBe('');
    }
  });
});

describe('closest commands', () => {
  const ids = ['search', 'serve', 'crawl:list', 'crawl:start', 'sources:list', 'agent:stop', 'manager:git-credentials:add'];

  it('suggests commands a typo away, written with spaces', () => {
    expect(closestCommands(['serach', 'json'], ids)).toEqual(['search']);
    expect(closestCommands(['crawl', 'lsit'], ids)).toEqual(['crawl list']);
    expect(closestCommands(['agent', 'frob'], ids)).toEqual([]);
    expect(unknownCommandError(['manager', 'git-credentials', 'ad'], ids).message).toBe('Unknown command: docdex manager git-credentials ad.');
    expect(unknownCommandError(['--frobnicate'], ids).message).toBe('Unknown flag: --frobnicate.');
  });

  it('never throws and never names an internal id, whatever is typed', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 20 }), { maxLength: 5 }), (words) => {
        const error = unknownCommandError(words, ids);
        expect(error.exitCode).toBe(2);
        expect(error.hint).not.toMatch(/`docdex [^`]*:/);
      }),
    );
  });

  it('rewrites API field names to flags', () => {
    expect(withCliNames('start_urls.0: bad; max_concurrent_crawls 1-20')).toBe('URL 1: bad; --concurrency 1-20');
  });
});
