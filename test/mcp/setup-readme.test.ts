import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { execa } from 'execa';
import type { ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedServerState } from '../../src/core/db/embedded.js';
import { BIN, ROOT, runCli } from '../helpers/cli.js';

/**
 * The README's MCP set-up as a user pastes it (issue #49): the inspector commands with the real
 * `@modelcontextprotocol/inspector` CLI (a devDependency, found by `npx` in the checkout), the opencode
 * configurations with the real `opencode mcp list`, and the configurations for HTTP without a token with the SDK
 * client. Everything runs against an embedded database in a home of its own, as a user's index is, with a PATH
 * whose `docdex` is this checkout's, and a private HOME (the inspector and opencode write there).
 */

const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const OPENCODE = path.join(ROOT, 'node_modules', '.bin', 'opencode');

/** A `###` section of the README: from its heading to the next heading. */
function section(heading: string): string {
  const start = README.indexOf(`\n### ${heading}`);
  expect(start, heading).toBeGreaterThan(-1);
  const ends = ['\n### ', '\n## '].map((h) => README.indexOf(h, start + 5)).filter((i) => i > 0);
  return README.slice(start, ends.length > 0 ? Math.min(...ends) : undefined);
}

function blocks(text: string, lang: 'sh' | 'json'): string[] {
  return [...text.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1]!);
}

/** A shell block's commands: continuation lines joined, comments kept apart as the group's title. */
function commands(block: string): Array<{ title: string; command: string }> {
  const out: Array<{ title: string; command: string }> = [];
  let title = '';
  for (const line of block.replace(/\\\n\s*/g, '').split('\n')) {
    if (line.startsWith('#')) title = line.slice(1).trim();
    else if (line.trim()) out.push({ title, command: line.trim() });
  }
  return out;
}

let scratch: string;
let home: string;
let env: NodeJS.ProcessEnv;
let port: number;
interface Daemon {
  child: ResultPromise;
  exited: boolean;
}
const daemons: Daemon[] = [];

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: free } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return free;
}

async function sh(command: string, extra: NodeJS.ProcessEnv = {}, options: { without?: string[] } = {}) {
  const full = { ...env, ...extra };
  for (const name of options.without ?? []) delete full[name];
  return execa('sh', ['-c', command], { cwd: ROOT, env: full, extendEnv: false, reject: false, timeout: 180_000 });
}

/** `docdex serve` on the test's port (as the README's 7654), with `extra` in its environment; resolves once it answers. */
async function startDaemon(extra: NodeJS.ProcessEnv = {}): Promise<Daemon> {
  const child = execa(process.execPath, [BIN, 'serve', '--port', String(port)], { cwd: scratch, env: { ...env, ...extra }, extendEnv: false, reject: false, stdin: 'ignore' });
  const daemon: Daemon = { child, exited: false };
  void child.then(() => (daemon.exited = true));
  daemons.push(daemon);
  const deadline = Date.now() + 120_000;
  for (;;) {
    const up = await fetch(`http://127.0.0.1:${port}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return daemon;
    if (daemon.exited || Date.now() > deadline) throw new Error(`docdex serve did not start: ${String((await child).stderr)}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

async function stopDaemon(daemon: Daemon): Promise<void> {
  daemon.child.kill('SIGINT');
  await daemon.child;
}

const onPort = (text: string) => text.replaceAll('127.0.0.1:7654', `127.0.0.1:${port}`);

beforeAll(async () => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'docdex-mcp-setup-'));
  home = path.join(scratch, 'index-home');
  const bin = path.join(scratch, 'bin');
  mkdirSync(bin);
  mkdirSync(path.join(scratch, 'home'));
  symlinkSync(BIN, path.join(bin, 'docdex'));
  // No DATABASE_URL: the embedded server, as a user's index. DOCDEX_HOME is the shell's, which the inspector drops.
  env = { PATH: `${bin}:${path.dirname(process.execPath)}:/usr/bin:/bin`, HOME: path.join(scratch, 'home'), DOCDEX_HOME: home, CRAWL_DELAY: '0', NO_COLOR: '1' };
  port = await freePort();
  const notes = path.join(scratch, 'setup-notes.md');
  writeFileSync(notes, '# Setup notes\n\n## Spin\n\n```python\nsetup_notes.spin_widget(3)\n```\n');
  const uploaded = await runCli(['upload', notes, '--name', 'setup-notes', '--wait'], { env, timeout: 240_000 });
  expect(uploaded.exitCode, String(uploaded.stderr)).toBe(0);
}, 300_000);

afterAll(async () => {
  for (const daemon of daemons) if (!daemon.exited) daemon.child.kill('SIGKILL');
  if (home) await runCli(['db', 'stop'], { env });
  await runCli(['db', 'stop'], { env: { ...env, DOCDEX_HOME: path.join(scratch, 'home', '.local', 'share', 'docdex') } });
  rmSync(scratch, { recursive: true, force: true });
});

describe("the README's MCP set-up", () => {
  const inspector = () => commands(blocks(section('Check a setup with the MCP Inspector'), 'sh')[0]!);

  it('runs the stdio inspector commands as written, against the home given with -e', async () => {
    const cmds = inspector();
    const exportLine = cmds.find((c) => c.command.startsWith('export DOCDEX_HOME='))!.command;
    const stdio = cmds.filter((c) => c.title === 'stdio' && c.command.startsWith('npx'));
    expect(stdio).toHaveLength(2);
    for (const { command } of stdio) expect(command).toContain('-e DOCDEX_HOME="$DOCDEX_HOME"');
    const list = await sh(`${exportLine} && ${stdio[0]!.command}`);
    expect(list.exitCode, String(list.stderr)).toBe(0);
    expect(String(list.stdout)).toContain('"get_page_markdown"');
    const call = await sh(`${exportLine} && ${stdio[1]!.command}`);
    expect(call.exitCode, String(call.stderr)).toBe(0);
    expect(String(call.stdout)).toMatch(/No library matches/);
    // The same command asking for the library in this home finds it: the server read the home given with -e.
    const mine = await sh(`${exportLine} && ${stdio[1]!.command.replace('query=fastapi', 'query=setup-notes')}`);
    expect(String(mine.stdout)).toMatch(/setup-notes/);
    // The database was running before (the upload started it): the server leaves it running.
    expect(embeddedServerState(home)).toBe('running');
  }, 300_000);

  it('stops the embedded database a stdio server had to start, when the client disconnects', async () => {
    expect((await runCli(['db', 'stop'], { env })).exitCode).toBe(0);
    const cmds = inspector();
    const exportLine = cmds.find((c) => c.command.startsWith('export DOCDEX_HOME='))!.command;
    const list = await sh(`${exportLine} && ${cmds.find((c) => c.title === 'stdio' && c.command.startsWith('npx'))!.command}`);
    expect(list.exitCode, String(list.stderr)).toBe(0);
    expect(String(list.stdout)).toContain('"get_content"');
    // The inspector does not wait for the server to exit: it stops the database on its way out.
    await expect.poll(() => embeddedServerState(home), { timeout: 60_000, interval: 500 }).not.toBe('running');
    // Without -e (the old README's command): the default home of the private HOME, a new index. It warns of
    // that on stderr, and its database does not outlive the inspector.
    const defaultHome = path.join(scratch, 'home', '.local', 'share', 'docdex');
    const bare = await sh('npx -y @modelcontextprotocol/inspector --cli --connect-timeout 60000 docdex serve --mcp --method tools/list', {}, { without: ['DOCDEX_HOME'] });
    expect(bare.exitCode, String(bare.stderr)).toBe(0);
    await expect.poll(() => embeddedServerState(defaultHome), { timeout: 60_000, interval: 500 }).not.toBe('running');
    const status = await runCli(['db', 'status', '--json'], { env: { ...env, DOCDEX_HOME: defaultHome } });
    expect(JSON.parse(String(status.stdout))).toMatchObject({ running: false, initialised: true });
  }, 400_000);

  it('runs the HTTP inspector commands against a daemon without a token and with one', async () => {
    const cmds = inspector();
    const open = cmds.find((c) => /without a token/.test(c.title))!.command;
    const withToken = cmds.find((c) => /with a token/.test(c.title))!.command;
    const daemon = await startDaemon();
    try {
      const list = await sh(onPort(open));
      expect(list.exitCode, String(list.stderr)).toBe(0);
      expect(String(list.stdout)).toContain('"search_libraries"');
    } finally {
      await stopDaemon(daemon);
    }
    const token = 'readme-token-0123456789abcdef0123456789';
    const secured = await startDaemon({ MCP_AUTH_ENABLED: 'true', MCP_AUTH_TOKEN: token });
    try {
      const list = await sh(onPort(withToken), { MCP_AUTH_TOKEN: token });
      expect(list.exitCode, String(list.stderr)).toBe(0);
      expect(String(list.stdout)).toContain('"search_libraries"');
      expect((await sh(onPort(open))).exitCode).not.toBe(0);
    } finally {
      await stopDaemon(secured);
    }
  }, 300_000);

  it('connects the configurations for HTTP without a token (Cursor, VS Code) with the SDK client', async () => {
    const configs = blocks(section('HTTP without a token: a daemon on this machine'), 'json').map((b) => JSON.parse(onPort(b)) as Record<string, any>);
    const urls = configs.map((c) => c.mcpServers?.docdex?.url ?? c.servers?.docdex?.url ?? c.mcp?.docdex?.url);
    expect(urls.every((u) => u === `http://127.0.0.1:${port}/mcp`)).toBe(true);
    for (const c of configs) expect(JSON.stringify(c)).not.toMatch(/Authorization/);
    const daemon = await startDaemon();
    try {
      const client = new Client({ name: 'readme-config', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(urls[0])));
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('get_content');
      const found = await client.callTool({ name: 'search_libraries', arguments: { query: 'setup-notes' } });
      expect(JSON.stringify(found.content)).toMatch(/setup-notes/);
      await client.close();
    } finally {
      await stopDaemon(daemon);
    }
  }, 300_000);

  it('connects the opencode configurations, local (with environment) and remote, with the real opencode', async () => {
    const stdioConfig = blocks(section('stdio: the assistant starts docdex'), 'json')
      .map((b) => JSON.parse(b) as { mcp?: Record<string, any> })
      .find((c) => c.mcp)!;
    const httpConfig = blocks(section('HTTP without a token: a daemon on this machine'), 'json')
      .map((b) => JSON.parse(onPort(b)) as { mcp?: Record<string, any> })
      .find((c) => c.mcp)!;
    expect(stdioConfig.mcp!.docdex).toMatchObject({ type: 'local', command: ['docdex', 'serve', '--mcp'], environment: { DOCDEX_HOME: '/path/to/your/docdex-home' } });
    const local = { ...stdioConfig.mcp!.docdex, environment: { DOCDEX_HOME: home } };
    const project = path.join(scratch, 'opencode-project');
    mkdirSync(project);
    writeFileSync(path.join(project, 'opencode.json'), JSON.stringify({ $schema: 'https://opencode.ai/config.json', mcp: { docdex: local, 'docdex-http': httpConfig.mcp!.docdex } }));
    const daemon = await startDaemon();
    try {
      const xdg = path.join(scratch, 'home');
      const listed = await execa(OPENCODE, ['mcp', 'list'], {
        cwd: project,
        // No DOCDEX_HOME here: the local server gets it from the config's environment block alone.
        env: {
          PATH: env.PATH,
          HOME: xdg,
          XDG_CONFIG_HOME: `${xdg}/.config`,
          XDG_DATA_HOME: `${xdg}/.local/share`,
          XDG_CACHE_HOME: `${xdg}/.cache`,
          XDG_STATE_HOME: `${xdg}/.local/state`,
          NO_COLOR: '1',
        },
        extendEnv: false,
        reject: false,
        timeout: 180_000,
      });
      const out = `${String(listed.stdout)}${String(listed.stderr)}`;
      expect(out).toMatch(/✓ docdex\b.*connected/);
      expect(out).toMatch(/✓ docdex-http\b.*connected/);
    } finally {
      await stopDaemon(daemon);
    }
  }, 300_000);
});
