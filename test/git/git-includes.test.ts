import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recrawlGitSource, startGitSource } from '../../src/core/git/index.js';
import { searchSnippets } from '../../src/core/search/search.js';
import { startUploadWorkers } from '../../src/core/upload/worker.js';
import { waitForUpload } from '../../src/core/upload/job-rows.js';
import type { UploadWorkers } from '../../src/core/upload/worker.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { createTestRepo } from '../helpers/git-repo.js';
import type { TestRepo } from '../helpers/git-repo.js';
import { connectMcpClient } from '../helpers/mcp.js';

/**
 * A git source's pages with their includes resolved from the same commit: the checkout holds the docs path,
 * and what the includes name outside it (the MkDocs config, `docs_src/`) is checked out for them.
 */

let db: TestDatabase;
let workers: UploadWorkers;
let repo: TestRepo;
const dbh = () => ({ pool: db.pool, info: db.info });

beforeAll(async () => {
  db = await createTestDatabase();
  workers = await startUploadWorkers(dbh(), db.config, { pollingIntervalSeconds: 0.5 });
  repo = await createTestRepo('teapot');
  repo.write({
    'docs/en/mkdocs.yml': 'site_name: Teapot\nmarkdown_extensions:\n  mdx_include: null\n',
    'docs/en/docs/pour.md': [
      '# Pouring',
      '',
      'Pour a cup:',
      '',
      '{* ../../docs_src/pour.py title["app/pour.py"] *}',
      '',
      '{* ../../docs_src/link/hostname *}',
      '',
      '{* ../../docs_src/big.py *}',
      '',
    ].join('\n'),
    'docs/en/docs/plain.md': '# Plain\n\n```python\nteapot.plain_page()\n```\n',
    'docs_src/pour.py': 'def pour_darjeeling_cup():\n    return "darjeeling"\n',
    'docs_src/unrelated.py': 'def not_included():\n    pass\n',
    'docs_src/big.py': `BIG = "${'z'.repeat(1100 * 1024)}"\n`,
  });
  await repo.commit('first', { tag: 'v1' });
});

afterAll(async () => {
  await workers?.stop();
  await db?.drop();
  repo?.cleanup();
});

describe('includes in a git source', () => {
  it('checks out what the includes name outside the docs path, resolves them against mkdocs.yml, and counts the ones kept as written', async () => {
    const job = await startGitSource(dbh(), db.config, { remote: repo.url, ref: 'v1', paths: ['docs/en/docs'], provenance: 'user' });
    expect(job).toMatchObject({ file_count: 2, includes_resolved: 1, includes_unresolved: 2 });
    expect(job.unresolved_includes.map((u) => u.reason)).toEqual(['no such file in the repository', 'larger than 1024 KB']);
    await waitForUpload(dbh(), job.id);
    const found = await searchSnippets(db.pool, { query: 'pour_darjeeling_cup', source: 'teapot' });
    expect(found.items[0]).toMatchObject({ language: 'python', title: 'Pouring' });
    expect(found.items[0]?.source_url).toContain('/docs/en/docs/pour.md');
    const stored = await db.pool.query(`SELECT filename FROM snippets WHERE kind = 'snippet' AND code LIKE '%pour_darjeeling_cup%'`);
    expect(stored.rows).toEqual([{ filename: 'app/pour.py' }]);
    const origin = await db.pool.query<{ files: Record<string, { includes?: Record<string, string> }> }>(`SELECT crawl_config->'git'->'files' AS files FROM sources WHERE name = 'teapot'`);
    expect(Object.keys(origin.rows[0]!.files['docs/en/docs/pour.md']!.includes ?? {}).sort()).toEqual(['docs/en/mkdocs.yml', 'docs_src/big.py', 'docs_src/pour.py']);
    expect(origin.rows[0]!.files['docs/en/docs/plain.md']!.includes).toBeUndefined();

    // MCP tells the same counts.
    const client = await connectMcpClient(db);
    try {
      const status = (await client.callTool({ name: 'get_crawl_status', arguments: { job_id: job.id } })) as CallToolResult;
      const text = status.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
      expect(text).toContain('Includes: 1 resolved from the same commit, 2 kept as written');
      expect(text).toContain('docs/en/docs/pour.md: {* ../../docs_src/big.py *} (larger than 1024 KB)');
    } finally {
      await client.close();
    }
  });

  it('indexes a page again when only a file it includes changed, and not for a change elsewhere', async () => {
    const first = await startGitSource(dbh(), db.config, { remote: repo.url, ref: 'main', paths: ['docs/en/docs'], provenance: 'user' });
    await waitForUpload(dbh(), first.id);
    const sourceId = first.source_id!;

    repo.write({ 'docs_src/unrelated.py': 'def still_not_included():\n    pass\n' });
    await repo.commit('elsewhere');
    const quiet = await recrawlGitSource(dbh(), db.config, sourceId, { askedBy: 'user' });
    expect(quiet.file_count).toBe(0);

    repo.write({ 'docs_src/pour.py': 'def pour_assam_cup():\n    return "assam"\n' });
    await repo.commit('included file');
    const again = await recrawlGitSource(dbh(), db.config, sourceId, { askedBy: 'user' });
    expect(again).toMatchObject({ file_count: 1, includes_resolved: 1 });
    await waitForUpload(dbh(), again.id);
    // The included code as a snippet and inside its page's section.
    const assam = await searchSnippets(db.pool, { query: 'pour_assam_cup', source: 'teapot', version: 'main' });
    expect(assam.items.map((i) => i.kind).sort()).toEqual(['section', 'snippet']);
    expect((await searchSnippets(db.pool, { query: 'pour_darjeeling_cup', source: 'teapot', version: 'main' })).items).toHaveLength(0);
  });

  it('never reads through a tracked symlink out of the repository', async () => {
    const linked = await createTestRepo('kettle-link');
    try {
      linked.write({ 'docs/page.md': '# Page\n\n```text\n--8<-- "docs_src/out/hostname"\n```\n\n```text\n--8<-- "docs_src/file"\n```\n' });
      const work = path.join(path.dirname(linked.bare), 'work');
      linked.write({ 'docs_src/.keep': '' });
      symlinkSync('/etc', path.join(work, 'docs_src', 'out'));
      symlinkSync('/etc/hostname', path.join(work, 'docs_src', 'file'));
      await linked.commit('links', { tag: 'v1' });
      const job = await startGitSource(dbh(), db.config, { remote: linked.url, ref: 'v1', paths: ['docs'], provenance: 'user' });
      expect(job).toMatchObject({ includes_resolved: 0, includes_unresolved: 2 });
    } finally {
      linked.cleanup();
    }
  });
});
