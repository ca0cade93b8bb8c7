import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/core/errors.js';
import { projectLibraries, ProjectNotFoundError } from '../../src/core/project/libraries.js';
import { withTransaction } from '../../src/core/db/transaction.js';
import { describeNotIndexed, searchProject } from '../../src/core/project/search.js';
import { recordProjectLibraries, upsertProject } from '../../src/core/project/store.js';
import { createSource } from '../search/fixtures.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { createAskFixture, entry } from './ask-fixture.js';
import type { AskFixture } from './ask-fixture.js';

let db: TestDatabase;
let f: AskFixture;
beforeAll(async () => {
  db = await createTestDatabase();
  f = await createAskFixture(db.pool);
});
afterAll(async () => {
  await db?.drop();
});

describe('projectLibraries', () => {
  it('states each library: indexed at its version, indexing, missing, unresolved with the reason, and the other versions', async () => {
    const { project, libraries } = await projectLibraries(db.pool, 'app');
    expect(project.id).toBe(f.app.id);
    const byName = Object.fromEntries(libraries.map((l) => [l.name, l]));
    expect(byName.semver).toMatchObject({ version: '7.6.3', state: 'indexed', source_id: f.semverLocked.id, other_versions: ['7.5.0'], snippet_count: 1 });
    expect(byName.acorn).toMatchObject({ state: 'indexed', source_id: f.acorn.id });
    expect(byName.slowlib).toMatchObject({ state: 'indexing', source_id: f.indexing.id });
    expect(byName.leftpad).toMatchObject({ state: 'missing', source_id: null, direct: false });
    expect(byName['private-thing']).toMatchObject({ state: 'unresolved', reason: 'the registry asked for credentials' });
    expect(byName.semver).not.toHaveProperty('reason');
  });

  it('a source left empty by a failed or cancelled job is failed, with the reason; a newer queued job makes it indexing again', async () => {
    const broken = await createSource(db.pool, 'brokenlib', '1.0.0');
    const stopped = await createSource(db.pool, 'stoppedlib', '1.0.0');
    const retried = await createSource(db.pool, 'retriedlib', '1.0.0');
    await db.pool.query(`UPDATE crawl_jobs SET status = 'failed', error = 'every start URL failed: 404' WHERE id = $1`, [broken.jobId]);
    await db.pool.query(`UPDATE crawl_jobs SET status = 'cancelled' WHERE id = $1`, [stopped.jobId]);
    await db.pool.query(`UPDATE crawl_jobs SET status = 'failed', error = 'timed out', created_at = now() - interval '1 hour' WHERE id = $1`, [retried.jobId]);
    await db.pool.query(`INSERT INTO upload_jobs (name, source_type, source_id, status) VALUES ('retriedlib', 'git', $1, 'queued')`, [retried.id]);
    const project = await upsertProject(db.pool, { name: 'flaky-app', root: null });
    await withTransaction(db.pool, (c) => recordProjectLibraries(c, project.id, [entry('brokenlib', '1.0.0'), entry('stoppedlib', '1.0.0'), entry('retriedlib', '1.0.0')]));

    const byName = Object.fromEntries((await projectLibraries(db.pool, 'flaky-app')).libraries.map((l) => [l.name, l]));
    expect(byName.brokenlib).toMatchObject({ state: 'failed', reason: 'every start URL failed: 404', source_id: broken.id });
    expect(byName.stoppedlib).toMatchObject({ state: 'failed', reason: 'its indexing job was cancelled' });
    expect(byName.retriedlib).toMatchObject({ state: 'indexing' });
    expect(byName.retriedlib).not.toHaveProperty('reason');

    const search = await searchProject(db.pool, { project: 'flaky-app', query: 'widgetize' });
    expect(search.not_indexed.map(describeNotIndexed)).toEqual([
      'brokenlib@1.0.0 (failed: every start URL failed: 404)',
      'retriedlib@1.0.0 (indexing)',
      'stoppedlib@1.0.0 (failed: its indexing job was cancelled)',
    ]);
  });

  it('finds the project by id, name, root, or a directory inside the root', async () => {
    for (const ref of [f.app.id, 'app', f.appRoot, `${f.appRoot}/`, path.join(f.appRoot, 'packages', 'web')]) {
      expect((await projectLibraries(db.pool, ref)).project.id, ref).toBe(f.app.id);
    }
  });

  it('answers an unknown project with project_not_found listing the known ones, and refuses a bad reference', async () => {
    const error = await projectLibraries(db.pool, '/nowhere/at/all').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProjectNotFoundError);
    expect(error).toMatchObject({ code: 'project_not_found', status: 404 });
    expect((error as Error).message).toContain(`app (${f.appRoot})`);
    expect((error as Error).message).toContain('old-app');
    for (const bad of ['', '   ', 'a\0b', 'x'.repeat(5000)]) await expect(projectLibraries(db.pool, bad)).rejects.toBeInstanceOf(ValidationError);
  });
});

describe('searchProject', () => {
  it("returns only the locked versions of the project's libraries, ranked together, and names the ones not indexed", async () => {
    const r = await searchProject(db.pool, { project: 'app', query: 'widgetize' });
    expect(r.items.map((i) => `${i.source_name}@${i.version}`).sort()).toEqual(['acorn@8.0.0', 'semver@7.6.3']);
    expect(r.items.some((i) => i.code.includes('oldRange'))).toBe(false);
    expect(r.searched).toBe(2);
    expect(r.not_indexed.map((l) => [l.name, l.version, l.state])).toEqual([
      ['leftpad', '1.3.0', 'missing'],
      ['private-thing', '0.1.0', 'unresolved'],
      ['slowlib', '2.0.0', 'indexing'],
    ]);
  });

  it('never answers from another version: a project locking a version that is not indexed gets nothing, and is told so', async () => {
    const r = await searchProject(db.pool, { project: 'old-app', query: 'widgetize' });
    expect(r).toMatchObject({ items: [], total: 0, searched: 0 });
    expect(r.not_indexed).toEqual([{ name: 'semver', version: '9.9.9', spec: 'npm:semver@9.9.9', state: 'missing', other_versions: ['7.5.0', '7.6.3'] }]);
  });

  it('checks the query and paging even when nothing is indexed', async () => {
    await expect(searchProject(db.pool, { project: 'old-app', query: 'x', limit: 0 })).rejects.toBeInstanceOf(ValidationError);
    await expect(searchProject(db.pool, { project: 'nope', query: 'x' })).rejects.toBeInstanceOf(ProjectNotFoundError);
  });
});
