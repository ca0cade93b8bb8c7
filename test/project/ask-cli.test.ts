import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { createAskFixture } from './ask-fixture.js';
import type { AskFixture } from './ask-fixture.js';

/** `docdex search --project` through the real binary (run `npm run build` first). */

let db: TestDatabase;
let f: AskFixture;
beforeAll(async () => {
  db = await createTestDatabase();
  f = await createAskFixture(db.pool);
});
afterAll(async () => {
  await db?.drop();
});

describe('docdex search --project', () => {
  it('searches the project in the current directory (".") at its locked versions, each result with library@version', async () => {
    const inside = path.join(f.appRoot, 'src');
    mkdirSync(inside, { recursive: true });
    const r = await runCli(['search', '--project', '.', 'widgetize'], { env: db.env, cwd: inside });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const out = String(r.stdout);
    expect(out).toContain(`Project app (${f.appRoot}): 2 libraries searched`);
    expect(out).toContain('semver@7.6.3 · javascript');
    expect(out).toContain('acorn@8.0.0 · javascript');
    expect(out).not.toContain('7.5.0');
    expect(out).not.toContain('oldRange');
    expect(out).toContain('Not indexed at the version the project uses, so not searched: leftpad@1.3.0 (missing)');
  });

  it('takes a project name, prints the answer as --json, and says when the locked version is not indexed', async () => {
    const r = await runCli(['search', '-p', 'old-app', 'widgetize', '--json'], { env: db.env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const json = JSON.parse(String(r.stdout));
    expect(json).toMatchObject({ items: [], total: 0, searched: 0, project: { name: 'old-app' } });
    expect(json.not_indexed).toEqual([{ name: 'semver', version: '9.9.9', spec: 'npm:semver@9.9.9', state: 'missing', other_versions: ['7.5.0', '7.6.3'] }]);
    const byRoot = JSON.parse(String((await runCli(['search', '--project', f.appRoot, 'widgetize', '--json'], { env: db.env })).stdout));
    expect(byRoot.items.map((i: { source_name: string; version: string }) => `${i.source_name}@${i.version}`).sort()).toEqual(['acorn@8.0.0', 'semver@7.6.3']);
  });

  it('answers an unknown project with one Error line and a Hint, and refuses --project with --source', async () => {
    const r = await runCli(['search', '--project', '/no/such/project', 'widgetize'], { env: db.env });
    expect(r.exitCode).toBe(1);
    expect(String(r.stderr)).toMatch(/^Error: No project is recorded for "\/no\/such\/project"\. Known projects: app \(.*\), old-app\.\nHint: Run `docdex sync` in the project directory first\.\n?$/);
    const both = await runCli(['search', '--project', '.', '--source', 'semver', 'widgetize'], { env: db.env });
    expect(both.exitCode).toBe(2);
    expect(String(both.stderr)).toContain('--source');
  });
});
