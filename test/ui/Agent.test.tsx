import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PgBoss } from 'pg-boss';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { addRepository, addRepositoryWorktree, createSkillFile, listRepositories } from '../../src/core/agent/manage.js';
import { ensureAgentQueues } from '../../src/core/agent/queue.js';
import { createSchedule, startRun } from '../../src/core/agent/schedules.js';
import { readSettings } from '../../src/core/agent/settings.js';
import { ensureManagerToken } from '../../src/core/agent/token.js';
import { workspaceLayout } from '../../src/core/agent/workspace.js';
import { loadConfig } from '../../src/core/config.js';
import type { Config } from '../../src/core/config.js';
import { createBoss } from '../../src/core/queue/boss.js';
import { createDashboardData } from '../../src/ui/data/postgres.js';
import type { DashboardData } from '../../src/ui/data/types.js';
import { Agent } from '../../src/ui/screens/Agent.js';
import { freePort } from '../agent-server/helpers.js';
import { makeBareRepo } from '../agent/helpers.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { createFakeData } from './fixtures.js';
import { KEYS, renderWithProviders } from './render.js';

/**
 * The Agent screen over a real database and the real core: repositories cloned with git, a worktree, a failed
 * clone, a schedule with a run, a skill file, and the settings switches turned with keys. No agent server
 * runs here, so the Sessions section must say so (real opencode: agent-sessions.test.tsx).
 */

let view: ReturnType<typeof renderWithProviders> | undefined;
afterEach(() => view?.unmount());

const waitForFrame = (text: string | RegExp, timeout = 10_000) =>
  vi.waitFor(() => expect(view!.lastFrame()).toMatch(typeof text === 'string' ? new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : text), { timeout });

describe('Agent screen (real PostgreSQL, real core)', () => {
  let db: TestDatabase;
  let ws: string;
  let config: Config;
  let data: DashboardData;
  let boss: PgBoss;
  let origin: Awaited<ReturnType<typeof makeBareRepo>>;
  let token: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    ws = mkdtempSync(path.join(os.tmpdir(), 'docdex-dash-agent-'));
    origin = await makeBareRepo();
    // Nothing listens on AGENT_PORT: the agent server is not running.
    config = loadConfig({ ...db.env, WORKSPACE_PATH: ws, AGENT_PORT: String(await freePort()) });
    await addRepository(config, { source: `file://${origin.bare}`, name: 'app' }, { wait: true });
    await addRepositoryWorktree(config, { repo: 'app', branch: 'feature-x' });
    await addRepository(config, { source: `file://${path.join(origin.dir, 'missing.git')}`, name: 'broken' }, { wait: true });
    await createSkillFile(config, { name: 'deploy-notes', description: 'How this team deploys', body: 'Run the deploy script.' }, { scope: 'global' });
    boss = createBoss(db.info, { max: 2 });
    boss.on('error', () => undefined);
    await boss.start();
    await ensureAgentQueues(boss);
    const app = (await listRepositories(config)).find((r) => r.localPath === 'app')!;
    const ctx = { pool: db.pool, workspace: workspaceLayout(config), boss };
    const schedule = await createSchedule(ctx, app.id, { name: 'nightly review', prompt: 'Review the open changes.', intervalMinutes: 60 });
    await startRun(ctx, app.id, schedule.id);
    token = (await ensureManagerToken(db.pool)).token;
    // A host that cannot run the microVM, so enabling shows the refusal the CLI gives.
    data = createDashboardData(db, config, { sandboxHost: { platform: 'darwin' } });
  }, 120_000);

  afterAll(async () => {
    await boss?.stop({ graceful: false, close: true });
    await db?.drop();
    origin?.cleanup();
    if (ws) rmSync(ws, { recursive: true, force: true });
  });

  it('lists repositories with their clone status, worktrees under their repository, and a failed clone with its error', async () => {
    view = renderWithProviders(<Agent active width={120} height={20} />, { data, now: Date.now });
    await waitForFrame('feature-x');
    const lines = view.lastFrame().split('\n');
    expect(lines[0]).toContain('Repositories');
    const app = lines.findIndex((l) => / app +ready +main /.test(l));
    expect(app, view.lastFrame()).toBeGreaterThan(0);
    expect(lines[app + 1]).toMatch(/└ app-feature-x +ready +feature-x +worktree/);
    expect(lines.find((l) => l.includes('broken'))).toMatch(/broken +error +- +fatal: /);
    expect(lines.at(-1)).toMatch(/^↑↓ select {2}←→ section/);
  });

  it('says the agent server is not running in Sessions, with how to start it', async () => {
    view = renderWithProviders(<Agent active width={120} height={20} />, { data, now: Date.now });
    await view.type(KEYS.right);
    await waitForFrame('Agent server not running');
    expect(view.lastFrame()).toMatch(/The agent server at http:\/\/127\.0\.0\.1:\d+ is not answering/);
    expect(view.lastFrame()).toContain('docdex agent start');
  });

  it('shows schedules and their runs', async () => {
    view = renderWithProviders(<Agent active width={120} height={20} initialSection="Schedules" />, { data, now: Date.now });
    // When it last ran (its manual run) and when it runs next, within the hour.
    await waitForFrame(/nightly review +app +60 min +yes +\d+s ago +in (\d+[sm]|1h)/);
    expect(view.lastFrame()).toMatch(/1 +nightly review +queued +manual/);
  });

  it('shows skills with their scope', async () => {
    view = renderWithProviders(<Agent active width={120} height={20} initialSection="Skills" />, { data, now: Date.now });
    await waitForFrame(/deploy-notes +global +- +How this team deploys/);
  });

  it('shows the settings with the manager token masked', async () => {
    view = renderWithProviders(<Agent active width={120} height={24} initialSection="Settings" />, { data, now: Date.now });
    await waitForFrame('Manager token:');
    const frame = view.lastFrame();
    expect(frame).toContain(`Manager token: ${'•'.repeat(12)}${token.slice(-4)}`);
    expect(frame).not.toContain(token.slice(0, 8));
    expect(frame).toContain('Sandbox enforcement: off');
    expect(frame).toContain('Git credential forwarding: off');
    expect(frame).toContain('Git identity: not set');
    expect(frame).toContain('The agent server is stopped; the setting applies when it starts');
  });

  it('refuses to turn the sandbox on where the host cannot run the microVM, as the CLI does, and changes nothing', async () => {
    view = renderWithProviders(<Agent active width={120} height={24} initialSection="Settings" />, { data, now: Date.now });
    await waitForFrame('Sandbox enforcement: off');
    await view.type('e');
    await waitForFrame('Sandbox enforcement stays off: this host cannot run the microVM (the microVM needs a Linux host');
    expect(view.lastFrame()).toContain('Hint: Install what is missing');
    expect((await readSettings(db.pool)).preferences.sandbox.enabled).toBe(false);
  });

  it('turns credential forwarding on and sets the git identity with keys, through the core the CLI uses', async () => {
    view = renderWithProviders(<Agent active width={120} height={24} initialSection="Settings" />, { data, now: Date.now });
    await waitForFrame('Git credential forwarding: off');
    await view.type('c');
    await waitForFrame('Git credential forwarding: on');
    expect((await readSettings(db.pool)).preferences.sandbox.gitCredentials).toBe(true);

    await view.type('i');
    await waitForFrame('Git identity (both empty clears it)');
    expect(view.lastFrame().split('\n').at(-1)).toMatch(/^tab field {2}enter save {2}esc cancel/);
    await view.type(...'Ada Lovelace'.split(''), KEYS.tab, ...'ada@example.com'.split(''), KEYS.enter);
    await waitForFrame('Git identity: Ada Lovelace <ada@example.com>');
    expect((await readSettings(db.pool)).preferences.gitIdentity).toEqual({ name: 'Ada Lovelace', email: 'ada@example.com' });
  });

  it('moves between sections with the arrow keys', async () => {
    view = renderWithProviders(<Agent active width={120} height={20} />, { data, now: Date.now });
    await view.type(KEYS.left);
    await waitForFrame('Manager token:');
    await view.type(KEYS.right, KEYS.right);
    await waitForFrame('Agent server not running');
  });
});

describe('Agent screen: the sandbox badge', () => {
  it('marks exactly the tool calls that carry the sandbox marker, in green', async () => {
    view = renderWithProviders(<Agent active width={100} height={16} initialSection="Sessions" />, { data: createFakeData() });
    await waitForFrame('Fix the login bug');
    await view.type(KEYS.enter);
    await waitForFrame('Tool calls of Fix the login bug');
    const lines = view.lastFrame().split('\n');
    expect(lines.find((l) => l.includes('npm test'))).toMatch(/bash +npm test +completed +sandbox$/);
    expect(lines.find((l) => l.includes('hostname'))).not.toContain('sandbox');
    expect(lines.find((l) => l.includes('src/login.ts'))).not.toContain('sandbox');
    await view.type(KEYS.escape);
    await waitForFrame('Fix the login bug');
  });
});
