import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MGR_ALLOWLIST, resolveMgrRequest } from '../../src/core/agent/mgr-allowlist.js';
import { provisionShippedSkills } from '../../src/core/agent/provision.js';
import { SHIPPED_SKILLS } from '../../src/core/agent/shipped-skills/index.js';
import { parseSkillFile, renderSkillFile } from '../../src/core/agent/skills.js';
import { readManagerToken } from '../../src/core/agent/token.js';
import { workspaceLayout } from '../../src/core/agent/workspace.js';
import { loadConfig } from '../../src/core/config.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startAgentDaemon } from './helpers.js';

let db: TestDatabase;
let root: string;
beforeAll(async () => {
  db = await createTestDatabase();
  root = mkdtempSync(path.join(os.tmpdir(), 'docdex-ws-'));
});
afterAll(async () => {
  await db?.drop();
  rmSync(root, { recursive: true, force: true });
});

describe('startAgentServices', () => {
  it('creates the workspace layout with private secret folders, the token and the shipped skills', async () => {
    expect(await readManagerToken(db.pool)).toBeUndefined();
    const workspacePath = path.join(root, 'ws');
    const daemon = await startAgentDaemon(db, { workspacePath });
    try {
      const ws = daemon.workspace;
      expect(ws.root).toBe(workspacePath);
      for (const dir of [ws.reposDir, ws.scheduleWorktreesDir, ws.assistantSkillsDir]) expect(statSync(dir).isDirectory()).toBe(true);
      for (const dir of [path.join(workspacePath, '.config'), ws.agentConfigDir, ws.globalSkillsDir, ws.pluginDir, ws.sshConfigDir, ws.sshKeysDir, ws.stateDir]) {
        expect(statSync(dir).mode & 0o777, dir).toBe(0o700);
      }
      expect(await readManagerToken(db.pool)).toMatch(/^[A-Za-z0-9_-]{43}$/);
      for (const skill of SHIPPED_SKILLS) {
        const file = path.join(ws.root, '.opencode', 'skills', skill.name, 'SKILL.md');
        expect(readFileSync(file, 'utf8')).toBe(renderSkillFile(skill));
      }
    } finally {
      await daemon.close();
    }
  });

  it('resolves WORKSPACE_PATH to an absolute path, default ./workspace', () => {
    expect(workspaceLayout(loadConfig({ WORKSPACE_PATH: 'rel/ws' })).root).toBe(path.resolve('rel/ws'));
    expect(workspaceLayout(loadConfig({})).reposDir).toBe(path.resolve('workspace', 'repos'));
  });

  it('never overwrites a shipped skill the user edited, and updates unedited ones', async () => {
    const ws = workspaceLayout(loadConfig({ WORKSPACE_PATH: path.join(root, 'ws') }));
    const file = (name: string) => path.join(ws.assistantSkillsDir, name, 'SKILL.md');
    expect(Object.values(await provisionShippedSkills(db.pool, ws))).toEqual(['unchanged', 'unchanged', 'unchanged', 'unchanged']);

    writeFileSync(file('notifications'), '---\nname: notifications\ndescription: mine\n---\n\nMy own rules.\n');
    // An older release's text, recorded as what docdex wrote: not a user edit, so it is updated.
    const older = renderSkillFile({ name: 'repo-management', description: 'old', body: 'old body' });
    writeFileSync(file('repo-management'), older);
    await db.pool.query('UPDATE agent_shipped_skills SET content_hash = $1 WHERE name = $2', [createHash('sha256').update(older).digest('hex'), 'repo-management']);
    rmSync(path.dirname(file('manager-settings')), { recursive: true });

    const outcomes = await provisionShippedSkills(db.pool, ws);
    expect(outcomes).toEqual({ 'schedule-management': 'unchanged', notifications: 'kept-user-edit', 'manager-settings': 'written', 'repo-management': 'updated' });
    expect(readFileSync(file('notifications'), 'utf8')).toContain('My own rules.');
    expect(parseSkillFile(readFileSync(file('repo-management'), 'utf8')).body).toBe(SHIPPED_SKILLS.find((s) => s.name === 'repo-management')!.body);
    // A restart keeps the edit.
    const daemon = await startAgentDaemon(db, { workspacePath: path.join(root, 'ws') });
    await daemon.close();
    expect(readFileSync(file('notifications'), 'utf8')).toContain('My own rules.');
  });
});

describe('shipped skills', () => {
  it('are valid skills that teach the mgr tool with allow-listed calls only', () => {
    expect(SHIPPED_SKILLS.map((s) => s.name)).toEqual(['schedule-management', 'notifications', 'manager-settings', 'repo-management']);
    const covered = new Set<string>();
    for (const skill of SHIPPED_SKILLS) {
      expect(skill.description.length).toBeGreaterThan(0);
      expect(skill.description.length).toBeLessThanOrEqual(1024);
      expect(skill.body).toContain('mgr');
      const calls = [...skill.body.matchAll(/action: "request", method: "(\w+)", path: "([^"]+)"/g)];
      if (skill.name !== 'notifications') expect(calls.length, skill.name).toBeGreaterThan(0);
      for (const [, method, route] of calls) {
        const check = resolveMgrRequest(method, route);
        expect(check.ok, `${skill.name}: ${method} ${route}`).toBe(true);
        const pattern = MGR_ALLOWLIST.find((r) => r.method === method && new RegExp(`^${r.path.replaceAll('*', '[^/]+')}(\\?.*)?$`).test(route!));
        covered.add(`${pattern!.method} ${pattern!.path}`);
      }
      expect(skill.body).not.toMatch(/api\/internal\/notifications|git-credentials|sandbox\/shell|mirror\//);
    }
    expect(SHIPPED_SKILLS.find((s) => s.name === 'notifications')!.body).toMatch(/action: "send_notification", title: "/);
    // Between them, the skills show every allow-listed route.
    expect([...covered].sort()).toEqual(MGR_ALLOWLIST.map((r) => `${r.method} ${r.path}`).sort());
  });
});
