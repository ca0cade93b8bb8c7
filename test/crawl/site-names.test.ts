import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { TestSite } from './helpers/site.js';

/**
 * Issue #49, item 2, through the real binary: the Debian HTML docs of Python, Node.js, PostgreSQL and MkDocs,
 * served on loopback and crawled without --name, are named as people type them, with the version they document,
 * so `--source python@3.11` and `--source node@18` work without renaming anything; --name and --version win.
 */

const corpus = process.env.DOCDEX_CORPUS_DIR;
const START: Record<string, string> = { python: 'library/json.html', node: 'fs.html', postgres: 'sql-select.html', mkdocs: 'getting-started.html' };
const present = Boolean(corpus) && Object.entries(START).every(([site, file]) => existsSync(path.join(corpus!, site, file)));
if (!present) {
  if (process.env.DOCDEX_REQUIRE_CORPUS === '1') {
    it('the real documentation corpus is present (DOCDEX_REQUIRE_CORPUS=1)', () => {
      throw new Error('The site name tests cannot run: DOCDEX_CORPUS_DIR lacks the Debian HTML docs. Run ../shared/bin/fetch-doc-corpus.');
    });
  } else {
    console.log('Skipping the crawled site name tests: DOCDEX_CORPUS_DIR is not set or lacks the Debian HTML docs.');
  }
}

describe.skipIf(!present)('a crawled site is named after the library and version it documents', () => {
  let db: TestDatabase;
  const sites: Record<string, TestSite> = {};

  beforeAll(async () => {
    db = await createTestDatabase();
    for (const name of Object.keys(START)) {
      const site = await TestSite.start();
      site.staticRoot = path.join(corpus!, name);
      sites[name] = site;
    }
  });

  afterAll(async () => {
    for (const site of Object.values(sites)) await site.close();
    await db?.drop();
  });

  async function crawl(site: string, extra: string[] = []): Promise<{ name: string; version: string }> {
    const result = await runCli(['crawl', 'start', sites[site]!.url(`/${START[site]}`), '--depth', '0', '--wait', '--json', ...extra], { env: db.env, timeout: 120_000 });
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const job = JSON.parse(String(result.stdout)) as { name: string; version: string; status: string };
    expect(job.status).toBe('completed');
    return { name: job.name, version: job.version };
  }

  async function search(query: string, source: string): Promise<Array<{ source_name: string; version: string }>> {
    const result = await runCli(['search', query, '--source', source, '--json'], { env: db.env });
    expect(result.exitCode, String(result.stderr)).toBe(0);
    return (JSON.parse(String(result.stdout)) as { items: Array<{ source_name: string; version: string }> }).items;
  }

  it('python@3.11.2, node@18.20.4, postgresql@15.20 and mkdocs, each found by the references the README shows', async () => {
    expect(await crawl('python')).toEqual({ name: 'python', version: '3.11.2' });
    expect(await crawl('node')).toEqual({ name: 'node', version: '18.20.4' });
    expect(await crawl('postgres')).toEqual({ name: 'postgresql', version: '15.20' });
    expect(await crawl('mkdocs')).toEqual({ name: 'mkdocs', version: '' });

    const json = await search('json dumps', 'python@3.11');
    expect(json.length).toBeGreaterThan(0);
    expect(json.every((r) => r.source_name === 'python' && r.version === '3.11.2')).toBe(true);
    const fs = await search('readFileSync', 'node@18');
    expect(fs.length).toBeGreaterThan(0);
    expect(fs.every((r) => r.source_name === 'node')).toBe(true);
    expect((await search('select distinct', 'pg')).every((r) => r.source_name === 'postgresql')).toBe(true);
    expect((await search('mkdocs serve', 'mkdocs')).length).toBeGreaterThan(0);
  }, 600_000);

  it('--name and --version override what the site says', async () => {
    expect(await crawl('node', ['--version', '18.20'])).toEqual({ name: 'node', version: '18.20' });
    expect(await crawl('node', ['--name', 'nodejs-docs'])).toEqual({ name: 'nodejs-docs', version: '' });
    expect(await crawl('node', ['--name', 'nodejs-docs', '--version', '18'])).toEqual({ name: 'nodejs-docs', version: '18' });
  }, 600_000);
});
