import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recrawlGitSource, startGitSource } from '../../src/core/git/index.js';
import { searchSnippets } from '../../src/core/search/search.js';
import { startUploadWorkers } from '../../src/core/upload/worker.js';
import { waitForUpload } from '../../src/core/upload/job-rows.js';
import type { UploadWorkers } from '../../src/core/upload/worker.js';
import { loadConfig } from '../../src/core/config.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { runCli } from '../helpers/cli.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { createTestRepo } from '../helpers/git-repo.js';
import type { TestRepo } from '../helpers/git-repo.js';

let db: TestDatabase;
let workers: UploadWorkers;
let repo: TestRepo;
let v1: string;
const dbh = () => ({ pool: db.pool, info: db.info });

beforeAll(async () => {
  db = await createTestDatabase();
  workers = await startUploadWorkers(dbh(), db.config, { pollingIntervalSeconds: 0.5 });
  repo = await createTestRepo('acme');
  repo.write({
    'README.md': '# Acme\n\nInstall it:\n\n```bash\npip install acme-wombatlib\n```\n',
    'docs/guide/intro.md': '# Intro\n\nSee [the guide](../guide.md).\n\n```python\nacme.configure_wombat(level=3)\n```\n',
    'docs/guide.md': '# Guide\n\n```python\nacme.guide_numbat()\n```\n',
    'docs/plot.ipynb': JSON.stringify({
      metadata: { language_info: { name: 'python' } },
      cells: [
        { cell_type: 'markdown', source: '# Plot' },
        { cell_type: 'code', source: 'acme.plot_quokka()' },
      ],
    }),
    'examples/quickstart.py': 'import acme\n\nacme.run_bilby_example()\n',
    'examples/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1]),
    'docs/node_modules/dep/readme.md': '# dep\n\n```js\nshouldNotBeIndexed()\n```\n',
    'src/acme.py': 'def not_docs():\n    shouldNotBeIndexed()\n',
    '.gitignore': 'docs/ignored.md\n',
    'docs/ignored.md': '# ignored\n\n```\nshouldNotBeIndexed()\n```\n',
  });
  v1 = await repo.commit('first', { tag: 'v1.2.3' });
});

afterAll(async () => {
  await workers?.stop();
  await db?.drop();
  repo?.cleanup();
});

describe('git sources', () => {
  it('checks out a tag, queues an upload job of kind git, and the workers make docs and examples searchable with the commit in the URL', async () => {
    const job = await startGitSource(dbh(), db.config, { remote: repo.url, ref: 'v1.2.3', provenance: 'user' });
    expect(job).toMatchObject({ name: 'acme', source_type: 'git', version: '1.2.3', source_name: 'acme' });
    expect(job.file_count).toBe(5);
    const done = await waitForUpload(dbh(), job.id);
    expect(done).toMatchObject({ status: 'completed', processed_files: 5, failed_files: 0 });

    const source = await db.pool.query<{ kind: string; origin: { remote: string; ref: string; commit: string; refKind: string } }>(
      `SELECT kind, crawl_config->'git' AS origin FROM sources WHERE name = 'acme'`,
    );
    expect(source.rows[0]).toMatchObject({ kind: 'git', origin: { remote: repo.url, ref: 'v1.2.3', refKind: 'tag', commit: v1 } });

    const doc = await searchSnippets(db.pool, { query: 'configure_wombat', source: 'acme' });
    expect(doc.items[0]?.source_url).toContain(`${repo.url}@${v1}/docs/guide/intro.md`);
    const example = await searchSnippets(db.pool, { query: 'run_bilby_example', source: 'acme' });
    expect(example.items[0]).toMatchObject({ language: 'python', title: 'examples/quickstart.py' });
    expect(example.items[0]?.source_url).toContain(`@${v1}/examples/quickstart.py`);
    const notebook = await searchSnippets(db.pool, { query: 'plot_quokka', source: 'acme' });
    expect(notebook.items[0]?.language).toBe('python');
    expect((await searchSnippets(db.pool, { query: 'wombatlib', source: 'acme' })).items.length).toBeGreaterThan(0);
    const leaked = await db.pool.query("SELECT 1 FROM snippets WHERE code LIKE '%shouldNotBeIndexed%'");
    expect(leaked.rowCount).toBe(0);
  });
  it('recrawls a branch at its new head: unchanged blobs skipped, changed files re-extracted, removed files dropped', async () => {
    const first = await startGitSource(dbh(), db.config, { remote: repo.url, ref: 'main', provenance: 'user' });
    expect(first).toMatchObject({ version: 'main', file_count: 5 });
    await waitForUpload(dbh(), first.id);
    const sourceId = first.source_id!;
    repo.write({ 'docs/guide.md': '# Guide\n\n```python\nacme.guide_echidna()\n```\n', 'docs/new.md': '# New\n\n```python\nacme.new_dingo()\n```\n' });
    repo.remove(['docs/guide/intro.md']);
    const v2 = await repo.commit('second');

    const again = await recrawlGitSource(dbh(), db.config, sourceId, { askedBy: 'user' });
    expect(again).toMatchObject({ source_id: sourceId, version: 'main', file_count: 2 });
    expect(await waitForUpload(dbh(), again.id)).toMatchObject({ status: 'completed', processed_files: 2, failed_files: 0 });
    const search = async (query: string) => (await searchSnippets(db.pool, { query, source: 'acme', version: 'main' })).items;
    expect(await search('guide_numbat')).toEqual([]);
    expect(await search('configure_wombat')).toEqual([]);
    expect((await search('guide_echidna'))[0]?.source_url).toContain(`@${v2}/docs/guide.md`);
    expect((await search('new_dingo'))[0]?.source_url).toContain(`@${v2}/docs/new.md`);
    // Unchanged: kept, at the URL of the commit it was read from.
    expect((await search('run_bilby_example'))[0]?.source_url).toContain(`@${v1}/examples/quickstart.py`);
    const docs = await db.pool.query<{ url: string }>('SELECT url FROM documents WHERE source_id = $1 ORDER BY url', [sourceId]);
    expect(docs.rows.map((r) => r.url.replace(/^.*@[0-9a-f]{40}\//, '')).sort()).toEqual(['README.md', 'docs/guide.md', 'docs/new.md', 'docs/plot.ipynb', 'examples/quickstart.py']);
    const counts = await db.pool.query<{ document_count: number; commit: string }>(`SELECT document_count, crawl_config->'git'->>'commit' AS commit FROM sources WHERE id = $1`, [sourceId]);
    expect(counts.rows[0]).toEqual({ document_count: 5, commit: v2 });

    const unchanged = await recrawlGitSource(dbh(), db.config, sourceId, { askedBy: 'user' });
    expect(unchanged).toMatchObject({ status: 'completed', file_count: 0 });
  });

  it('a file whose page is missing (its job failed before storing it) is read again although its blob is unchanged', async () => {
    const { rows } = await db.pool.query<{ id: string; url: string }>(
      `SELECT s.id, d.url FROM sources s JOIN documents d ON d.source_id = s.id WHERE s.name = 'acme' AND s.version = 'main' AND d.url LIKE '%/examples/quickstart.py'`,
    );
    const { id: sourceId, url } = rows[0]!;
    await db.pool.query('DELETE FROM documents WHERE source_id = $1 AND url = $2', [sourceId, url]);
    expect((await searchSnippets(db.pool, { query: 'run_bilby_example', source: 'acme', version: 'main' })).items).toEqual([]);

    const again = await recrawlGitSource(dbh(), db.config, sourceId, { askedBy: 'user' });
    expect(again).toMatchObject({ file_count: 1 });
    expect(await waitForUpload(dbh(), again.id)).toMatchObject({ status: 'completed', processed_files: 1 });
    expect((await searchSnippets(db.pool, { query: 'run_bilby_example', source: 'acme', version: 'main' })).items).toHaveLength(1);
  });

  it('recrawling a local repository needs the CLI permission again', async () => {
    const { rows } = await db.pool.query<{ id: string }>(`SELECT id FROM sources WHERE name = 'acme' AND version = 'main'`);
    await expect(recrawlGitSource(dbh(), db.config, rows[0]!.id)).rejects.toMatchObject({ code: 'git_remote_refused' });
  });
  it('`docdex sources recrawl` (the real CLI) checks a git source out again', async () => {
    repo.write({ 'docs/cli.md': '# CLI\n\n```bash\nacme --kookaburra\n```\n' });
    await repo.commit('third');
    const result = await runCli(['sources', 'recrawl', 'acme', '--version', 'main', '--json'], { env: db.env, timeout: 120_000 });
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const job = JSON.parse(String(result.stdout)) as { id: string; source_type: string; file_count: number };
    expect(job).toMatchObject({ source_type: 'git', file_count: 1 });
    await waitForUpload(dbh(), job.id);
    expect((await searchSnippets(db.pool, { query: 'kookaburra', source: 'acme@main' })).items.length).toBe(1);
  });
  it('REST lists and shows a git source; its recrawl from REST is refused for a repository on this disk (CLI only)', async () => {
    const daemon = await startTestDaemon(loadConfig(db.env), { routes: docsIndexRoutes });
    try {
      const list = await fetch(`${daemon.base}/api/sources?query=acme`);
      expect(list.status).toBe(200);
      const items = ((await list.json()) as { items: Array<{ id: string; kind: string; version: string }> }).items;
      const main = items.find((s) => s.version === 'main')!;
      expect(main.kind).toBe('git');
      expect((await fetch(`${daemon.base}/api/sources/${main.id}`)).status).toBe(200);
      const recrawl = await fetch(`${daemon.base}/api/sources/${main.id}/recrawl`, { method: 'POST' });
      expect(recrawl.status).toBe(403);
      expect(await recrawl.json()).toMatchObject({ code: 'git_remote_refused' });
    } finally {
      await daemon.close();
    }
  });
  it("`@HEAD` is the repository's default branch, as git names it (it was refused as an unknown tag or branch)", async () => {
    const other = await createTestRepo('headlib');
    try {
      other.write({ 'docs/index.md': '# Head\n\n```python\nheadlib.kookaburra_call()\n```\n' });
      await other.commit('first');
      const job = await startGitSource(dbh(), db.config, { remote: other.url, ref: 'HEAD', provenance: 'user' });
      expect(job).toMatchObject({ name: 'headlib', version: 'main' });
      expect(await waitForUpload(dbh(), job.id)).toMatchObject({ status: 'completed', processed_files: 1 });
      expect((await searchSnippets(db.pool, { query: 'kookaburra_call', source: 'headlib' })).items[0]?.code).toContain('kookaburra_call');
    } finally {
      other.cleanup();
    }
  });
});
