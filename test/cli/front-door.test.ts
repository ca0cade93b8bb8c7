import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { docPage, serveSite } from '../helpers/site.js';
import type { TestSite } from '../helpers/site.js';

/**
 * The small things a new user met on the way in (issue 49, item 12), each with the real binary: what a read
 * leaves on disk, what a typo is answered with, and how counts read.
 */

describe('the front door, small things', () => {
  let db: TestDatabase;
  let cwd: string;
  let site: TestSite;

  beforeAll(async () => {
    db = await createTestDatabase();
    cwd = mkdtempSync(path.join(os.tmpdir(), 'docdex-front-door-'));
    site = await serveSite({
      '/': docPage('Onepage', [{ heading: 'Connect', prose: 'Open a connection.', code: 'import onepage\nonepage.connect("db")' }]),
    });
  });
  afterAll(async () => {
    await site?.close();
    await db?.drop();
    rmSync(cwd, { recursive: true, force: true });
  });

  it('sandbox status creates nothing in the current directory', async () => {
    const env = { ...db.env };
    delete env.WORKSPACE_PATH;
    const result = await runCli(['sandbox', 'status'], { env, cwd });
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(readdirSync(cwd)).toEqual([]);
    expect(existsSync(path.join(cwd, 'workspace'))).toBe(false);
  });

  it('answers a mistyped flag with the flag meant', async () => {
    const result = await runCli(['search', 'connect', '--sourc', 'onepage'], { env: db.env });
    expect(result.exitCode).toBe(2);
    expect(String(result.stderr)).toMatch(/^Error: Nonexistent flag: --sourc$/m);
    expect(String(result.stderr)).toMatch(/^Hint: Did you mean `--source`\?/m);
    const json = await runCli(['crawl', 'start', site.base, '--dept', '1', '--json'], { env: db.env });
    expect(json.exitCode).toBe(2);
    expect(JSON.parse(String(json.stdout)).hint).toMatch(/Did you mean `--depth`\?/);
  });

  it('answers --depth 9 with the depth rule only', async () => {
    const result = await runCli(['crawl', 'start', site.base, '--depth', '9'], { env: db.env });
    expect(result.exitCode).toBe(2);
    expect(String(result.stderr)).toMatch(/^Error: Invalid crawl request: --depth: /m);
    const hint = /^Hint: (.*)$/m.exec(String(result.stderr))![1]!;
    expect(hint).toBe('--depth 0-3.');
  });

  it('says "1 page", not "1 pages", and a language that no snippet has is a typo with a suggestion', async () => {
    const crawl = await runCli(['crawl', 'start', `${site.base}/`, '--depth', '0', '--name', 'onepage', '--wait'], { env: db.env, timeout: 120_000 });
    expect(crawl.exitCode, String(crawl.stderr)).toBe(0);
    expect(String(crawl.stdout)).toMatch(/completed: 1 page crawled, /);
    const show = await runCli(['sources', 'show', 'onepage'], { env: db.env });
    expect(String(show.stdout)).toMatch(/ on 1 page; 1 version of onepage/);
    const out = path.join(cwd, 'onepage.docdex');
    const exported = await runCli(['export', 'onepage', '-o', out], { env: db.env });
    expect(String(exported.stdout)).toMatch(/: 1 page, 1 snippet\./);
    rmSync(out);
    for (const result of [crawl, show, exported]) expect(String(result.stdout)).not.toMatch(/\b1 (pages|snippets|versions|jobs)\b/);

    const typo = await runCli(['search', 'connect', '-l', 'pyhton'], { env: db.env });
    expect(typo.exitCode).toBe(2);
    expect(String(typo.stderr)).toMatch(/^Error: Unknown language "pyhton": no indexed snippet has it\.$/m);
    expect(String(typo.stderr)).toMatch(/^Hint: Did you mean python\?$/m);
    // A known language with no snippets is simply no results, and an alias still works.
    expect((await runCli(['search', 'connect', '-l', 'ruby'], { env: db.env })).exitCode).toBe(0);
    const alias = await runCli(['search', 'connect', '-l', 'py', '--json'], { env: db.env });
    expect(alias.exitCode, String(alias.stderr)).toBe(0);
    expect(JSON.parse(String(alias.stdout)).items.length).toBeGreaterThan(0);
  }, 180_000);

  it('init on a brand-new database says it created the schema, without the migrations by name', async () => {
    const name = `${db.name}_fresh`;
    await db.pool.query(`CREATE DATABASE ${name}`);
    try {
      const url = new URL(db.url);
      url.pathname = `/${name}`;
      const result = await runCli(['init'], { env: { ...db.env, DATABASE_URL: url.toString() } });
      expect(result.exitCode, String(result.stderr)).toBe(0);
      expect(String(result.stdout)).toMatch(/^created the schema \(version \d+\) on external database /m);
      expect(`${String(result.stdout)}${String(result.stderr)}`).not.toMatch(/\b\d{3}_[a-z]/);
      const again = await runCli(['init'], { env: { ...db.env, DATABASE_URL: url.toString() } });
      expect(String(again.stdout)).toMatch(/^schema already up to date/m);
    } finally {
      await db.pool.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }
  }, 120_000);

  it("states one Node.js minimum: package.json's engines, in the README and in the warning an older Node gets", async (context) => {
    const wanted = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    const [major, minor] = /^>=(\d+)\.(\d+)\.0$/.exec(wanted)!.slice(1);
    expect(readFileSync(path.join(ROOT, 'README.md'), 'utf8')).toContain(`Needs only Node.js ${major}.${minor} or newer`);
    // Debian's own Node (20 here) is older than the minimum: the warning an old Node gets, from the real binary.
    const old = await execa('/usr/bin/node', ['-v'], { reject: false }).catch(() => undefined);
    const version = old?.exitCode === 0 ? old.stdout.trim().replace(/^v/, '') : undefined;
    if (version === undefined || Number(version.split('.')[0]) >= Number(major)) {
      console.warn(`Skipping the old-Node warning: /usr/bin/node is ${version ?? 'missing'}, not older than ${wanted}`);
      context.skip();
    }
    const result = await execa('/usr/bin/node', [path.join(ROOT, 'bin', 'run.js'), '--version'], { env: db.env, extendEnv: false, reject: false });
    expect(result.stderr).toBe(`Warning: docdex needs Node.js ${wanted}; this is ${version}. Install Node.js 24 LTS (or ${major}.${minor} or newer).`);
    expect(result.stdout).toMatch(/^docdex\/\d/);
  });

  it('no CLI output spells a count with a fixed plural', () => {
    // `${n} pages` reads "1 pages"; plural() is the one way to write a count with its noun.
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(file);
        else if (/\.tsx?$/.test(entry.name)) {
          readFileSync(file, 'utf8')
            .split('\n')
            .forEach((line, i) => {
              if (/\$\{[^}]+\} (pages|snippets|files|jobs|versions|libraries)\b(?!\/)/.test(line)) offenders.push(`${path.relative(ROOT, file)}:${i + 1}`);
            });
        }
      }
    };
    for (const dir of ['src/cli', 'src/commands']) walk(path.join(ROOT, dir));
    expect(offenders).toEqual([]);
  });
});

describe('db stop under a running serve', () => {
  let home: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(() => {
    home = mkdtempSync(path.join(os.tmpdir(), 'docdex-db-stop-'));
    env = { ...process.env, DOCDEX_HOME: home, NO_COLOR: '1', LOG_LEVEL: 'warn' };
    for (const key of ['DATABASE_URL', 'DB_HOST', 'WORKSPACE_PATH']) delete env[key];
  });
  afterAll(async () => {
    await runCli(['db', 'stop'], { env });
    rmSync(home, { recursive: true, force: true });
  });

  it('warns that the daemon using the embedded database is cut off', async () => {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const started = await runCli(['db', 'start'], { env, timeout: 180_000 });
    expect(started.exitCode, String(started.stderr)).toBe(0);
    const serve = execa(process.execPath, [path.join(ROOT, 'bin', 'run.js'), 'serve', '--no-workers', '--host', '127.0.0.1', '--port', String(port)], {
      env,
      extendEnv: false,
      reject: false,
    });
    try {
      let up = false;
      for (let i = 0; i < 600 && !up; i++) {
        // Any answer will do: /health says 503 without workers.
        up = await fetch(`http://127.0.0.1:${port}/health`).then(
          () => true,
          () => false,
        );
        if (!up) await new Promise((r) => setTimeout(r, 100));
      }
      expect(up).toBe(true);
      const stopped = await runCli(['db', 'stop'], { env });
      expect(stopped.exitCode, String(stopped.stderr)).toBe(0);
      expect(String(stopped.stdout)).toContain('embedded PostgreSQL stopped');
      expect(String(stopped.stderr)).toMatch(/^Warning: other docdex processes were connected \(docdex-[a-z-]+.*\); .*`docdex serve` answers 503, until `docdex db start`\.$/m);
      const json = JSON.parse(String((await runCli(['db', 'stop', '--json'], { env })).stdout));
      expect(json).toMatchObject({ was_running: false, cut_off: [] });
    } finally {
      serve.kill('SIGTERM');
      await serve;
    }
  }, 300_000);
});
