import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agentServerLayout, agentServerUrl } from '../../src/core/agent-server/layout.js';
import { prepareAgentServer } from '../../src/core/agent-server/service.js';
import { AgentServerSupervisor } from '../../src/core/agent-server/supervisor.js';
import type { SpawnPlan } from '../../src/core/agent-server/supervisor.js';
import { setSandboxPreferences } from '../../src/core/agent/settings.js';
import { workspaceLayout } from '../../src/core/agent/workspace.js';
import type { Workspace } from '../../src/core/agent/workspace.js';
import { loadConfig } from '../../src/core/config.js';
import type { Config } from '../../src/core/config.js';
import { createSandboxExtension } from '../../src/core/sandbox/enforcement.js';
import { MGR_SANDBOX_PLUGIN, PLUGIN_REPORT_NAME } from '../../src/core/sandbox/plugin.js';
import { sandboxRoots } from '../../src/core/sandbox/settings.js';
import { SHIM_NAME, UNPLANNED_MESSAGE } from '../../src/core/sandbox/shim.js';
import { outsideRootsMessage } from '../../src/core/sandbox/unavailable.js';
import { createSandboxPlannerRoutes } from '../../src/daemon/routes/sandbox-planner.js';
import type { DaemonHandle } from '../../src/daemon/server.js';
import { freePort, opencodeCall, startStubModel, stubModelConfig, writeAgentConfig } from '../agent-server/helpers.js';
import type { StubModel } from '../agent-server/helpers.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';

/**
 * Issue #12: sandbox enforcement must fail closed when opencode does not load mgr-sandbox.js. Everything is real
 * here: the daemon's planner route, the agent server supervisor starting REAL opencode with the sandbox
 * extension, the rendered shim and plugin. The plugin is broken or removed after `prepare` wrote it, as a
 * syntax error, a deleted file or an opencode plugin-loading bug would leave it.
 *
 * No microVM is needed: nothing may get as far as the runner, whose command here only records that it was
 * called (the real runner and VM are covered by enforcement-microvm.test.ts). Host-side marker files, outside
 * the sandbox roots, show whether a command ran on the host.
 */

const silent = { info() {}, warn() {}, error() {} };
const BROKEN_PLUGIN = 'export const MgrSandboxPlugin = ;;; // a syntax error\n';

interface ToolPart {
  type: string;
  tool?: string;
  state?: { output?: string; metadata?: Record<string, unknown>; input?: { command?: string } };
}

describe('sandbox enforcement when opencode does not load mgr-sandbox.js', () => {
  let db: TestDatabase;
  let home: string;
  let ws: string;
  let outside: string;
  let workspace: Workspace;
  let config: Config;
  let daemon: DaemonHandle & { base: string };
  let stub: StubModel;
  let agentUrl: string;
  let runnerLog: string;
  let extensionRunner: string[];
  let supervisor: AgentServerSupervisor | undefined;
  let vmCalls = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    home = await mkdtemp(path.join(os.tmpdir(), 'dxfh-'));
    ws = await mkdtemp(path.join(os.tmpdir(), 'dxfw-'));
    outside = await mkdtemp(path.join(os.tmpdir(), 'dxfo-'));
    await mkdir(path.join(ws, 'repos', 'app'), { recursive: true });
    config = loadConfig({ ...db.env, DOCDEX_HOME: home, WORKSPACE_PATH: ws, AGENT_PORT: String(await freePort()) });
    workspace = workspaceLayout(config);
    daemon = await startTestDaemon(config, {
      routes: [
        createSandboxPlannerRoutes({
          ensureVm: async () => {
            vmCalls++;
            throw new Error('no microVM in this test');
          },
        }),
      ],
    });
    stub = await startStubModel();
    // The user's own shell, and a repository's project configuration naming one: both are overridden while
    // enforcement is on, with or without the plugin.
    writeAgentConfig(ws, {
      ...stubModelConfig(stub.url),
      shell: '/bin/sh',
      // The markers are outside the project directory; opencode would otherwise wait for an approval.
      permission: { bash: 'allow', external_directory: 'allow' },
      command: { probe: { template: `Result: !\`touch ${path.join(outside, 'template-ran')}; echo TEMPLATE-RAN\`` } },
    });
    await writeFile(path.join(ws, 'repos', 'app', 'opencode.json'), JSON.stringify({ shell: '/bin/sh' }));
    runnerLog = path.join(home, 'runner-called');
    const runner = path.join(home, 'fake-runner');
    await writeFile(runner, `#!/bin/sh\nprintf '%s\\n' "$*" >> '${runnerLog}'\nexit 99\n`);
    await chmod(runner, 0o755);
    await setSandboxPreferences(db.pool, 'default', { enabled: true });
    agentUrl = agentServerUrl(config);
    extensionRunner = [runner];
  }, 120_000);

  afterEach(async () => {
    await supervisor?.stop();
    supervisor = undefined;
  }, 60_000);

  afterAll(async () => {
    await supervisor?.stop();
    await stub?.close();
    await daemon?.close();
    await db?.drop();
    for (const dir of [home, ws, outside]) if (dir) await rm(dir, { recursive: true, force: true });
  }, 120_000);

  /** A supervisor whose plan is the real one, changed by `tamper` (which may break the plugin, or drop the check). */
  function startSupervisor(tamper: (plan: SpawnPlan) => Promise<SpawnPlan>, startCheckTimeoutMs = 30_000) {
    const extension = createSandboxExtension({ runner: extensionRunner, stopVm: async () => undefined, startCheckTimeoutMs });
    supervisor = new AgentServerSupervisor({
      url: agentUrl,
      prepare: async () => tamper(await prepareAgentServer(config, db.pool, { offline: true, internalApiUrl: `${daemon.base}/api/internal`, extensions: [extension] })),
      logFile: agentServerLayout(workspace).logFile,
      log: silent,
      startTimeoutMs: 120_000,
    });
    return { supervisor, extension };
  }

  const agent = (method: string, route: string, directory: string, body?: unknown): Promise<any> => opencodeCall(agentUrl, method, route, directory, body);

  async function toolParts(sessionId: string, directory: string): Promise<ToolPart[]> {
    const messages = (await agent('GET', `/session/${sessionId}/message`, directory)) as Array<{ parts: ToolPart[] }>;
    return messages.flatMap((m) => m.parts).filter((p) => p.type === 'tool');
  }

  /** `!command` (POST /session/:id/shell): a session shell with a call id. */
  async function sessionShell(directory: string, command: string): Promise<ToolPart> {
    const session = (await agent('POST', '/session', directory, {})) as { id: string };
    await agent('POST', `/session/${session.id}/shell`, directory, { agent: 'build', command });
    const part = (await toolParts(session.id, directory))[0];
    if (!part?.state) throw new Error('no shell part');
    return part;
  }

  /** The bash tool, called by the (stub) model in a chat turn: the agent's own path. */
  async function bashTool(directory: string, command: string): Promise<ToolPart> {
    const session = (await agent('POST', '/session', directory, {})) as { id: string };
    await agent('POST', `/session/${session.id}/message`, directory, {
      parts: [{ type: 'text', text: `@@bash ${JSON.stringify({ command, description: 'Touch a marker' })}` }],
    });
    const part = (await toolParts(session.id, directory)).find((p) => p.tool === 'bash');
    if (!part?.state) throw new Error('no bash call');
    return part;
  }

  async function slashTemplate(directory: string): Promise<void> {
    const session = (await agent('POST', '/session', directory, {})) as { id: string };
    await agent('POST', `/session/${session.id}/command`, directory, { command: 'probe', arguments: '' });
  }

  const output = (part: ToolPart) => part.state?.output ?? String(part.state?.metadata?.output ?? '');

  async function runningWithoutTheCheck(breakPlugin: (file: string) => Promise<void>): Promise<void> {
    const { supervisor: s } = startSupervisor(async (plan) => {
      await breakPlugin(path.join(workspace.pluginDir, MGR_SANDBOX_PLUGIN));
      // Without the start check, to show that the shell pin and the shim hold on their own.
      return { command: plan.command, args: plan.args, cwd: plan.cwd, env: plan.env };
    });
    const status = await s.start();
    if (status.state !== 'running') throw new Error(`the agent server did not start: ${status.lastError ?? status.state}\n${s.recentLog(40).join('\n')}`);
  }

  it('refuses the bash tool, !command and slash-command templates when the plugin has a syntax error', async () => {
    await runningWithoutTheCheck((file) => writeFile(file, BROKEN_PLUGIN));
    const repo = path.join(ws, 'repos', 'app');
    // The shell is the shim even though the plugin never ran, over the user's and the repository's own shell.
    expect((await agent('GET', '/config', repo)).shell).toBe(path.join(workspace.pluginDir, SHIM_NAME));

    const bashMarker = path.join(outside, 'bash-ran');
    const bash = await bashTool(repo, `touch ${bashMarker}; echo ran`);
    expect(output(bash).trim()).toBe(UNPLANNED_MESSAGE);
    expect(bash.state?.metadata?.exit).toBe(125);
    expect(existsSync(bashMarker)).toBe(false);

    const shellMarker = path.join(outside, 'shell-ran');
    const shell = await sessionShell(repo, `touch ${shellMarker}; echo ran`);
    expect(output(shell).trim()).toBe(UNPLANNED_MESSAGE);
    expect(existsSync(shellMarker)).toBe(false);

    // Not even a slash-command template (host by spec) passes while the plugin is not there to vouch for it.
    await slashTemplate(repo);
    expect(existsSync(path.join(outside, 'template-ran'))).toBe(false);

    expect(existsSync(runnerLog)).toBe(false);
    expect(vmCalls).toBe(0);
  }, 300_000);

  it('refuses the bash tool when the plugin file is missing from the plugin folder', async () => {
    await runningWithoutTheCheck((file) => rm(file));
    const marker = path.join(outside, 'bash-ran-missing');
    const bash = await bashTool(path.join(ws, 'repos', 'app'), `touch ${marker}; echo ran`);
    expect(output(bash).trim()).toBe(UNPLANNED_MESSAGE);
    expect(bash.state?.metadata?.exit).toBe(125);
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(runnerLog)).toBe(false);
  }, 300_000);

  it('stops the agent server at start when the plugin does not report itself loaded', async () => {
    const { supervisor: s } = startSupervisor(async (plan) => {
      await writeFile(path.join(workspace.pluginDir, MGR_SANDBOX_PLUGIN), BROKEN_PLUGIN);
      return plan;
    }, 5000);
    const status = await s.start();
    expect(status.state).toBe('failed');
    expect(status.lastError).toMatch(
      /^Sandbox enforcement is on but the sandbox is unavailable: the mgr-sandbox plugin \(.*mgr-sandbox\.js\) did not report itself loaded within 5000 ms; the agent server was stopped/,
    );
    expect(status.pid).toBeNull();
    expect(s.recentLog(400).some((line) => line.includes('start check failed; stopping the agent server'))).toBe(true);
    // Nothing answers any more: no command can be sent to it.
    expect(await s.probe(1000)).toBe(false);
  }, 300_000);

  it('passes the start check with a working plugin, which then plans commands and keeps templates on the host', async () => {
    const { supervisor: s, extension } = startSupervisor(async (plan) => plan);
    const status = await s.start();
    if (status.state !== 'running') throw new Error(`the agent server did not start: ${status.lastError ?? status.state}\n${s.recentLog(40).join('\n')}`);
    const stamp = extension.enforcement.current()!;
    const report = JSON.parse(await readFile(path.join(workspace.pluginDir, PLUGIN_REPORT_NAME), 'utf8'));
    expect(report).toMatchObject({ nonce: stamp.nonce, pid: status.pid, shell: stamp.shimPath, shellEnv: true });
    // The check's pseudo-terminal is gone again.
    expect((await agent('GET', '/pty', ws)) as unknown[]).toEqual([]);

    // The plugin plans: a directory outside the roots gets the planner's refusal, not the shim's.
    const marker = path.join(outside, 'outside-ran');
    const refused = await sessionShell(outside, `touch ${marker}`);
    expect(output(refused).trim()).toBe(outsideRootsMessage(outside, sandboxRoots(ws)));
    expect(existsSync(marker)).toBe(false);

    // Slash-command templates fire no hook and stay on the host (spec: Execution paths).
    await slashTemplate(path.join(ws, 'repos', 'app'));
    expect(existsSync(path.join(outside, 'template-ran'))).toBe(true);
    expect(existsSync(runnerLog)).toBe(false);
  }, 300_000);
});
