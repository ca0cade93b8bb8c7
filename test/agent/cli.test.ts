import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { makeBareRepo } from './helpers.js';

// Runs the built binary: `npx tsc -p tsconfig.build.json && npx oclif manifest` first.
let db: TestDatabase;
let workspace: string;
let env: NodeJS.ProcessEnv;
let origin: Awaited<ReturnType<typeof makeBareRepo>>;

beforeAll(async () => {
  db = await createTestDatabase();
  workspace = mkdtempSync(path.join(os.tmpdir(), 'docdex-cli-ws-'));
  env = { ...db.env, WORKSPACE_PATH: workspace };
  origin = await makeBareRepo();
});
afterAll(async () => {
  await db?.drop();
  origin?.cleanup();
  rmSync(workspace, { recursive: true, force: true });
});

const json = (stdout: string) => JSON.parse(stdout) as any;
// Each command is a fresh process that connects to the database: seconds each on a loaded machine.
const SLOW = { timeout: 180_000 };

describe('docdex manager token', SLOW, () => {
  it('prints the token, and --rotate replaces it', async () => {
    const first = await runCli(['manager', 'token'], { env });
    expect(first.exitCode).toBe(0);
    const token = String(first.stdout).trim();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const rotated = json(String((await runCli(['manager', 'token', '--rotate', '--json'], { env })).stdout));
    expect(rotated.token).not.toBe(token);
    expect(rotated.rotated_at).toEqual(expect.any(Number));
  });
});

describe('docdex repos', SLOW, () => {
  it('adds (waiting for the clone), lists, makes a worktree and removes repos', async () => {
    const added = await runCli(['repos', 'add', `file://${origin.bare}`, '--name', 'app', '--json'], { env });
    expect(added.exitCode, String(added.stderr)).toBe(0);
    expect(json(String(added.stdout))).toMatchObject({ local_path: 'app', clone_status: 'ready', default_branch: 'main' });
    expect(existsSync(path.join(workspace, 'repos', 'app', 'README.md'))).toBe(true);

    const worktree = await runCli(['repos', 'worktree', 'add', 'app', 'dev'], { env });
    expect(worktree.exitCode, String(worktree.stderr)).toBe(0);
    expect(String(worktree.stdout)).toContain('app-dev');

    const text = String((await runCli(['repos', 'list'], { env })).stdout);
    expect(text).toMatch(/app\s+ready/);
    expect(text).toMatch(/app-dev\s+ready\s+worktree of/);

    const failed = await runCli(['repos', 'add', `file://${path.join(os.tmpdir(), 'docdex-missing.git')}`, '--name', 'gone'], { env });
    expect(failed.exitCode).toBe(1);
    expect(String(failed.stderr)).toMatch(/^Error: Clone of .* failed/);

    const refused = await runCli(['repos', 'remove', 'app-dev'], { env });
    expect(refused.exitCode).toBe(2);
    expect(String(refused.stderr)).toContain('--force');
    expect((await runCli(['repos', 'remove', 'app-dev', '--force'], { env })).exitCode).toBe(0);
    expect(existsSync(path.join(workspace, 'repos', 'app-dev'))).toBe(false);
  });
});

describe('docdex skills', SLOW, () => {
  it('creates from a file or stdin, lists, shows, edits and deletes skills in both scopes', async () => {
    const bodyFile = path.join(workspace, 'body.md');
    writeFileSync(bodyFile, '# Review\n\nRead every diff twice.\n');
    const created = await runCli(['skills', 'create', 'code-review', '--description', 'Review: "twice" # always', '--body-file', bodyFile, '--json'], { env });
    expect(created.exitCode, String(created.stderr)).toBe(0);
    expect(json(String(created.stdout))).toMatchObject({ name: 'code-review', scope: 'global', description: 'Review: "twice" # always', body: '# Review\n\nRead every diff twice.\n' });

    const fromStdin = await runCli(['skills', 'create', 'release', '--scope', 'project', '--repo', 'app', '-d', 'Release steps', '--body-file', '-'], { env, input: 'Tag, then push.\n' });
    expect(fromStdin.exitCode, String(fromStdin.stderr)).toBe(0);
    expect(existsSync(path.join(workspace, 'repos', 'app', '.opencode', 'skills', 'release', 'SKILL.md'))).toBe(true);

    const listed = json(String((await runCli(['skills', 'list', '--json'], { env })).stdout));
    expect(listed.skills.map((s: { name: string; scope: string }) => `${s.scope}:${s.name}`)).toEqual(['global:code-review', 'project:release']);

    const shown = await runCli(['skills', 'show', 'release', '--scope', 'project', '--repo', 'app'], { env });
    expect(String(shown.stdout)).toContain('description: Release steps');
    expect(String(shown.stdout)).toContain('Tag, then push.');

    const edited = await runCli(['skills', 'edit', 'code-review', '--description', 'New: description', '--json'], { env });
    expect(json(String(edited.stdout))).toMatchObject({ description: 'New: description', body: '# Review\n\nRead every diff twice.\n' });

    // No terminal: no editor, and a clear way out.
    const noEditor = await runCli(['skills', 'edit', 'code-review'], { env });
    expect(noEditor.exitCode).toBe(2);
    expect(String(noEditor.stderr)).toContain('--description or --body-file');

    const badName = await runCli(['skills', 'create', '../escape', '-d', 'x', '--body-file', bodyFile], { env });
    expect(badName.exitCode).toBe(2);
    expect(String(badName.stderr)).toContain('Invalid skill name');

    expect((await runCli(['skills', 'delete', 'code-review', '--force'], { env })).exitCode).toBe(0);
    const gone = json(String((await runCli(['skills', 'list', '--json'], { env })).stdout));
    expect(gone.skills.map((x: { name: string }) => x.name)).toEqual(['release']);
  });
});

describe('the agent commands explain every refusal (issue #51)', SLOW, () => {
  it('prints an Error line and a Hint line, with exit 2 for invalid input', async () => {
    const cases: Array<[string[], number, RegExp]> = [
      [['skills', 'create', '../escape', '-d', 'x', '--body-file', '-'], 2, /^Error: Invalid skill name/m],
      [['skills', 'show', 'release'], 1, /^Error: No global skill named "release"\.$/m],
      [['skills', 'show', 'release', '--scope', 'project'], 2, /^Error: Project skills need a repoId/m],
      [['repos', 'worktree', 'add', 'app', 'bad..branch'], 2, /^Error: Invalid branch name/m],
      [['manager', 'git-identity', 'set', '--name', 'Ada', '--email', 'not-an-address'], 2, /^Error: Invalid git identity email/m],
      [['manager', 'speech', 'set', 'tts', '--provider', 'openai'], 2, /^Error: Invalid tts setting apiKey: needs an API key or an endpoint\.$/m],
    ];
    // A project skill of the same name, so `skills show` without --scope has something to point at.
    await runCli(['repos', 'add', `file://${origin.bare}`, '--name', 'app'], { env });
    await runCli(['skills', 'create', 'release', '--scope', 'project', '--repo', 'app', '-d', 'Release steps', '--body-file', '-'], { env, input: 'Tag.\n' });
    for (const [args, exitCode, error] of cases) {
      const result = await runCli(args, { env, input: 'body\n' });
      const stderr = String(result.stderr);
      expect(result.exitCode, `${args.join(' ')}: ${stderr}`).toBe(exitCode);
      expect(stderr, args.join(' ')).toMatch(error);
      expect(stderr, args.join(' ')).toMatch(/^Hint: \S.+$/m);
    }
    expect(String((await runCli(['skills', 'show', 'release'], { env })).stderr)).toContain('--scope project --repo REPO');
  });
});

describe('docdex sandbox status, enable and disable, and manager git-identity', SLOW, () => {
  it('never claims enforcement is on while it is off, and says when a change applies', async () => {
    const off = await runCli(['sandbox', 'status'], { env: { ...env, SANDBOX_IMAGE: 'not-built-here' } });
    expect(off.exitCode, String(off.stderr)).toBe(0);
    expect(String(off.stdout)).toContain('Sandbox enforcement is off in the settings.');
    expect(String(off.stdout)).toContain('  config:  no local image named not-built-here');
    expect(String(off.stdout)).not.toContain('Sandbox enforcement is on');

    const identity = await runCli(['manager', 'git-identity', 'set', '--name', 'Ada Lovelace', '--email', 'ada@example.com', '--json'], { env });
    expect(json(String(identity.stdout))).toEqual({ name: 'Ada Lovelace', email: 'ada@example.com' });
    expect(json(String((await runCli(['manager', 'git-identity', 'show', '--json'], { env })).stdout))).toEqual({ name: 'Ada Lovelace', email: 'ada@example.com' });

    // Turning it off needs no host check; the next start applies it.
    const disabled = await runCli(['sandbox', 'disable', '--git-credentials', '--json'], { env });
    expect(json(String(disabled.stdout))).toMatchObject({
      enabled: false,
      git_credentials: true,
      git_identity: { name: 'Ada Lovelace', email: 'ada@example.com' },
      agent_server: { status: 'stopped' },
      takes_effect: 'on-start',
    });
    const status = json(String((await runCli(['sandbox', 'status', '--json'], { env })).stdout));
    expect(status.enforcement).toMatchObject({ enabled: false, git_credentials: true });
    expect((await runCli(['manager', 'git-identity', 'clear'], { env })).exitCode).toBe(0);
    expect(json(String((await runCli(['manager', 'git-identity', 'show', '--json'], { env })).stdout))).toEqual({ name: null, email: null });
  });
});
