import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { ResultPromise } from 'execa';
import { createElement } from 'react';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readAgentServerState } from '../../src/core/agent-server/state.js';
import { loadConfig } from '../../src/core/config.js';
import { RunnerDaemon } from '../../src/core/sandbox/runner-daemon.js';
import { sandboxSettings } from '../../src/core/sandbox/settings.js';
import { UNAVAILABLE_PREFIX } from '../../src/core/sandbox/unavailable.js';
import { createDashboardData } from '../../src/ui/data/postgres.js';
import { Agent } from '../../src/ui/screens/Agent.js';
import { KEYS, renderWithProviders } from '../ui/render.js';
import { freePort, opencodeCall, sessionShell, startStubModel, stubModelConfig, waitUntil, writeAgentConfig } from '../agent-server/helpers.js';
import type { StubModel } from '../agent-server/helpers.js';
import { BIN, runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { REQUIRE_SANDBOX, missingSandboxCapabilities, prepareSandboxHome } from './vm-host.js';

/**
 * Issue #51, as a user does it: every switch turned with the real CLI, `docdex serve --agent` (the real binary)
 * supervising real opencode, `docdex agent restart` applying the setting, and `!command` calls (opencode's
 * POST /session/:id/shell, no model involved) landing on the host or in the real microVM (QEMU, TCG here).
 * The stub model only drives one bash tool call, to show its `sandbox` marker.
 *
 * The runner runs in this process (the serve daemon and the shim find it through the state directory), so it
 * goes away with the test. Gated like the other microVM suites.
 */

const missing = missingSandboxCapabilities({ built: true });
const skip = missing.length > 0 && !REQUIRE_SANDBOX;
if (skip) console.log(`skipping the sandbox switch end-to-end test: missing ${missing.join(', ')} (set DOCDEX_REQUIRE_SANDBOX=1 to make this a failure)`);

const TOKEN = 'tok-forwarded-into-the-guest';
const GIT_IDENTITY = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' };

describe.skipIf(skip)('the sandbox switches, driven through the CLI, with opencode and the real microVM', () => {
  let db: TestDatabase;
  let home: string;
  let ws: string;
  let outside: string;
  let env: NodeJS.ProcessEnv;
  let runner: RunnerDaemon;
  let stub: StubModel;
  let serve: ResultPromise<{ env: NodeJS.ProcessEnv; extendEnv: false; reject: false; all: true }> | undefined;
  let serveOutput = '';
  let agentUrl: string;
  let app: string;

  const cli = (args: string[], input?: string) => runCli(args, { env, timeout: 240_000, ...(input === undefined ? {} : { input }) });
  const json = async (args: string[]): Promise<any> => {
    const result = await cli([...args, '--json']);
    expect(result.exitCode, `${args.join(' ')}: ${String(result.stderr)}${String(result.stdout)}`).toBe(0);
    return JSON.parse(String(result.stdout));
  };
  const shell = (directory: string, command: string) => sessionShell(agentUrl, directory, command);

  beforeAll(async () => {
    if (missing.length > 0) throw new Error(`DOCDEX_REQUIRE_SANDBOX=1 but the host lacks: ${missing.join(', ')}`);
    db = await createTestDatabase();
    // Short paths: the runner socket must fit in 108 bytes.
    home = await mkdtemp(path.join(os.tmpdir(), 'dxsw-'));
    ws = await mkdtemp(path.join(os.tmpdir(), 'dxsww-'));
    outside = await mkdtemp(path.join(os.tmpdir(), 'dxswo-'));
    const { image } = await prepareSandboxHome(home);
    app = path.join(ws, 'repos', 'app');
    await mkdir(app, { recursive: true });
    stub = await startStubModel();
    writeAgentConfig(ws, stubModelConfig(stub.url));
    env = {
      ...db.env,
      DOCDEX_HOME: home,
      WORKSPACE_PATH: ws,
      API_PORT: String(await freePort()),
      AGENT_PORT: String(await freePort()),
      SANDBOX_IMAGE: image,
      SANDBOX_MEMORY_MB: '256',
      SANDBOX_START_TIMEOUT_MS: '180000',
      DOCDEX_AGENT_OFFLINE: 'true',
    };
    agentUrl = `http://127.0.0.1:${env.AGENT_PORT}`;
    runner = await RunnerDaemon.start({ stateDir: sandboxSettings(loadConfig(env)).stateDir });
    // A local git repository outside the workspace, for the registration warning and --clone.
    await execa('git', ['init', '--quiet', '--initial-branch=main', outside]);
    await execa('sh', ['-c', 'echo local > README.md && git add README.md && git commit --quiet -m first'], { cwd: outside, env: { ...process.env, ...GIT_IDENTITY } });
  }, 15 * 60_000);

  afterAll(async () => {
    if (serve !== undefined) {
      serve.kill('SIGTERM');
      await serve;
    }
    await stub?.close();
    await runner?.close();
    await db?.drop();
    for (const dir of [home, ws, outside]) if (dir) await rm(dir, { recursive: true, force: true });
  }, 180_000);

  it('starts opencode with `docdex serve --agent`, unenforced: a !command runs on the host (item 8)', async () => {
    const child = execa(process.execPath, [BIN, 'serve', '--agent', '--host', '127.0.0.1'], { env, extendEnv: false, reject: false, all: true });
    serve = child;
    child.all.on('data', (chunk: Buffer) => (serveOutput += chunk.toString()));
    // No `docdex agent start`: --agent asks for the agent server itself.
    await waitUntil(async () => ((await readAgentServerState(db.pool)).status === 'running' ? true : undefined), 180_000, `opencode under serve --agent; output:\n${serveOutput}`);
    expect((await readAgentServerState(db.pool)).sandboxEnforced).toBe(false);
    const r = await shell(app, 'hostname');
    expect(r.output.trim()).toBe(os.hostname());
  }, 240_000);

  it('turns enforcement, credential forwarding and the identity on through the CLI; the running server keeps its stamp', async () => {
    const enabled = await cli(['sandbox', 'enable', '--git-credentials']);
    expect(enabled.exitCode, String(enabled.stderr)).toBe(0);
    expect(String(enabled.stdout)).toContain('Sandbox enforcement is on in the settings.');
    expect(String(enabled.stdout)).toContain('restart it to apply the setting (`docdex agent restart`)');
    expect(await json(['sandbox', 'status'])).toMatchObject({
      enforcement: { enabled: true, git_credentials: true, agent_server: { status: 'running', enforced: false }, takes_effect: 'on-restart' },
    });

    expect((await cli(['manager', 'git-identity', 'set', '--name', 'Ada Lovelace', '--email', 'ada@example.com'])).exitCode).toBe(0);
    const added = await cli(['manager', 'git-credentials', 'add', '--host', 'git.example.test', '--username', 'x-access-token', '--token-stdin'], TOKEN);
    expect(added.exitCode, String(added.stderr)).toBe(0);

    // The enforcement stamp stays authoritative for the child's lifetime: still the host.
    expect((await shell(app, 'hostname')).output.trim()).toBe(os.hostname());
  }, 240_000);

  it('after `docdex agent restart`, runs a !command in the microVM with the identity and the credential forwarded', async () => {
    const restarted = await cli(['agent', 'restart', '--timeout', '180']);
    expect(restarted.exitCode, `${String(restarted.stderr)}\n${serveOutput}`).toBe(0);
    expect(await json(['sandbox', 'status'])).toMatchObject({ enforcement: { agent_server: { status: 'running', enforced: true }, takes_effect: 'now' } });

    const r = await shell(app, 'hostname; echo "$GIT_AUTHOR_NAME <$GIT_AUTHOR_EMAIL>"; echo "$GIT_COMMITTER_NAME <$GIT_COMMITTER_EMAIL>"; echo "$GIT_CONFIG_KEY_0"; echo "$GIT_CONFIG_VALUE_0"');
    expect(r.output.trim().split('\n')).toEqual([
      'mgr-workspace',
      'Ada Lovelace <ada@example.com>',
      'Ada Lovelace <ada@example.com>',
      'http.https://git.example.test/.extraheader',
      `Authorization: Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString('base64')}`,
    ]);

    // The bash tool of a chat turn goes the same way, and carries the sandbox marker.
    const session = (await opencodeCall(agentUrl, 'POST', '/session', app, {})) as { id: string };
    await opencodeCall(agentUrl, 'POST', `/session/${session.id}/message`, app, {
      parts: [{ type: 'text', text: `@@bash ${JSON.stringify({ command: 'hostname', description: 'Show the host name' })}` }],
    });
    const messages = (await opencodeCall(agentUrl, 'GET', `/session/${session.id}/message`, app)) as Array<{
      parts: Array<{ type: string; tool?: string; state?: { output?: string; metadata?: Record<string, unknown> } }>;
    }>;
    const call = messages.flatMap((m) => m.parts).find((p) => p.type === 'tool' && p.tool === 'bash');
    expect(call?.state?.output?.trim()).toBe('mgr-workspace');
    expect(call?.state?.metadata?.sandbox).toBe(true);

    // The dashboard's Sessions section shows this call with the green badge (issue #51 item 2): the newest
    // session is the first row, and Enter opens its tool calls.
    const view = renderWithProviders(createElement(Agent, { active: true, width: 120, height: 20, initialSection: 'Sessions' }), { data: createDashboardData(db, loadConfig(env)), now: Date.now });
    try {
      await vi.waitFor(() => expect(view.lastFrame()).toMatch(/› /), { timeout: 20_000 });
      await view.type(KEYS.enter);
      await vi.waitFor(() => expect(view.lastFrame()).toMatch(/bash +hostname +completed +sandbox/), { timeout: 20_000 });
    } finally {
      view.unmount();
    }
  }, 600_000);

  it('keeps global skills outside the microVM and project skills writable in it (item 16)', async () => {
    const globalSkills = path.join(ws, '.config', 'opencode', 'skills');
    const created = await cli(['skills', 'create', 'host-only', '-d', 'A global skill', '--body-file', '-'], 'Stays on the host.\n');
    expect(created.exitCode, String(created.stderr)).toBe(0);
    expect(existsSync(path.join(globalSkills, 'host-only', 'SKILL.md'))).toBe(true);
    const r = await shell(
      app,
      `ls ${globalSkills} >/dev/null 2>&1 && echo global-visible || echo global-absent; mkdir -p .opencode/skills/from-vm && echo made > .opencode/skills/from-vm/SKILL.md && echo project-written`,
    );
    expect(r.output.trim().split('\n')).toEqual(['global-absent', 'project-written']);
    expect(await readFile(path.join(app, '.opencode', 'skills', 'from-vm', 'SKILL.md'), 'utf8')).toBe('made\n');
  }, 300_000);

  it('warns when a local repository is linked in, names where it resolves in the refusal, and clones it in on request (item 5)', async () => {
    const linked = await cli(['repos', 'add', outside, '--name', 'linked']);
    expect(linked.exitCode, String(linked.stderr)).toBe(0);
    expect(String(linked.stderr)).toContain(`Warning: repos/linked is a link to ${outside}, outside the workspace.`);
    expect(String(linked.stderr)).toContain(`\`docdex repos add ${outside} --clone\``);
    // opencode hands the planner the session directory either as given or already resolved; either way the
    // refusal names the directory outside the roots, never only the path that looks inside them.
    const refused = await shell(path.join(ws, 'repos', 'linked'), 'touch ran-here');
    const roots = `is outside the project roots ${ws}/repos and ${ws}/schedule-worktrees`;
    expect([`${UNAVAILABLE_PREFIX}: the working directory ${outside} ${roots}`, `${UNAVAILABLE_PREFIX}: the working directory ${ws}/repos/linked, which resolves to ${outside}, ${roots}`]).toContain(
      refused.output.trim(),
    );
    expect(existsSync(path.join(outside, 'ran-here'))).toBe(false);

    const cloned = await cli(['repos', 'add', outside, '--clone', '--name', 'cloned']);
    expect(cloned.exitCode, String(cloned.stderr)).toBe(0);
    expect(String(cloned.stderr)).not.toContain('Warning');
    const inVm = await shell(path.join(ws, 'repos', 'cloned'), 'hostname; cat README.md');
    expect(inVm.output.trim().split('\n')).toEqual(['mgr-workspace', 'local']);
  }, 300_000);

  it('turns enforcement off through the CLI: after a restart commands run on the host again and the microVM is stopped', async () => {
    const disabled = await json(['sandbox', 'disable']);
    expect(disabled).toMatchObject({ enabled: false, agent_server: { enforced: true }, takes_effect: 'on-restart' });
    expect((await shell(app, 'hostname')).output.trim()).toBe('mgr-workspace');
    expect((await cli(['agent', 'restart', '--timeout', '180'])).exitCode).toBe(0);
    expect((await shell(app, 'hostname')).output.trim()).toBe(os.hostname());
    const status = await json(['sandbox', 'status']);
    expect(status).toMatchObject({ state: 'stopped', enforcement: { enabled: false, agent_server: { enforced: false }, takes_effect: 'now' } });
  }, 300_000);
});
