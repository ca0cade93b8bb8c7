import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError, ValidationError } from '../../src/core/errors.js';
import { searchSnippets } from '../../src/core/search/search.js';
import { deleteSource, getSource, listSources, updateSource } from '../../src/core/sources/manage.js';
import { recrawlRequest } from '../../src/core/crawl/recrawl.js';
import { resolveLibrary, resolveSource } from '../../src/core/sources/resolve.js';
import { removePage } from '../../src/core/store/pages.js';
import { addPage, createSource } from '../search/fixtures.js';
import type { FixtureSource } from '../search/fixtures.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
let react18: FixtureSource;
let react19: FixtureSource;
let django: FixtureSource;

const count = async (sql: string, params: unknown[] = []) => (await db.pool.query<{ n: number }>(sql, params)).rows[0]!.n;

beforeAll(async () => {
  db = await createTestDatabase();
  react18 = await createSource(db.pool, 'React', '18');
  react19 = await createSource(db.pool, 'React', '19');
  django = await createSource(db.pool, 'Django');
  await addPage(db.pool, react18, 'https://react.example/18/hooks', [{ title: 'useState', code: 'const [n, setN] = useState(0);', language: 'javascript' }]);
  await addPage(db.pool, react19, 'https://react.example/19/hooks', [{ title: 'use', code: 'const value = use(promise);', language: 'javascript' }]);
  await addPage(db.pool, django, 'https://django.example/models', [
    { title: 'Models', code: 'class Book(models.Model):\n    title = models.CharField(max_length=100)' },
    { title: 'Queries', code: 'Book.objects.filter(title__startswith="A")' },
  ]);
});

afterAll(async () => {
  await db?.drop();
});

describe('sources', () => {
  it('lists sources with snippet, page and version counts', async () => {
    const page = await listSources(db.pool);
    expect(page).toMatchObject({ total: 3, limit: 20, offset: 0 });
    expect(page.items.map((s) => [s.name, s.version, s.snippet_count, s.page_count, s.version_count])).toEqual([
      ['Django', '', 2, 1, 1],
      ['React', '19', 1, 1, 2],
      ['React', '18', 1, 1, 2],
    ]);
    const paged = await listSources(db.pool, { limit: 1, offset: 1 });
    expect(paged.items.map((s) => s.version)).toEqual(['19']);
    expect(paged.total).toBe(3);
    const fuzzy = await listSources(db.pool, { query: 'djang' });
    expect(fuzzy.items.map((s) => s.name)).toEqual(['Django']);
    await expect(listSources(db.pool, { limit: 0 })).rejects.toBeInstanceOf(ValidationError);
  });

  it('resolves names exactly, then fuzzily, and versions', async () => {
    // A bare name reads as the latest version, and knows the others.
    expect(await resolveLibrary(db.pool, 'react')).toMatchObject({ id: react19.id, versions: [{ version: '19' }, { version: '18' }] });
    expect((await resolveSource(db.pool, 'react', '18')).id).toBe(react18.id);
    expect((await resolveSource(db.pool, 'djnago')).id).toBe(django.id);
    expect((await resolveSource(db.pool, django.id)).name).toBe('Django');
    await expect(resolveSource(db.pool, 'react')).rejects.toThrow(/names 2 versions of React/);
    await expect(resolveSource(db.pool, 'kubernetes')).rejects.toBeInstanceOf(NotFoundError);
    await expect(resolveSource(db.pool, '00000000-0000-0000-0000-000000000000')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('shows a source with languages and jobs', async () => {
    const s = await getSource(db.pool, 'django');
    expect(s).toMatchObject({ name: 'Django', snippet_count: 2, page_count: 1, kind: 'crawl' });
    expect(s.languages).toEqual([{ language: 'python', snippets: 2 }]);
    expect(s.jobs).toHaveLength(1);
  });

  it('updates names, versions and crawl settings, adding patterns', async () => {
    const updated = await updateSource(db.pool, 'django', {
      name: 'Django Docs',
      version: '5.0',
      baseUrl: 'https://docs.django.example/',
      addIncludePatterns: ['https://docs.django.example/en/5.0/**'],
      addExcludePatterns: ['**/releases/**'],
      maxDepth: 2,
      maxConcurrent: 4,
    });
    expect(updated).toMatchObject({ name: 'Django Docs', version: '5.0', base_url: 'https://docs.django.example/' });
    expect(updated.crawl_config).toMatchObject({
      url_patterns: ['https://docs.django.example/en/5.0/**'],
      exclude_patterns: ['**/releases/**'],
      max_depth: 2,
      max_concurrent_crawls: 4,
    });
    const again = await updateSource(db.pool, django.id, { addIncludePatterns: ['https://docs.django.example/en/5.0/**', '**/topics/**'] });
    expect(again.crawl_config.url_patterns).toEqual(['https://docs.django.example/en/5.0/**', '**/topics/**']);
    const { request } = await recrawlRequest(db.pool, django.id);
    expect(request).toMatchObject({
      name: 'Django Docs',
      version: '5.0',
      max_depth: 2,
      max_concurrent_crawls: 4,
      url_patterns: ['https://docs.django.example/en/5.0/**', '**/topics/**'],
      exclude_patterns: ['**/releases/**'],
    });
    await expect(updateSource(db.pool, 'react', { version: '19' }, { version: '18' })).rejects.toBeInstanceOf(ConflictError);
    await expect(updateSource(db.pool, django.id, { maxDepth: 4 })).rejects.toBeInstanceOf(ValidationError);
    await expect(updateSource(db.pool, django.id, { baseUrl: 'ftp://x' })).rejects.toBeInstanceOf(ValidationError);
  });

  it('keeps one snippet for code shown on several pages, counting the pages', async () => {
    const shared = { title: 'Install', code: 'npm install react', language: 'shell' };
    await addPage(db.pool, react18, 'https://react.example/18/install', [shared]);
    await addPage(db.pool, react18, 'https://react.example/18/start', [shared, { title: 'Start', code: 'npx create-react-app demo' }]);
    const rows = await db.pool.query<{ page_count: number; source_url: string }>("SELECT page_count, source_url FROM snippets WHERE source_id = $1 AND code = 'npm install react'", [react18.id]);
    expect(rows.rows).toEqual([{ page_count: 2, source_url: 'https://react.example/18/install' }]);
    const r = await searchSnippets(db.pool, { query: 'npm install react', source: react18.id });
    expect(r.items.filter((i) => i.code === 'npm install react')).toHaveLength(1);
    // The same code in another source is that source's own snippet.
    await addPage(db.pool, react19, 'https://react.example/19/install', [shared]);
    expect(await count("SELECT count(*)::int AS n FROM snippets WHERE code = 'npm install react'")).toBe(2);
    // Removing the first page keeps the snippet, now on the other page.
    await removePage(db.pool, react18.id, 'https://react.example/18/install');
    const moved = await db.pool.query("SELECT page_count, source_url FROM snippets WHERE source_id = $1 AND code = 'npm install react'", [react18.id]);
    expect(moved.rows).toEqual([{ page_count: 1, source_url: 'https://react.example/18/start' }]);
  });

  it('deletes a source with every document, snippet, job and frontier row, and nothing else', async () => {
    await db.pool.query("INSERT INTO crawl_frontier (job_id, url, depth) VALUES ($1, 'https://react.example/18/next', 1)", [react18.jobId]);
    const ids = await db.pool.query<{ id: number }>('SELECT id FROM snippets WHERE source_id = $1 ORDER BY id', [react18.id]);
    await db.pool.query("INSERT INTO snippet_relationships (source_snippet_id, target_snippet_id, relationship_type) VALUES ($1, $2, 'related')", [ids.rows[0]!.id, ids.rows[1]!.id]);
    const before19 = await count('SELECT count(*)::int AS n FROM snippets WHERE source_id = $1', [react19.id]);

    const result = await deleteSource(db.pool, 'react', { version: '18' });
    expect(result).toMatchObject({ id: react18.id, name: 'React', version: '18', crawl_jobs: 1, upload_jobs: 0 });
    expect(result.snippets).toBe(ids.rows.length);
    for (const table of ['documents', 'snippets', 'crawl_jobs']) {
      expect(await count(`SELECT count(*)::int AS n FROM ${table} WHERE source_id = $1`, [react18.id]), table).toBe(0);
    }
    expect(await count('SELECT count(*)::int AS n FROM crawl_frontier WHERE job_id = $1', [react18.jobId])).toBe(0);
    expect(await count('SELECT count(*)::int AS n FROM snippet_occurrences o WHERE o.snippet_id = ANY($1::bigint[])', [ids.rows.map((r) => r.id)])).toBe(0);
    expect(await count('SELECT count(*)::int AS n FROM snippet_relationships')).toBe(0);
    expect(await count('SELECT count(*)::int AS n FROM snippets WHERE source_id = $1', [react19.id])).toBe(before19);
    await expect(getSource(db.pool, react18.id)).rejects.toBeInstanceOf(NotFoundError);
    // The other version is what the name means now.
    expect((await resolveSource(db.pool, 'react')).id).toBe(react19.id);
  });
});
