import { mkdtempSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { withTransaction } from '../../src/core/db/transaction.js';
import { recordProjectLibraries, upsertProject } from '../../src/core/project/store.js';
import type { ProjectLibraryEntry, ProjectRecord } from '../../src/core/project/store.js';
import { addPage, createSource } from '../search/fixtures.js';
import type { FixtureSource } from '../search/fixtures.js';

/**
 * An index and two projects for asking by project: `semver` at two versions (7.5.0 and 7.6.3) and `acorn`, each
 * with a snippet holding the word "widgetize"; project `app` (a real directory) locks semver@7.6.3 and
 * acorn@8.0.0 and names a missing, an unresolved and a still-indexing library; project `old-app` locks only
 * semver@9.9.9, which is not indexed although other versions are.
 */
export interface AskFixture {
  app: ProjectRecord;
  oldApp: ProjectRecord;
  /** app's root directory (real path, exists). */
  appRoot: string;
  semverOld: FixtureSource;
  semverLocked: FixtureSource;
  acorn: FixtureSource;
  indexing: FixtureSource;
}

export const entry = (name: string, version: string, extra: Partial<ProjectLibraryEntry> = {}): ProjectLibraryEntry => ({
  ecosystem: 'npm',
  name,
  version,
  spec: `npm:${name}@${version}`,
  direct: true,
  unresolved: null,
  ...extra,
});

export async function createAskFixture(pool: pg.Pool): Promise<AskFixture> {
  const semverOld = await createSource(pool, 'semver', '7.5.0');
  const semverLocked = await createSource(pool, 'semver', '7.6.3');
  const acorn = await createSource(pool, 'acorn', '8.0.0');
  const indexing = await createSource(pool, 'slowlib', '2.0.0');
  await addPage(pool, semverOld, 'https://semver.example/7.5.0/api.html', [{ title: 'Widgetize a range (old API)', code: 'semver.widgetize(oldRange, { loose: true })', language: 'javascript' }]);
  await addPage(pool, semverLocked, 'https://semver.example/7.6.3/api.html', [{ title: 'Widgetize a range', code: 'semver.widgetize(range)', language: 'javascript' }]);
  await addPage(pool, acorn, 'https://acorn.example/8.0.0/walk.html', [{ title: 'Widgetize a syntax tree', code: 'acorn.widgetize(tree)', language: 'javascript' }]);

  const appRoot = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'docdex-ask-app-')));
  const app = await upsertProject(pool, { name: 'app', root: appRoot });
  const oldApp = await upsertProject(pool, { name: 'old-app', root: null });
  await withTransaction(pool, async (c) => {
    await recordProjectLibraries(c, app.id, [
      entry('semver', '7.6.3'),
      entry('acorn', '8.0.0'),
      entry('leftpad', '1.3.0', { direct: false }),
      entry('private-thing', '0.1.0', { unresolved: 'the registry asked for credentials' }),
      entry('slowlib', '2.0.0'),
    ]);
    await recordProjectLibraries(c, oldApp.id, [entry('semver', '9.9.9')]);
  });
  return { app, oldApp, appRoot, semverOld, semverLocked, acorn, indexing };
}
