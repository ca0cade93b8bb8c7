import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/core/db/transaction.js';
import { findProject, listProjectLibraries, pruneProjectLibraries, recordProjectLibraries, upsertProject } from '../../src/core/project/store.js';
import type { ProjectLibraryEntry } from '../../src/core/project/store.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const entry = (name: string, version: string, extra: Partial<ProjectLibraryEntry> = {}): ProjectLibraryEntry => ({
  ecosystem: 'npm',
  name,
  version,
  spec: `npm:${name}@${version}`,
  direct: true,
  unresolved: null,
  ...extra,
});

describe('project records', () => {
  it('finds a project by root, name or id, and keeps one record per root', async () => {
    const project = await upsertProject(db.pool, { name: 'demo', root: '/srv/demo' });
    expect((await upsertProject(db.pool, { name: 'demo', root: '/srv/demo' })).id).toBe(project.id);
    for (const ref of ['/srv/demo', 'demo', project.id]) expect((await findProject(db.pool, ref))?.id).toBe(project.id);
    expect(await findProject(db.pool, 'nope')).toBeNull();
  });

  it("reads each library's indexed state from the sources (name or alias, exact version), marks dropped ones unused, prunes them", async () => {
    const project = await upsertProject(db.pool, { name: 'app', root: '/srv/app' });
    await db.pool.query(`INSERT INTO sources (name, version, aliases, document_count) VALUES ('semver', '7.6.3', '{}', 2), ('semver', '7.5.0', '{}', 1), ('Acme', '1.0.0', '{left}', 1)`);
    await withTransaction(db.pool, (c) =>
      recordProjectLibraries(c, project.id, [entry('semver', '7.6.3'), entry('left', '1.0.0', { direct: false }), entry('gone', '1.0.0', { unresolved: 'no repository' })]),
    );
    await withTransaction(db.pool, (c) => recordProjectLibraries(c, project.id, [entry('semver', '7.6.3'), entry('left', '1.0.0', { direct: false })]));

    const inUse = await listProjectLibraries(db.pool, project.id);
    expect(inUse.map((r) => [r.name, r.version, r.source_id !== null, r.other_versions, r.document_count])).toEqual([
      ['left', '1.0.0', true, [], 1],
      ['semver', '7.6.3', true, ['7.5.0'], 2],
    ]);
    const all = await listProjectLibraries(db.pool, project.id, { includeUnused: true });
    expect(all.find((r) => r.name === 'gone')).toMatchObject({ in_use: false, unresolved: 'no repository', source_id: null });
    expect(await pruneProjectLibraries(db.pool, project.id)).toBe(1);
    expect(await listProjectLibraries(db.pool, project.id, { includeUnused: true })).toHaveLength(2);
    expect((await findProject(db.pool, 'app'))?.synced_at).toBeInstanceOf(Date);
  });
});
