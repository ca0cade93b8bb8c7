import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { setSandboxPreferences } from '../../src/core/agent/settings.js';
import { provisionWorkspace, workspaceLayout } from '../../src/core/agent/workspace.js';
import type { Workspace } from '../../src/core/agent/workspace.js';
import { loadConfig } from '../../src/core/config.js';
import type { Config } from '../../src/core/config.js';
import { SandboxEnforcement, createSandboxExtension, pinShellInConfigContent, shimRunnerCommand } from '../../src/core/sandbox/enforcement.js';
import { UserError } from '../../src/core/errors.js';
import { sandboxSettings } from '../../src/core/sandbox/settings.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

/**
 * The enforcement state machine against the real database and files: the toggle plus a (re)start stamps the
 * child, writes the shim and the plugin, refuses the start when they cannot be written, and stops the VM on a
 * restart into disabled or a stop. The VM stop is the injected function here (recorded, not faked away): the
 * real stop is `sandboxDown`, covered with the real VM in the microVM tests.
 */

describe('sandbox enforcement on agent server start and stop', () => {
  let db: TestDatabase;
  let ws: string;
  let workspace: Workspace;
  let config: Config;
  let stops: number;
  const runner = ['/usr/bin/env', 'node', '/opt/docdex/dist/core/sandbox/exec-main.js'];

  const enforcement = () => new SandboxEnforcement({ runner, stopVm: async () => void stops++ });
  const ctx = () => ({ config, pool: db.pool, workspace, pluginDir: workspace.pluginDir });

  beforeAll(async () => {
    db = await createTestDatabase();
    ws = await mkdtemp(path.join(os.tmpdir(), 'docdex-enf-'));
    config = loadConfig({ ...db.env, WORKSPACE_PATH: ws });
    workspace = workspaceLayout(config);
    await provisionWorkspace(workspace);
  });

  afterAll(async () => {
    await db?.drop();
    await rm(ws, { recursive: true, force: true });
  });

  beforeEach(async () => {
    stops = 0;
    await db.pool.query('DELETE FROM agent_settings');
    await chmod(workspace.pluginDir, 0o700);
    await rm(path.join(workspace.agentConfigDir, 'opencode.jsonc'), { force: true });
  });

  it('stamps the child as not enforced, writes nothing and stops any VM while the toggle is off', async () => {
    const e = enforcement();
    const start = await e.prepareForStart(ctx());
    expect(start.env).toEqual({ MGR_SANDBOX_ENFORCED: 'false' });
    expect(start.plugins).toEqual([]);
    expect(start.stamp.enforced).toBe(false);
    await expect(stat(path.join(workspace.pluginDir, 'mgr-sandbox.js'))).rejects.toThrow();
    expect(stops).toBe(1);
    await e.onAgentServerStopped();
    expect(stops).toBe(1);
  });

  it('writes the shim and the plugin next to the plugins and stamps the child when the toggle is on', async () => {
    await setSandboxPreferences(db.pool, 'default', { enabled: true });
    await writeFile(path.join(workspace.agentConfigDir, 'opencode.jsonc'), '{\n  // the user shell\n  "shell": "/bin/sh"\n}\n');
    const e = enforcement();
    const start = await e.prepareForStart(ctx());
    const shim = path.join(workspace.pluginDir, 'mgr-sandbox-shell');
    const plugin = path.join(workspace.pluginDir, 'mgr-sandbox.js');
    expect(start.env).toEqual({ MGR_SANDBOX_ENFORCED: 'true', OPENCODE_CONFIG_CONTENT: JSON.stringify({ shell: shim }) });
    expect(start.plugins).toEqual([shim, plugin]);
    expect(start.stamp).toMatchObject({ enforced: true, shimPath: shim, pluginPath: plugin, hostShell: '/bin/sh' });
    const shimConfig = await readFile(`${shim}.conf`, 'utf8');
    expect(shimConfig).toMatch(/^host_shell=\/bin\/sh$/m);
    expect(shimConfig).toContain('runner=/usr/bin/env\nrunner=node\nrunner=/opt/docdex/dist/core/sandbox/exec-main.js\n');
    expect((await stat(shim)).mode & 0o777).toBe(0o755);
    const pluginConfig = path.join(workspace.pluginDir, 'docdex', 'mgr-sandbox.json');
    expect(JSON.parse(await readFile(pluginConfig, 'utf8'))).toMatchObject({ SHIM: shim, ENFORCED_VAR: 'MGR_SANDBOX_ENFORCED', NONCE: start.stamp.nonce });
    expect(await readFile(plugin, 'utf8')).toContain("process.env[C.ENFORCED_VAR] === 'true'");
    expect(stops).toBe(0);

    // The setting changing under a running child changes nothing: the stamp is the child's environment.
    await setSandboxPreferences(db.pool, 'default', { enabled: false });
    expect(e.current()?.enforced).toBe(true);

    // Manager shutdown or `agent stop`: the VM goes with the enforced child.
    await e.onAgentServerStopped();
    expect(stops).toBe(1);

    // Restart into disabled: files removed, VM stopped.
    const restart = await e.prepareForStart(ctx());
    expect(restart.env.MGR_SANDBOX_ENFORCED).toBe('false');
    for (const file of [plugin, shim, `${shim}.conf`, pluginConfig]) await expect(stat(file)).rejects.toThrow();
    expect(stops).toBe(2);
  });

  it('refuses the start when the shim cannot be written', async () => {
    await setSandboxPreferences(db.pool, 'default', { enabled: true });
    if (process.getuid?.() === 0) {
      // root writes through permissions: make the plugin folder a file instead.
      const blocked = path.join(ws, 'blocked');
      await writeFile(blocked, 'not a folder');
      const start = enforcement().prepareForStart({ ...ctx(), pluginDir: blocked });
      await expect(start).rejects.toMatchObject({ code: 'sandbox_shim_unwritable' });
      await expect(start).rejects.toThrow(/Cannot write the sandbox shell shim/);
    } else {
      await chmod(workspace.pluginDir, 0o500);
      await expect(enforcement().prepareForStart(ctx())).rejects.toMatchObject({ code: 'sandbox_shim_unwritable' });
    }
  });

  it('falls back from a configured shell that is not executable, and never remembers the shim itself', async () => {
    await setSandboxPreferences(db.pool, 'default', { enabled: true });
    const shim = path.join(workspace.pluginDir, 'mgr-sandbox-shell');
    for (const shell of ['/nonexistent/zsh', shim, 'bash']) {
      await writeFile(path.join(workspace.agentConfigDir, 'opencode.jsonc'), JSON.stringify({ shell }));
      const start = await new SandboxEnforcement({ runner, stopVm: async () => undefined }).prepareForStart(ctx());
      expect(start.stamp.hostShell).not.toBe(shell);
      expect(path.isAbsolute(start.stamp.hostShell!)).toBe(true);
    }
  });

  it("pins the shell through OPENCODE_CONFIG_CONTENT too, keeping the rest of the user's, and a new nonce per start", async () => {
    await setSandboxPreferences(db.pool, 'default', { enabled: true });
    const shim = path.join(workspace.pluginDir, 'mgr-sandbox-shell');
    const e = new SandboxEnforcement({ runner, stopVm: async () => undefined, baseEnv: { OPENCODE_CONFIG_CONTENT: '{\n  // mine\n  "shell": "/bin/zsh", "model": "a/b",\n}' } });
    const first = await e.prepareForStart(ctx());
    expect(JSON.parse(first.env.OPENCODE_CONFIG_CONTENT!)).toEqual({ shell: shim, model: 'a/b' });
    const nonce = first.stamp.nonce!;
    expect(nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(await readFile(`${shim}.conf`, 'utf8')).toMatch(new RegExp(`^nonce=${nonce}$`, 'm'));
    expect(JSON.parse(await readFile(path.join(workspace.pluginDir, 'docdex', 'mgr-sandbox.json'), 'utf8')).NONCE).toBe(nonce);
    // A report of the previous child is removed before the next one starts, and the nonce changes.
    const report = path.join(workspace.pluginDir, 'mgr-sandbox.report.json');
    await writeFile(report, JSON.stringify({ nonce }));
    const second = await e.prepareForStart(ctx());
    expect(second.stamp.nonce).not.toBe(nonce);
    await expect(stat(report)).rejects.toThrow();

    expect(() => pinShellInConfigContent('[1]', shim)).toThrow(UserError);
    expect(() => pinShellInConfigContent('{"shell": ', shim)).toThrow(/OPENCODE_CONFIG_CONTENT is not a JSON object/);
    expect(pinShellInConfigContent(undefined, shim)).toBe(JSON.stringify({ shell: shim }));
    expect(pinShellInConfigContent('  ', shim)).toBe(JSON.stringify({ shell: shim }));
    await expect(new SandboxEnforcement({ runner, stopVm: async () => undefined, baseEnv: { OPENCODE_CONFIG_CONTENT: 'nope' } }).prepareForStart(ctx())).rejects.toMatchObject({
      code: 'sandbox_config_content_invalid',
    });

    // Restart into disabled removes the report with the shim and the plugin.
    await writeFile(report, '{}');
    await setSandboxPreferences(db.pool, 'default', { enabled: false });
    await e.prepareForStart(ctx());
    await expect(stat(report)).rejects.toThrow();
  });

  it('pins the sandbox configuration of the start into the runner command, since the child has its own HOME', () => {
    const settings = { ...sandboxSettings(config), image: 'busybox@sha256:abc', execUser: undefined, allowHosts: [] };
    expect(shimRunnerCommand(settings, '/d/exec-main.js', '/n/node')).toEqual([
      '/usr/bin/env',
      '-u',
      'SANDBOX_EXEC_USER',
      '-u',
      'CRAWL_ALLOW_HOSTS',
      `DOCDEX_HOME=${config.home}`,
      `WORKSPACE_PATH=${ws}`,
      `SANDBOX_ACCEL=${settings.accel}`,
      `SANDBOX_START_TIMEOUT_MS=${settings.startTimeoutMs}`,
      `SANDBOX_MEMORY_MB=${settings.memoryMib}`,
      `SANDBOX_CPUS=${settings.cpus}`,
      'SANDBOX_IMAGE=busybox@sha256:abc',
      '/n/node',
      '/d/exec-main.js',
    ]);
    // A registry image is pulled by the runner under the manager's outbound allow-list.
    expect(shimRunnerCommand({ ...settings, allowHosts: ['127.0.0.1', 'reg.internal'] }, '/d/exec-main.js', '/n/node')).toContain('CRAWL_ALLOW_HOSTS=127.0.0.1,reg.internal');
  });

  it('adapts to the agent server extension hook', async () => {
    await setSandboxPreferences(db.pool, 'default', { enabled: true });
    const ext = createSandboxExtension({ runner, stopVm: async () => void stops++ });
    await mkdir(workspace.pluginDir, { recursive: true });
    const layout = { pluginDir: workspace.pluginDir } as Parameters<typeof ext.prepare>[0]['layout'];
    const prepared = await ext.prepare({ config, pool: db.pool, workspace, layout });
    expect(prepared).toEqual({
      env: { MGR_SANDBOX_ENFORCED: 'true', OPENCODE_CONFIG_CONTENT: JSON.stringify({ shell: path.join(workspace.pluginDir, 'mgr-sandbox-shell') }) },
      verify: expect.any(Function),
    });
    await ext.stopped!();
    expect(stops).toBe(1);
  });
});
