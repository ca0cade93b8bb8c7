import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { ResultPromise } from 'execa';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { agentServerUrl } from '../../src/core/agent-server/layout.js';
import { prepareAgentServer } from '../../src/core/agent-server/service.js';
import { loadConfig } from '../../src/core/config.js';
import type { Config } from '../../src/core/config.js';
import { createDashboardData } from '../../src/ui/data/postgres.js';
import { toolCalls } from '../../src/ui/data/agent.js';
import { Agent } from '../../src/ui/screens/Agent.js';
import { freePort, opencodeCall, startStubModel, stubModelConfig, waitUntil, writeAgentConfig } from '../agent-server/helpers.js';
import type { StubModel } from '../agent-server/helpers.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { KEYS, renderWithProviders } from './render.js';

/**
 * The Sessions section against real opencode (the pinned binary, started as docdex starts it, offline): a
 * `!command` (POST /session/:id/shell, no model involved) and a bash call the stub model asks for, read back
 * through the dashboard's data layer. Neither runs in the microVM here, so neither carries the badge; the
 * badged call is shown with the real microVM in test/sandbox/switches-microvm.test.ts.
 */

let view: ReturnType<typeof renderWithProviders> | undefined;
afterEach(() => view?.unmount());

describe('Agent screen: sessions from a real opencode server', () => {
  let db: TestDatabase;
  let ws: string;
  let config: Config;
  let stub: StubModel;
  let server: ResultPromise<{ all: true; reject: false; extendEnv: false }> | undefined;
  let output = '';
  let url: string;
  let repo: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    ws = mkdtempSync(path.join(os.tmpdir(), 'docdex-dash-sessions-'));
    repo = path.join(ws, 'repos', 'app');
    mkdirSync(repo, { recursive: true });
    stub = await startStubModel();
    writeAgentConfig(ws, stubModelConfig(stub.url));
    config = loadConfig({ ...db.env, WORKSPACE_PATH: ws, AGENT_PORT: String(await freePort()) });
    url = agentServerUrl(config);
    // What `docdex agent start` spawns (plugins, seeded dependencies, environment), without a daemon around it.
    const plan = await prepareAgentServer(config, db.pool, { offline: true });
    server = execa(plan.command, plan.args, { env: plan.env, cwd: plan.cwd, extendEnv: false, reject: false, all: true });
    server.all.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await waitUntil(
      () =>
        fetch(`${url}/global/health`, { signal: AbortSignal.timeout(2000) }).then(
          (r) => (r.ok ? true : undefined),
          () => undefined,
        ),
      120_000,
      `opencode to answer; output:\n${output}`,
    );

    const shellSession = (await opencodeCall(url, 'POST', '/session', repo, { title: 'a shell command' })) as { id: string };
    await opencodeCall(url, 'POST', `/session/${shellSession.id}/shell`, repo, { agent: 'build', command: 'echo dashboard-shell-call' });
    const chat = (await opencodeCall(url, 'POST', '/session', repo, { title: 'a chat turn' })) as { id: string };
    await opencodeCall(url, 'POST', `/session/${chat.id}/message`, repo, {
      parts: [{ type: 'text', text: `@@bash ${JSON.stringify({ command: 'echo dashboard-model-call', description: 'Say it' })}` }],
    });
  }, 240_000);

  afterAll(async () => {
    server?.kill('SIGTERM');
    await server;
    await stub?.close();
    await db?.drop();
    if (ws) rmSync(ws, { recursive: true, force: true });
  });

  it('lists the sessions and opens one to its tool calls, without a badge off the sandbox', async () => {
    view = renderWithProviders(<Agent active width={120} height={20} initialSection="Sessions" />, { data: createDashboardData(db, config), now: Date.now });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('a shell command'), { timeout: 20_000 });
    const lines = view.lastFrame().split('\n');
    expect(lines.find((l) => l.includes('a chat turn'))).toMatch(/a chat turn +…\S*\/repos\/app +\d+s ago/);
    // Most recently active first: the chat turn came last.
    expect(lines.findIndex((l) => l.includes('a chat turn'))).toBeLessThan(lines.findIndex((l) => l.includes('a shell command')));

    await view.type(KEYS.enter);
    await vi.waitFor(() => expect(view!.lastFrame()).toMatch(/bash +echo dashboard-model-call +completed/), { timeout: 20_000 });
    expect(view.lastFrame()).toContain('Tool calls of a chat turn');
    expect(view.lastFrame()).not.toMatch(/completed +sandbox/);

    await view.type(KEYS.escape);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('a shell command'), { timeout: 20_000 });
    await view.type(KEYS.down, KEYS.enter);
    await vi.waitFor(() => expect(view!.lastFrame()).toMatch(/bash +echo dashboard-shell-call +completed/), { timeout: 20_000 });
    expect(view.lastFrame()).not.toMatch(/completed +sandbox/);
  });

  it('reads the sandbox marker from the metadata opencode records on a tool call', () => {
    // The part as opencode stores a bash call that mgr-sandbox.js marked (switches-microvm.test.ts sees it live).
    const part = { type: 'tool', tool: 'bash', callID: 'call_1', state: { status: 'completed', input: { command: 'hostname' }, output: 'mgr-workspace\n', metadata: { sandbox: true, exit: 0 } } };
    expect(toolCalls([part, { ...part, callID: 'call_2', state: { ...part.state, metadata: { exit: 0 } } }, { type: 'text', text: 'done' }])).toEqual([
      { id: 'call_1', tool: 'bash', summary: 'hostname', status: 'completed', sandbox: true },
      { id: 'call_2', tool: 'bash', summary: 'hostname', status: 'completed', sandbox: false },
    ]);
  });
});
