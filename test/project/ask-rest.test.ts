import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createAskFixture } from './ask-fixture.js';
import type { AskFixture } from './ask-fixture.js';

/** Asking by project over REST, on the real daemon. */

let db: TestDatabase;
let f: AskFixture;
let daemon: Awaited<ReturnType<typeof startTestDaemon>>;
beforeAll(async () => {
  db = await createTestDatabase();
  f = await createAskFixture(db.pool);
  daemon = await startTestDaemon(db.config, { routes: docsIndexRoutes });
});
afterAll(async () => {
  await daemon?.close();
  await db?.drop();
});

async function get(path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${daemon.base}${path}`);
  return { status: res.status, body: await res.json() };
}

describe('/api/projects', () => {
  it('lists the recorded projects', async () => {
    const r = await get('/api/projects');
    expect(r.status).toBe(200);
    expect(r.body.items.map((p: { name: string; root: string | null }) => [p.name, p.root])).toEqual([
      ['app', f.appRoot],
      ['old-app', null],
    ]);
  });

  it("returns a project's libraries with their states, by name or URL-encoded root", async () => {
    for (const ref of ['app', encodeURIComponent(f.appRoot)]) {
      const r = await get(`/api/projects/${ref}/libraries`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.project.id).toBe(f.app.id);
      expect(Object.fromEntries(r.body.libraries.map((l: { name: string; state: string }) => [l.name, l.state]))).toEqual({
        acorn: 'indexed',
        leftpad: 'missing',
        'private-thing': 'unresolved',
        semver: 'indexed',
        slowlib: 'indexing',
      });
    }
  });

  it('searches only the locked versions and lists what is not indexed', async () => {
    const r = await get('/api/projects/app/search?q=widgetize');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.items.map((i: { source_name: string; version: string }) => `${i.source_name}@${i.version}`).sort()).toEqual(['acorn@8.0.0', 'semver@7.6.3']);
    expect(r.body.not_indexed.map((l: { name: string }) => l.name)).toEqual(['leftpad', 'private-thing', 'slowlib']);
    const old = await get('/api/projects/old-app/search?q=widgetize');
    expect(old.body).toMatchObject({ items: [], total: 0, searched: 0, not_indexed: [{ name: 'semver', version: '9.9.9', state: 'missing' }] });
  });

  it('answers an unknown project with 404 and the error body', async () => {
    for (const path of ['/api/projects/nope/libraries', '/api/projects/nope/search?q=x']) {
      const r = await get(path);
      expect(r.status).toBe(404);
      expect(r.body).toMatchObject({ code: 'project_not_found', details: expect.any(Array) });
      expect(r.body.error).toContain('No project is recorded for "nope"');
    }
  });

  it('documents the routes in the OpenAPI document', async () => {
    const doc = (await get('/openapi.json')).body;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/projects', '/api/projects/{project}/libraries', '/api/projects/{project}/search']));
    expect(doc.paths['/api/projects/{project}/search'].get.responses['404']).toBeDefined();
  });

  it('answers any project reference and query string with 200, 404 or 422 and the error body, never a crash', async () => {
    const text = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }), fc.constantFrom('', '%00', '%2F', '..', 'app', '-1', '1e3', '101', 'NaN'));
    await fc.assert(
      fc.asyncProperty(text, fc.dictionary(fc.constantFrom('q', 'limit', 'offset', 'language', 'x'), text, { maxKeys: 4 }), async (project, query) => {
        const qs = new URLSearchParams(query).toString();
        const res = await fetch(`${daemon.base}/api/projects/${encodeURIComponent(project)}/search${qs ? `?${qs}` : ''}`);
        const body = (await res.json()) as { code?: string; error?: string };
        expect([200, 404, 422], JSON.stringify({ project, query, body })).toContain(res.status);
        if (res.status !== 200) expect(typeof body.error === 'string' && typeof body.code === 'string').toBe(true);
      }),
      { numRuns: 150 },
    );
  }, 60_000);
});
