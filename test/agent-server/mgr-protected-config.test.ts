import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setSandboxPreferences } from '../../src/core/agent/settings.js';
import { readManagerToken } from '../../src/core/agent/token.js';
import { messageText, OpencodeClient } from '../../src/core/agent-server/client.js';
import { startAgentServer } from '../../src/core/agent-server/control.js';
import { agentServerUrl } from '../../src/core/agent-server/layout.js';
import { agentManagerServices } from '../../src/core/agent-server/service.js';
import { loadConfig } from '../../src/core/config.js';
import type { Config } from '../../src/core/config.js';
import { createSandboxExtension } from '../../src/core/sandbox/enforcement.js';
import { agentRoutes } from '../../src/daemon/routes/agent.js';
import { agentServerRoutes } from '../../src/daemon/routes/agent-server.js';
import { BASE, protectedAttempts } from '../agent/protected-config-attempts.js';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { freePort, removeDir, startStubModel, stubModelConfig, tempDir, writeAgentConfig } from './helpers.js';
import type { StubModel } from './helpers.js';

/**
 * Issue 30, item 5, with the real opencode: the agent server runs with sandbox enforcement on (the sandbox
 * extension of `docdex serve`: shim, mgr-sandbox.js, start check), and a stub model makes the agent call its
 * real generated `mgr` tool with each change an agent steered by injected text could try. Every one comes back
 * refused, the file stays as the user wrote it, and nothing the changes would start runs on the host.
 */

describe('the mgr tool of the real agent server, with sandbox enforcement on', () => {
  let db: TestDatabase;
  let home: string;
  let workspace: string;
  let config: Config;
  let stub: StubModel;
  let daemon: Awaited<ReturnType<typeof startTestDaemon>>;
  let agent: OpencodeClient;
  let userConfig: Record<string, unknown>;
  const configFile = () => path.join(workspace, '.config', 'opencode', 'opencode.jsonc');

  const ask = async (text: string) => {
    const session = await agent.createSession({ directory: workspace });
    return messageText(await agent.prompt(session.id, { directory: workspace, text }));
  };
  const mgr = (args: Record<string, unknown>) => ask(`Please do this: @@mgr ${JSON.stringify(args)}`);

  beforeAll(async () => {
    db = await createTestDatabase();
    home = tempDir('docdex-guard-home-');
    workspace = tempDir('docdex-guard-ws-');
    mkdirSync(path.join(workspace, 'repos'), { recursive: true });
    stub = await startStubModel();
    const apiPort = await freePort();
    config = loadConfig({ ...db.env, DOCDEX_HOME: home, WORKSPACE_PATH: workspace, API_PORT: String(apiPort), AGENT_PORT: String(await freePort()) });
    // The user's configuration: the stub model, and permissions and tools they chose.
    userConfig = { ...stubModelConfig(stub.url), permission: BASE.permission, tools: BASE.tools, agent: { build: { ...BASE.agent.build, model: 'stub/stub-model' } } };
    writeAgentConfig(workspace, userConfig);
    // No command in this test may reach a microVM: the runner only fails.
    const runner = path.join(home, 'fake-runner');
    await writeFile(runner, '#!/bin/sh\nexit 99\n');
    await chmod(runner, 0o755);
    await setSandboxPreferences(db.pool, 'default', { enabled: true });
    daemon = await startTestDaemon(config, {
      port: apiPort,
      routes: [...agentRoutes, ...agentServerRoutes],
      services: agentManagerServices(
        config,
        { host: '127.0.0.1', port: apiPort },
        {
          offline: true,
          pollMs: 300,
          extensions: [createSandboxExtension({ runner: [runner], stopVm: async () => undefined })],
        },
      ),
    });
    expect(await readManagerToken(db.pool)).toBeDefined();
    await startAgentServer(config, { timeoutMs: 120_000, pollMs: 200 });
    agent = new OpencodeClient({ baseUrl: agentServerUrl(config), timeoutMs: 120_000 });
  }, 240_000);

  afterAll(async () => {
    await daemon?.close();
    await stub?.close();
    await db?.drop();
    removeDir(workspace);
    removeDir(home);
  }, 120_000);

  it('started enforced: the sandbox plugin is loaded next to mgr', () => {
    expect(existsSync(path.join(workspace, '.config', 'opencode', 'plugin', 'mgr-sandbox.js'))).toBe(true);
    expect(existsSync(path.join(workspace, '.config', 'opencode', 'plugin', 'mgr-manager.js'))).toBe(true);
  });

  it('refuses every protected change the agent makes through mgr PUT /agent-config, naming the key', async () => {
    const before = readFileSync(configFile(), 'utf8');
    // Before the guard, the first attempt (a local MCP server) was patched live and opencode ran it on the host.
    const marker = path.join(home, 'host-command-ran');
    for (const [key, attempt] of protectedAttempts(marker)) {
      // The attempt's change on top of the user's configuration, as the skill says: the complete object.
      const changed = Object.entries(attempt).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify((BASE as Record<string, unknown>)[k]));
      const content = { ...userConfig, ...Object.fromEntries(changed) };
      const answer = await mgr({ action: 'request', method: 'PUT', path: '/agent-config', body: { content } });
      expect(answer, key).toMatch(/^RESULT /);
      expect(answer, key).toContain('mgr PUT /agent-config failed with HTTP 403');
      expect(answer, key).toContain(`the agent cannot change \\"${key}\\"`);
      expect(answer, key).toContain('docdex agent restart');
    }
    expect(readFileSync(configFile(), 'utf8')).toBe(before);
    expect(existsSync(marker)).toBe(false);
    // The running agent server never saw them.
    const live = (await (await fetch(`${agentServerUrl(config)}/config?directory=${encodeURIComponent(workspace)}`)).json()) as Record<string, unknown>;
    expect(live.mcp ?? {}).toEqual({});
    expect(live.plugin ?? []).not.toContain('file:///tmp/evil.js');
  }, 600_000);

  it('accepts an open key through mgr, and reloads while nothing protected changed', async () => {
    const content = { ...userConfig, theme: 'tokyonight' };
    const answer = await mgr({ action: 'request', method: 'PUT', path: '/agent-config', body: { content } });
    expect(answer).toMatch(/^RESULT \{/);
    expect(JSON.parse(answer.slice('RESULT '.length)).content).toEqual(content);
    // The reload mgr would make, sent as mgr sends it: through mgr itself it disposes the very instance that
    // is answering, so the tool's answer never comes back to read.
    const token = (await readManagerToken(db.pool))!;
    const reload = await fetch(`${daemon.base}/api/internal/assistant/reload`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(reload.status).toBe(200);
    expect(await reload.json()).toEqual({ success: true });
    expect(await ask('hello')).toBe('ok');
  }, 120_000);

  it('refuses a reload through mgr once a plugin appeared behind its back (a host file tool)', async () => {
    const plugin = path.join(workspace, '.config', 'opencode', 'plugin', 'evil.js');
    const marker = path.join(home, 'plugin-ran');
    writeFileSync(plugin, `import { writeFileSync } from "node:fs";\nexport const Evil = async () => { writeFileSync(${JSON.stringify(marker)}, "x"); return {}; };\n`);
    const answer = await mgr({ action: 'request', method: 'POST', path: '/assistant/reload' });
    expect(answer).toContain('mgr POST /assistant/reload failed with HTTP 403');
    expect(answer).toContain('docdex agent restart');
    // The next message would have loaded it, had the instance been disposed.
    expect(await ask('hello')).toBe('ok');
    expect(existsSync(marker)).toBe(false);

    // The user looks at the plugin, keeps a harmless version of it, and approves it the CLI way: a restart.
    writeFileSync(plugin, 'export const Fine = async () => ({});\n');
    const refused = await mgr({ action: 'request', method: 'POST', path: '/assistant/reload' });
    expect(refused).toContain('failed with HTTP 403');
    const env = { ...db.env, DOCDEX_HOME: home, WORKSPACE_PATH: workspace, API_PORT: String(config.api.port), AGENT_PORT: String(config.agent.port) };
    const restart = await runCli(['agent', 'restart', '--timeout', '120'], { env, timeout: 180_000 });
    expect(restart.exitCode, String(restart.stderr)).toBe(0);
    const token = (await readManagerToken(db.pool))!;
    const reload = await fetch(`${daemon.base}/api/internal/assistant/reload`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(reload.status).toBe(200);
  }, 300_000);
});
