import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSkill, parseSkillFile, renderSkillFile, updateSkill } from '../../src/core/agent/skills.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { rawRequest, startAgentDaemon } from './helpers.js';
import type { AgentDaemon } from './helpers.js';

const AWKWARD_DESCRIPTIONS = [
  'Use when: the user asks "why?" and says \'now\'',
  '- starts like a list item',
  '# starts like a comment',
  'contains # a hash and: a colon',
  'line one\nline two\n\nline four after a blank',
  '  leading and trailing spaces  ',
  '{ "looks": "like json" }',
  '[1, 2, 3]',
  'yes',
  'null',
  '123',
  '---',
  'key: value\nother: thing',
  '>- folded marker',
  '| literal marker',
  '@at and `backticks` and %percent and &anchor *alias !tag',
  'tab\tinside',
  'unicode ✓ 日本語 émoji 🎉',
  'ends with a newline\n',
  '"fully quoted"',
];

describe('SKILL.md format', () => {
  it.each(AWKWARD_DESCRIPTIONS)('round-trips the description %j through real YAML', (description) => {
    const body = '# Title\n\nSome *markdown*.\n\n---\n\nA horizontal rule above, and trailing text';
    const text = renderSkillFile({ name: 'awkward-one', description, body });
    expect(text.startsWith('---\nname: awkward-one\n')).toBe(true);
    expect(parseSkillFile(text)).toEqual({ name: 'awkward-one', description, body });
  });

  it('reads files written by hand, with CRLF and without frontmatter', () => {
    expect(parseSkillFile('---\r\nname: x\r\ndescription: "a: b"\r\n---\r\n\r\nBody\r\n')).toEqual({ name: 'x', description: 'a: b', body: 'Body\r\n' });
    expect(parseSkillFile('---\nname: x\ndescription: d\n---\nImmediately\n')).toEqual({ name: 'x', description: 'd', body: 'Immediately\n' });
    expect(parseSkillFile('Just text')).toEqual({ name: '', description: '', body: 'Just text' });
  });

  it('never leaves a half-written file: writes go through a temporary file and a rename', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'docdex-skill-'));
    try {
      const place = { scope: 'global' as const, dir };
      await createSkill(place, { name: 'atomic', description: 'd', body: 'x'.repeat(200_000) });
      const file = path.join(dir, 'atomic', 'SKILL.md');
      const bodies = ['a'.repeat(300_000), 'b'.repeat(300_000)];
      let reads = 0;
      let stop = false;
      const reader = (async () => {
        while (!stop) {
          const text = readFileSync(file, 'utf8');
          const { body } = parseSkillFile(text);
          expect(['x'.repeat(200_000), ...bodies]).toContain(body);
          reads++;
          await new Promise((r) => setImmediate(r));
        }
      })();
      for (let i = 0; i < 20; i++) await updateSkill(place, 'atomic', { body: bodies[i % 2]! });
      stop = true;
      await reader;
      expect(reads).toBeGreaterThan(0);
      expect(readdirSync(path.join(dir, 'atomic'))).toEqual(['SKILL.md']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

let db: TestDatabase;
let daemon: AgentDaemon;
let repoId: number;
let repoDir: string;

beforeAll(async () => {
  db = await createTestDatabase();
  daemon = await startAgentDaemon(db, { services: false });
  repoDir = path.join(daemon.workspace.reposDir, 'proj');
  mkdirSync(repoDir, { recursive: true });
  const { rows } = await db.pool.query<{ id: number }>(`INSERT INTO agent_repos (local_path, clone_status, is_local) VALUES ('proj', 'ready', true) RETURNING id`);
  repoId = rows[0]!.id;
});
afterAll(async () => {
  await daemon?.close();
  await db?.drop();
});

const api = (method: string, route: string, body?: unknown) => daemon.call(method, `/api/settings${route}`, { body, token: null });

describe('/api/settings/skills', () => {
  it('creates, reads, lists, updates and deletes a global skill', async () => {
    const created = await api('POST', '/skills', { name: 'code-review', description: 'Review: "carefully" # always', body: '# Review\n\nCheck tests.\n', scope: 'global' });
    expect(created.status).toBe(201);
    const location = path.join(daemon.workspace.globalSkillsDir, 'code-review', 'SKILL.md');
    expect(created.body).toEqual({ name: 'code-review', description: 'Review: "carefully" # always', body: '# Review\n\nCheck tests.\n', scope: 'global', location, repoId: null, repoName: null });
    expect(readFileSync(location, 'utf8')).toBe(renderSkillFile(created.body));

    expect((await api('POST', '/skills', { name: 'code-review', description: 'again', body: 'x', scope: 'global' })).status).toBe(409);
    expect((await api('GET', '/skills/code-review?scope=global')).body).toEqual(created.body);

    const updated = await api('PUT', '/skills/code-review?scope=global', { description: 'New\nmultiline: description' });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ description: 'New\nmultiline: description', body: '# Review\n\nCheck tests.\n' });
    const bodyOnly = await api('PUT', '/skills/code-review?scope=global', { body: 'Only the body' });
    expect(bodyOnly.body).toMatchObject({ description: 'New\nmultiline: description', body: 'Only the body' });

    const listed = await api('GET', '/skills');
    expect(listed.status).toBe(200);
    expect(listed.body.skills).toEqual([expect.objectContaining({ name: 'code-review', scope: 'global', repoId: null, repoName: null })]);

    const deleted = await api('DELETE', '/skills/code-review?scope=global');
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ deleted: true, skill: { name: 'code-review' } });
    expect(existsSync(path.dirname(location))).toBe(false);
    expect((await api('GET', '/skills/code-review?scope=global')).status).toBe(404);
    expect((await api('PUT', '/skills/code-review?scope=global', { body: 'x' })).status).toBe(404);
    expect((await api('DELETE', '/skills/code-review?scope=global')).status).toBe(404);
  });

  it('keeps project skills in the repo and filters the list by repoId', async () => {
    const created = await api('POST', '/skills', { name: 'release', description: 'Release steps', body: 'Tag and push.', scope: 'project', repoId });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ scope: 'project', repoId, repoName: 'proj', location: path.join(repoDir, '.opencode', 'skills', 'release', 'SKILL.md') });
    await api('POST', '/skills', { name: 'global-one', description: 'g', body: 'g', scope: 'global' });
    const filtered = await api('GET', `/skills?repoId=${repoId}`);
    expect(filtered.body.skills.map((s: { name: string }) => s.name)).toEqual(['global-one', 'release']);
    expect((await api('GET', `/skills/release?scope=project&repoId=${repoId}`)).body.body).toBe('Tag and push.');
    expect((await api('GET', '/skills/release?scope=global')).status).toBe(404);
    expect((await api('GET', '/skills?repoId=999')).status).toBe(404);
  });

  it('answers 400 for scope and repoId mismatches and for invalid fields, as for a bad name (spec: Errors), and 404 for unknown repos', async () => {
    expect((await api('POST', '/skills', { name: 'x', description: 'd', body: 'b', scope: 'project' })).status).toBe(400);
    expect((await api('POST', '/skills', { name: 'x', description: 'd', body: 'b', scope: 'global', repoId })).status).toBe(400);
    expect((await api('GET', '/skills/release?scope=project')).status).toBe(400);
    expect((await api('POST', '/skills', { name: 'x', description: 'd', body: 'b', scope: 'project', repoId: 999 })).status).toBe(404);
    const invalid = [
      { name: 'x', description: '', body: 'b', scope: 'global' },
      { name: 'x', description: 'd'.repeat(1025), body: 'b', scope: 'global' },
      { name: 'x', description: 'd', scope: 'global' },
      { name: 'x', description: 'd', body: '', scope: 'global' },
      { name: 'x', description: 'd', body: 'b', scope: 'everywhere' },
      { name: 'x', description: 'd', body: 'b' },
    ];
    for (const body of invalid) {
      const res = await api('POST', '/skills', body);
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect(res.body.code).toBe('bad_request');
    }
    expect((await api('POST', '/skills', { name: 'edge', description: 'd'.repeat(1024), body: 'b', scope: 'global' })).status).toBe(201);
    expect((await api('PUT', '/skills/edge?scope=global', { description: '' })).status).toBe(400);
    expect((await api('GET', '/skills/edge')).status).toBe(400);
    expect((await api('GET', '/skills?repoId=abc')).status).toBe(400);
    expect((await api('POST', '/skills', { name: '../x', description: 'd', body: 'b', scope: 'global' })).body).toMatchObject({ code: 'invalid_skill_name' });
  });

  it('refuses traversal and invalid names before building any path', async () => {
    const sentinel = path.join(daemon.workspace.agentConfigDir, 'x');
    const names = ['../x', 'a/b', '..', '.', '%2e%2e', 'x'.repeat(65), 'Upper', 'UPPER', 'a--b', '-a', 'a-', 'a_b', 'a b', 'a.b', '', 'é'];
    for (const name of names) {
      const res = await api('POST', '/skills', { name, description: 'd', body: 'b', scope: 'global' });
      expect(res.status, `create ${JSON.stringify(name)}`).toBe(400);
      expect(res.body.code).toBe('invalid_skill_name');
    }
    expect((await api('POST', '/skills', { name: 'x'.repeat(64), description: 'd', body: 'b', scope: 'global' })).status).toBe(201);
    for (const encoded of ['..%2Fx', 'a%2Fb', '%2e%2e', '%2E%2E%2Fx', 'x'.repeat(65), 'Upper', '..%5Cx', '%252e%252e']) {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const res = await rawRequest(daemon.base, method, `/api/settings/skills/${encoded}?scope=global`, {}, method === 'PUT' ? JSON.stringify({ body: 'pwned' }) : undefined);
        expect(res.status, `${method} ${encoded}`).toBe(400);
      }
    }
    for (const raw of ['/api/settings/skills/../x?scope=global', '/api/settings/skills/../../config/opencode/x?scope=global', '/api/settings/skills/a/b?scope=global']) {
      const res = await rawRequest(daemon.base, 'PUT', raw, {}, JSON.stringify({ body: 'pwned' }));
      expect([400, 404], raw).toContain(res.status);
    }
    expect(existsSync(sentinel)).toBe(false);
    expect(readdirSync(daemon.workspace.globalSkillsDir).sort()).toEqual(['edge', 'global-one', 'x'.repeat(64)].sort());
  });

  it('does not follow a symlinked project skills folder out of the repo', async () => {
    const outside = mkdtempSync(path.join(os.tmpdir(), 'docdex-outside-'));
    const other = path.join(daemon.workspace.reposDir, 'evil');
    mkdirSync(path.join(other, '.opencode'), { recursive: true });
    symlinkSync(outside, path.join(other, '.opencode', 'skills'));
    const { rows } = await db.pool.query<{ id: number }>(`INSERT INTO agent_repos (local_path, clone_status) VALUES ('evil', 'ready') RETURNING id`);
    try {
      const res = await api('POST', '/skills', { name: 'escape', description: 'd', body: 'b', scope: 'project', repoId: rows[0]!.id });
      expect(res.status).toBe(400);
      expect(readdirSync(outside)).toEqual([]);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('lists hand-written skills and skips folders that are not skills', async () => {
    const dir = daemon.workspace.globalSkillsDir;
    mkdirSync(path.join(dir, 'by-hand'));
    writeFileSync(path.join(dir, 'by-hand', 'SKILL.md'), '---\nname: by-hand\ndescription: >\n  folded text\n---\n\nHello\n');
    mkdirSync(path.join(dir, 'Not_A_Skill'));
    writeFileSync(path.join(dir, 'Not_A_Skill', 'SKILL.md'), 'x');
    mkdirSync(path.join(dir, 'empty-folder'));
    const names = (await api('GET', '/skills')).body.skills.filter((s: { scope: string }) => s.scope === 'global').map((s: { name: string }) => s.name);
    expect(names).toContain('by-hand');
    expect(names).not.toContain('Not_A_Skill');
    expect(names).not.toContain('empty-folder');
    expect((await api('GET', '/skills/by-hand?scope=global')).body).toMatchObject({ description: 'folded text\n', body: 'Hello\n' });
  });
});
