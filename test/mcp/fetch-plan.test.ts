import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CrawlJob } from '../../src/core/crawl/jobs.js';
import { crawlFetchPlan, describeFetchPlan, readmeFetchPlan } from '../../src/core/mcp/tools/fetch-plan.js';
import type { FetchPlan } from '../../src/core/mcp/tools/fetch-plan.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startGitHttpServer } from '../helpers/git-http.js';
import type { GitHttpServer } from '../helpers/git-http.js';
import { createTestRepo } from '../helpers/git-repo.js';
import type { TestRepo } from '../helpers/git-repo.js';
import { connectMcpClient } from '../helpers/mcp.js';
import { resultText, serveSite } from './helpers.js';

/**
 * init_crawl and add_library state what their jobs will fetch (hosts, depth, page cap; the repository and its
 * tag), in the text and in the structured content, so a client that asks its user to confirm can show it.
 */

let db: TestDatabase;
let site: Awaited<ReturnType<typeof serveSite>>;
let repo: TestRepo;
let git: GitHttpServer;
let gitRoot: string;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  site = await serveSite();
  repo = await createTestRepo('planned');
  repo.write({ 'README.md': '# Planned\n\n```bash\nnpm install planned\n```\n' });
  await repo.commit('one', { tag: 'v1.0.0' });
  gitRoot = mkdtempSync(path.join(os.tmpdir(), 'docdex-plan-git-'));
  symlinkSync(repo.bare, path.join(gitRoot, 'planned.git'));
  git = await startGitHttpServer(gitRoot);
  client = await connectMcpClient(db);
}, 60_000);

afterAll(async () => {
  await client?.close();
  await git?.close();
  await site?.close();
  await db?.drop();
  if (gitRoot) rmSync(gitRoot, { recursive: true, force: true });
});

const host = () => new URL(site.url).host;

describe('init_crawl', () => {
  it('states the hosts, depth and page cap of the crawl it queued', async () => {
    const result = await client.callTool({
      name: 'init_crawl',
      arguments: { start_urls: [`${site.url}/guide/`], name: 'planned-crawl', max_depth: 2, max_pages: 40, exclude_patterns: ['**/old/**'] },
    });
    expect(result.isError, resultText(result)).toBeFalsy();
    const plan = (result.structuredContent as { fetch_plan: FetchPlan }).fetch_plan;
    expect(plan).toMatchObject({ hosts: [host()], start_urls: [`${site.url}/guide/`], max_depth: 2, max_pages: 40, exclude_patterns: ['**/old/**'], render: 'auto' });
    expect(plan.follows).toBe(`links on the start URLs\u2019 hosts, except **/old/**, up to 2 links from a start URL`);
    const text = resultText(result);
    expect(text).toContain(`Will fetch: docs site ${site.url}/guide/.`);
    expect(text).toContain(`Hosts: ${host()}.`);
    expect(text).toContain('Depth: 2. Page cap: 40 pages.');
    expect(text).toContain('may also load its scripts and styles from other public hosts');
  });

  it('states the defaults that apply when the arguments leave them out', async () => {
    const result = await client.callTool({ name: 'init_crawl', arguments: { start_urls: [`${site.url}/`], name: 'planned-defaults', render: 'never' } });
    const plan = (result.structuredContent as { fetch_plan: FetchPlan }).fetch_plan;
    const { rows } = await db.pool.query<{ max_pages: number; max_depth: number }>('SELECT max_pages, max_depth FROM crawl_jobs WHERE id = $1', [plan.job_id]);
    expect(plan).toMatchObject({ max_pages: rows[0]!.max_pages, max_depth: rows[0]!.max_depth });
    expect(resultText(result)).not.toContain('Rendering:');
  });
});

describe('add_library', () => {
  it('states a docs site crawl with its hosts, depth and page cap', async () => {
    const result = await client.callTool({ name: 'add_library', arguments: { specs: [`${site.url}/guide/`], name: 'planned-site', depth: 0 } });
    expect(result.isError, resultText(result)).toBeFalsy();
    const [library] = (result.structuredContent as { libraries: Array<{ job_ids: string[]; fetch_plan: FetchPlan[] }> }).libraries;
    expect(library!.fetch_plan).toEqual([expect.objectContaining({ job_id: library!.job_ids[0], what: `docs site ${site.url}/guide/`, hosts: [host()], max_depth: 0 })]);
    expect(library!.fetch_plan[0]!.follows).toBe('no links: only the start URLs');
    expect(resultText(result)).toContain(`Will fetch: docs site ${site.url}/guide/.\n  Hosts: ${host()}.\n  Follows: no links: only the start URLs.\n  Depth: 0.`);
  });

  it('states the repository and the tag it checks out', async () => {
    const result = await client.callTool({ name: 'add_library', arguments: { specs: [`${git.origin}/planned.git@v1.0.0`], name: 'planned-repo' } });
    expect(result.isError, resultText(result)).toBeFalsy();
    const [library] = (result.structuredContent as { libraries: Array<{ fetch_plan: FetchPlan[] }> }).libraries;
    expect(library!.fetch_plan).toEqual([expect.objectContaining({ what: `repository ${git.origin}/planned.git at v1.0.0`, hosts: [new URL(git.origin).host] })]);
    expect(resultText(result)).toContain(`Will fetch: repository ${git.origin}/planned.git at v1.0.0.\n  Hosts: ${new URL(git.origin).host}.`);
  });
});

describe('fetch plans of other jobs', () => {
  const job = { id: 'j1', start_urls: ['https://docs.example.com/guide/'], max_depth: 3, max_pages: 500, use_sitemap: true, render: 'never' } as const;

  it('names a domain filter as the domain and any subdomain, and the URL patterns', () => {
    const plan = crawlFetchPlan({ ...job, domain_filter: 'example.com', url_patterns: ['**/guide/**'], exclude_patterns: [] } as unknown as CrawlJob);
    expect(plan.hosts).toEqual(['example.com', '*.example.com']);
    expect(plan.follows).toBe('links on example.com and its subdomains, matching **/guide/**, up to 3 links from a start URL');
    expect(describeFetchPlan(plan)).toContain('Depth: 3. Page cap: 500 pages. Also seeded from the sitemap.');
  });

  it('says a README read while adding fetches nothing more', () => {
    const plan = readmeFetchPlan('j2', 'the README in npm package left-pad@1.3.0', 'https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz');
    expect(plan).toEqual({ job_id: 'j2', what: 'the README in npm package left-pad@1.3.0 (already read from registry.npmjs.org)', hosts: [], follows: 'nothing more is fetched' });
    expect(describeFetchPlan(plan)).toBe('Will fetch: the README in npm package left-pad@1.3.0 (already read from registry.npmjs.org).\n  Follows: nothing more is fetched.');
  });
});
