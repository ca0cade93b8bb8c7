import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareAgentServer } from '../../src/core/agent-server/service.js';
import { agentServerLayout, agentServerUrl } from '../../src/core/agent-server/layout.js';
import { AgentServerSupervisor } from '../../src/core/agent-server/supervisor.js';
import { setSandboxPreferences } from '../../src/core/agent/settings.js';
import { workspaceLayout } from '../../src/core/agent/workspace.js';
import { loadConfig } from '../../src/core/config.js';
import type { Config } from '../../src/core/config.js';
import type { BootFiles } from '../../src/core/sandbox/build.js';
import { createSandboxExtension } from '../../src/core/sandbox/enforcement.js';
import { RunnerDaemon } from '../../src/core/sandbox/runner-daemon.js';
import { sandboxStatus } from '../../src/core/sandbox/service.js';
import { sandboxRoots, sandboxSettings } from '../../src/core/sandbox/settings.js';
import { UNAVAILABLE_PREFIX, outsideRootsMessage } from '../../src/core/sandbox/unavailable.js';
import { createSandboxPlannerRoutes } from '../../src/daemon/routes/sandbox-planner.js';
import type { DaemonHandle } from '../../src/daemon/server.js';
import { freePort, opencodeCall, sessionShell, startStubModel, stubModelConfig, writeAgentConfig } from '../agent-server/helpers.js';
import type { ShellResult, StubModel } from '../agent-server/helpers.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { REQUIRE_SANDBOX, missingSandboxCapabilities, prepareSandboxHome } from './vm-host.js';

/**
 * End to end with everything real: the docdex daemon (planner route), the agent server supervisor starting
 * REAL opencode with the sandbox extension (stamp, shim, mgr-sandbox.js), and the REAL microVM (QEMU under
 * bubblewrap, TCG here). Session shell commands (`POST /session/{id}/shell`, the `!command` path, which
 * carries a call id) must run in the guest.
 *
 * Gated like microvm.test.ts: skipped with the reason printed when the host lacks QEMU and friends or docdex is
 * not built (the shim runs dist/core/sandbox/exec-main.js); a failure under DOCDEX_REQUIRE_SANDBOX=1.
 */

const missing = missingSandboxCapabilities({ built: true });
const skip = missing.length > 0 && !REQUIRE_SANDBOX;
if (skip) console.log(`skipping the sandbox enforcement end-to-end test: missing ${missing.join(', ')} (set DOCDEX_REQUIRE_SANDBOX=1 to make this a failure)`);

const silent = { info() {}, warn() {}, error() {} };

describe.skipIf(skip)('sandbox enforcement with real opencode and the real microVM', () => {
  let db: TestDatabase;
  let home: string;
  let ws: string;
  let outside: string;
  let config: Config;
  let boot: BootFiles;
  let runner: RunnerDaemon;
  let daemon: DaemonHandle & { base: string };
  let stub: StubModel;
  let supervisor: AgentServerSupervisor;
  let agentUrl: string;

  beforeAll(async () => {
    if (missing.length > 0) throw new Error(`DOCDEX_REQUIRE_SANDBOX=1 but the host lacks: ${missing.join(', ')}`);
    db = await createTestDatabase();
    // Short paths: the runner socket must fit in 108 bytes.
    home = await mkdtemp(path.join(os.tmpdir(), 'dxeh-'));
    ws = await mkdtemp(path.join(os.tmpdir(), 'dxew-'));
    outside = await mkdtemp(path.join(os.tmpdir(), 'dxeo-'));
    await mkdir(path.join(ws, 'repos', 'app'), { recursive: true });
    const prepared = await prepareSandboxHome(home);
    boot = prepared.boot;
    const image = prepared.image;
    config = loadConfig({
      ...db.env,
      DOCDEX_HOME: home,
      WORKSPACE_PATH: ws,
      SANDBOX_IMAGE: image,
      SANDBOX_MEMORY_MB: '256',
      SANDBOX_START_TIMEOUT_MS: '180000',
      AGENT_PORT: String(await freePort()),
    });
    runner = await RunnerDaemon.start({ stateDir: sandboxSettings(config).stateDir });
    daemon = await startTestDaemon(config, { routes: [createSandboxPlannerRoutes()] });
    stub = await startStubModel();
    writeAgentConfig(ws, stubModelConfig(stub.url));
    await setSandboxPreferences(db.pool, 'default', { enabled: true });
    supervisor = new AgentServerSupervisor({
      url: agentServerUrl(config),
      prepare: () => prepareAgentServer(config, db.pool, { offline: true, internalApiUrl: `${daemon.base}/api/internal`, extensions: [createSandboxExtension()] }),
      logFile: agentServerLayout(workspaceLayout(config)).logFile,
      log: silent,
      startTimeoutMs: 120_000,
    });
    const status = await supervisor.start();
    if (status.state !== 'running') throw new Error(`the agent server did not start: ${status.lastError ?? status.state}\n${supervisor.recentLog(50).join('\n')}`);
    agentUrl = agentServerUrl(config);
  }, 15 * 60_000);

  afterAll(async () => {
    await supervisor?.stop();
    await stub?.close();
    await daemon?.close();
    await runner?.close();
    await db?.drop();
    for (const dir of [home, ws, outside]) if (dir) await rm(dir, { recursive: true, force: true });
  }, 120_000);

  const agent = (method: string, route: string, directory: string, body?: unknown): Promise<any> => opencodeCall(agentUrl, method, route, directory, body);
  const shell = (directory: string, command: string): Promise<ShellResult> => sessionShell(agentUrl, directory, command);

  it('runs a session shell command in the guest and writes into a repo the host sees', async () => {
    const repo = path.join(ws, 'repos', 'app');
    const r = await shell(repo, 'uname -r; hostname; pwd; echo "written in the guest" > from-guest.txt');
    const [release, hostname, pwd] = r.output.trim().split('\n');
    expect(release).toBe(boot.kernelRelease);
    expect(release).not.toBe(os.release());
    expect(hostname).toBe('mgr-workspace');
    expect(hostname).not.toBe(os.hostname());
    expect(pwd).toBe(repo);
    expect(await readFile(path.join(repo, 'from-guest.txt'), 'utf8')).toBe('written in the guest\n');
    // `!command` does not pass tool.execute.after, so it is not badged (spec: Execution paths).
    expect(r.metadata.sandbox).toBeUndefined();
  }, 600_000);

  it('runs the bash tool of a chat turn in the guest and badges the call with the sandbox marker', async () => {
    const repo = path.join(ws, 'repos', 'app');
    const session = (await agent('POST', '/session', repo, {})) as { id: string };
    const tools = () => stub.requests.at(-1)?.tools.map((t) => t.function.name) ?? [];
    await agent('POST', `/session/${session.id}/message`, repo, {
      parts: [{ type: 'text', text: `@@bash ${JSON.stringify({ command: 'hostname; cat from-guest.txt', description: 'Show the host name' })}` }],
    });
    expect(tools()).toContain('bash');
    const messages = (await agent('GET', `/session/${session.id}/message`, repo)) as Array<{
      parts: Array<{ type: string; tool?: string; state?: { input?: { command?: string }; output?: string; metadata?: Record<string, unknown> } }>;
    }>;
    const call = messages.flatMap((m) => m.parts).find((p) => p.type === 'tool' && p.tool === 'bash');
    expect(call?.state?.output?.trim()).toBe('mgr-workspace\nwritten in the guest');
    expect(call?.state?.metadata?.sandbox).toBe(true);
    // The recorded command is the original text, never a wrapper.
    expect(call?.state?.input?.command).toBe('hostname; cat from-guest.txt');
  }, 600_000);

  it('refuses a directory outside the roots with the exact message', async () => {
    const marker = path.join(outside, 'ran-on-host');
    const r = await shell(outside, `touch ${marker}`);
    expect(r.output.trim()).toBe(outsideRootsMessage(outside, sandboxRoots(ws)));
    expect(existsSync(marker)).toBe(false);
  }, 300_000);

  it('fails closed after the VM is killed: nothing runs on the host', async () => {
    const settings = sandboxSettings(config);
    const status = await sandboxStatus(settings);
    expect(status.qemuPid).toBeGreaterThan(0);
    process.kill(status.qemuPid!, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 1000));
    const marker = path.join(outside, 'host-marker');
    const r = await shell(path.join(ws, 'repos', 'app'), `touch ${marker}; echo ran`);
    expect(r.output.startsWith(UNAVAILABLE_PREFIX)).toBe(true);
    expect(r.output).not.toContain('ran\n');
    expect(existsSync(marker)).toBe(false);
    // The loss is reported once; the next command gets a fresh, attested VM.
    const again = await shell(path.join(ws, 'repos', 'app'), 'hostname');
    expect(again.output.trim()).toBe('mgr-workspace');
  }, 600_000);
});
