import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { freePort, removeDir, tempDir } from './helpers.js';

/** The built binary (`npm run build` first), against a real database, without a daemon. */
describe('docdex agent and docdex manager git-credentials', () => {
  let db: TestDatabase;
  let workspace: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    db = await createTestDatabase();
    workspace = tempDir('docdex-agent-cli-');
    env = { ...db.env, WORKSPACE_PATH: workspace, AGENT_PORT: String(await freePort()) };
  });

  afterAll(async () => {
    await db?.drop();
    removeDir(workspace);
  });

  it('adds, lists and removes git credentials without ever printing the token', async () => {
    const add = await runCli(['manager', 'git-credentials', 'add', '--host', 'https://github.com/', '--username', 'x-access-token', '--token-stdin', '--default', '--json'], {
      env,
      input: 'tok-cli-secret-123\n',
    });
    expect(add.exitCode, String(add.stderr)).toBe(0);
    expect(`${add.stdout}${add.stderr}`).not.toContain('tok-cli-secret-123');
    const { credential } = JSON.parse(String(add.stdout)) as { credential: { id: string; host: string; is_default: boolean } };
    expect(credential).toMatchObject({ host: 'github.com', is_default: true });

    const list = await runCli(['manager', 'git-credentials', 'list'], { env });
    expect(list.exitCode).toBe(0);
    expect(String(list.stdout)).toContain(credential.id);
    expect(String(list.stdout)).not.toContain('tok-cli-secret-123');
    const { rows } = await db.pool.query<{ token: string }>('SELECT token FROM agent_git_credentials WHERE id = $1', [credential.id]);
    expect(rows[0]?.token).toBe('tok-cli-secret-123');

    const noTty = await runCli(['manager', 'git-credentials', 'add', '--host', 'github.com'], { env });
    expect(noTty.exitCode).toBe(2);
    expect(String(noTty.stderr)).toMatch(/--token-stdin/);

    // Asks first, like `skills delete` and `repos remove`: without a terminal it refuses and names --force (issue #51).
    const unasked = await runCli(['manager', 'git-credentials', 'remove', credential.id], { env });
    expect(unasked.exitCode).toBe(2);
    expect(String(unasked.stderr)).toMatch(/^Error: .*no terminal to ask/m);
    expect(String(unasked.stderr)).toMatch(/^Hint: Re-run with --force/m);
    expect((await db.pool.query('SELECT 1 FROM agent_git_credentials WHERE id = $1', [credential.id])).rowCount).toBe(1);

    const remove = await runCli(['manager', 'git-credentials', 'remove', credential.id, '--force'], { env });
    expect(remove.exitCode).toBe(0);
    expect((await runCli(['manager', 'git-credentials', 'remove', credential.id, '--force'], { env })).exitCode).toBe(1);
  });

  it('refuses an empty token on standard input with Error and Hint lines, exit 2 (issue #51)', async () => {
    for (const input of ['', '\n', '   \n']) {
      const empty = await runCli(['manager', 'git-credentials', 'add', '--host', 'github.com', '--token-stdin'], { env, input });
      expect(empty.exitCode).toBe(2);
      expect(String(empty.stderr)).toMatch(/^Error: No token on standard input: it was empty\.$/m);
      expect(String(empty.stderr)).toMatch(/^Hint: Pipe the token in/m);
      expect(String(empty.stderr)).not.toMatch(/ZodError|at .*\.js/);
    }
    expect((await db.pool.query('SELECT 1 FROM agent_git_credentials')).rowCount).toBe(0);
  });

  it('records the desired state and reports that no daemon supervises the agent server', async () => {
    const status = await runCli(['agent', 'status', '--json'], { env });
    expect(status.exitCode).toBe(0);
    expect(JSON.parse(String(status.stdout))).toMatchObject({ desired: 'stopped', status: 'stopped', supervised: false, endpoint: `http://127.0.0.1:${env.AGENT_PORT}` });

    const start = await runCli(['agent', 'start', '--no-wait', '--json'], { env });
    expect(start.exitCode).toBe(0);
    expect(JSON.parse(String(start.stdout))).toMatchObject({ desired: 'running', supervised: false });
    expect(String((await runCli(['agent', 'status'], { env })).stdout)).toMatch(/supervisor: none/);

    const stop = await runCli(['agent', 'stop', '--json'], { env });
    expect(stop.exitCode).toBe(0);
    expect(JSON.parse(String(stop.stdout))).toMatchObject({ desired: 'stopped', status: 'stopped' });
  });

  it('refuses a non-loopback host without a password, and explains a server that is down', async () => {
    const open = await runCli(['agent', 'start'], { env: { ...env, AGENT_HOST: '0.0.0.0' } });
    expect(open.exitCode).toBe(2);
    expect(String(open.stderr)).toMatch(/non-loopback host needs a server password/);
    expect(String(open.stderr)).toMatch(/OPENCODE_SERVER_PASSWORD/);

    const sessions = await runCli(['agent', 'sessions'], { env });
    expect(sessions.exitCode).toBe(1);
    expect(String(sessions.stderr)).toMatch(/is not answering/);
    expect(String(sessions.stderr)).toMatch(/docdex agent start/);

    const logs = await runCli(['agent', 'logs', '--json'], { env });
    expect(logs.exitCode).toBe(0);
    expect(JSON.parse(String(logs.stdout))).toMatchObject({ lines: [] });
  });
});
