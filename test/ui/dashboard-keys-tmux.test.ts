import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

/**
 * Keys that reach the real dashboard together, as from a fast typist or a slow link: tmux sends them in one
 * `send-keys` call, so they arrive in one read. Each key must act on the state the previous one left.
 */

const HAS_TMUX = spawnSync('tmux', ['-V']).status === 0;
if (!HAS_TMUX && process.env.CI) throw new Error('tmux is required in CI (.ci/run installs it).');

const SOCKET = `docdex-keys-${randomBytes(4).toString('hex')}`;
const SESSION = 'keys';

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

const selectedRow = (s: string) => s.split('\n').find((l) => l.startsWith('› ')) ?? '';

describe.skipIf(!HAS_TMUX)('docdex dashboard under tmux: keys sent together', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.pool.query("INSERT INTO sources (name) VALUES ('aaa-one'), ('bbb-two'), ('ccc-three')");
    const env = Object.entries({ ...db.env, TERM: 'xterm-256color', NO_COLOR: '1' })
      .filter((e): e is [string, string] => typeof e[1] === 'string')
      .flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    const script = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} dashboard --screen sources; sleep 60`;
    tmux('new-session', '-d', '-x', '120', '-y', '30', '-s', SESSION, ...env, 'sh', '-c', script);
  });

  afterAll(async () => {
    if (HAS_TMUX) spawnSync('tmux', ['-L', SOCKET, 'kill-server']);
    await db?.drop();
  });

  it('moves two rows on Down Down, and Down Down Enter opens the row reached', async () => {
    await waitForScreen((s) => s.includes('ccc-three') && selectedRow(s).includes('aaa-one'), 'the Sources screen');
    tmux('send-keys', '-t', SESSION, 'Down', 'Down');
    const moved = await waitForScreen((s) => !selectedRow(s).includes('aaa-one'), 'the selection to move');
    // Let any late render settle before reading where the selection ended.
    await new Promise((r) => setTimeout(r, 500));
    expect(selectedRow(tmux('capture-pane', '-p', '-t', SESSION)), moved).toContain('ccc-three');

    tmux('send-keys', '-t', SESSION, 'Up', 'Up', 'Down', 'Down', 'Enter');
    const opened = await waitForScreen((s) => s.includes('Snippets of'), 'a source to open');
    expect(opened).toContain('Snippets of ccc-three');
  });
});
