import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRepository, createSkillFile } from '../../src/core/agent/manage.js';
import { readSettings } from '../../src/core/agent/settings.js';
import { ensureManagerToken } from '../../src/core/agent/token.js';
import { loadConfig } from '../../src/core/config.js';
import { freePort } from '../agent-server/helpers.js';
import { makeBareRepo } from '../agent/helpers.js';
import { BIN, ROOT } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

/**
 * `docdex dashboard --screen agent`, the real built binary in a 120×32 tmux pane: a cloned repository, a
 * skill, no agent server running, and a settings switch turned with a key that lands in PostgreSQL. One
 * capture per section is kept under test-output/tui/ for review.
 */

const HAS_TMUX = spawnSync('tmux', ['-V']).status === 0;
if (!HAS_TMUX) {
  console.warn('dashboard-agent-tmux: tmux is not installed; skipping the terminal end-to-end test.');
  if (process.env.CI) throw new Error('tmux is required in CI (.ci/run installs it).');
}

const OUT = path.join(ROOT, 'test-output', 'tui');
const SOCKET = `docdex-agent-${randomBytes(4).toString('hex')}`;
const SESSION = 'agent';

function tmux(...args: string[]): string {
  return execFileSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });
}

async function waitForScreen(test: (s: string) => boolean, what: string, timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = tmux('capture-pane', '-p', '-t', SESSION);
    if (test(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`Timed out waiting for ${what}. Last screen:\n${last}`);
}

function save(name: string, text: string): void {
  mkdirSync(OUT, { recursive: true });
  writeFileSync(path.join(OUT, `${name}.txt`), text);
}

describe.skipIf(!HAS_TMUX)('docdex dashboard --screen agent under tmux', () => {
  let db: TestDatabase;
  let ws: string;
  let origin: Awaited<ReturnType<typeof makeBareRepo>>;
  let token: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    ws = mkdtempSync(path.join(os.tmpdir(), 'docdex-agent-tmux-'));
    origin = await makeBareRepo();
    const env = { ...db.env, WORKSPACE_PATH: ws, AGENT_PORT: String(await freePort()), TERM: 'xterm-256color', NO_COLOR: '1' };
    const config = loadConfig(env);
    await addRepository(config, { source: `file://${origin.bare}`, name: 'app' }, { wait: true });
    await createSkillFile(config, { name: 'release-steps', description: 'How a release is cut', body: 'Tag, then publish.' }, { scope: 'global' });
    token = (await ensureManagerToken(db.pool)).token;
    const flags = Object.entries(env)
      .filter((e): e is [string, string] => typeof e[1] === 'string')
      .flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    const script = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} dashboard --screen agent; echo "dashboard exit=$?"; sleep 60`;
    tmux('new-session', '-d', '-x', '120', '-y', '32', '-s', SESSION, ...flags, 'sh', '-c', script);
  }, 120_000);

  afterAll(async () => {
    if (HAS_TMUX) spawnSync('tmux', ['-L', SOCKET, 'kill-server']);
    await db?.drop();
    origin?.cleanup();
    if (ws) rmSync(ws, { recursive: true, force: true });
  });

  it('opens on the agent screen with the repository, and reaches every section with the arrow keys', async () => {
    const repos = await waitForScreen((s) => /app +ready +main/.test(s), 'the Repositories section');
    save('agent-repositories', repos);
    expect(repos).toContain('5 Agent');

    tmux('send-keys', '-t', SESSION, 'Right');
    const sessions = await waitForScreen((s) => s.includes('Agent server not running'), 'the Sessions section');
    save('agent-sessions', sessions);
    expect(sessions).toContain('docdex agent start');

    tmux('send-keys', '-t', SESSION, 'Right', 'Right');
    const skills = await waitForScreen((s) => s.includes('release-steps'), 'the Skills section');
    save('agent-skills', skills);
    expect(skills).toMatch(/release-steps +global +- +How a release is cut/);

    tmux('send-keys', '-t', SESSION, 'Right');
    const settings = await waitForScreen((s) => s.includes('Manager token:'), 'the Settings section');
    save('agent-settings', settings);
    expect(settings).toContain(`Manager token: ${'•'.repeat(12)}${token.slice(-4)}`);
    expect(settings).not.toContain(token.slice(0, 8));
    expect(settings).toContain('Sandbox enforcement: off');
  });

  it('turns credential forwarding on with c, stored where the CLI reads it, and quits cleanly with q', async () => {
    tmux('send-keys', '-t', SESSION, 'c');
    await waitForScreen((s) => s.includes('Git credential forwarding: on'), 'forwarding to be on');
    expect((await readSettings(db.pool)).preferences.sandbox.gitCredentials).toBe(true);
    tmux('send-keys', '-t', SESSION, 'q');
    await waitForScreen((s) => s.includes('dashboard exit=0'), 'the dashboard to exit');
  });
});
