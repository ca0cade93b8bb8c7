import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCrawlWorkers } from '../../src/core/crawl/index.js';
import type { CrawlJob, CrawlWorkers } from '../../src/core/crawl/index.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { resultText } from '../mcp/helpers.js';
import { crawlToEnd, FAST_WORKER } from './helpers/crawl.js';
import { docPage, TestSite } from './helpers/site.js';
import { connectMcpClient } from '../helpers/mcp.js';

// llms-full.txt, llms.txt and markdown twins through the real crawl path: a real site on 127.0.0.1, the
// real workers, the real database. Every fixture text is written here.

let db: TestDatabase;
let workers: CrawlWorkers;
const sites: TestSite[] = [];

async function site(routes: Parameters<typeof TestSite.start>[0] = {}): Promise<TestSite> {
  const s = await TestSite.start(routes);
  sites.push(s);
  return s;
}

beforeAll(async () => {
  db = await createTestDatabase();
  workers = await startCrawlWorkers(db, db.config, FAST_WORKER);
});

afterAll(async () => {
  await workers?.stop();
  for (const s of sites) await s.close();
  await db?.drop();
});

const MD = { 'content-type': 'text/markdown; charset=utf-8' };
const TEXT = { 'content-type': 'text/plain; charset=utf-8' };

function markdownPage(title: string, code: string, extra = ''): string {
  return `# ${title}\n\nHow ${title} works, in a sentence or two of prose.\n\n\`\`\`python\n${code}\n\`\`\`\n${extra}`;
}

/** Each stored document's URL (fragment kept) with the code of its snippets. */
async function storedCode(sourceId: string | null): Promise<Record<string, string[]>> {
  const { rows } = await db.pool.query<{ url: string; code: string | null }>(
    `SELECT d.url, s.code FROM documents d LEFT JOIN snippets s ON s.document_id = d.id AND s.kind = 'snippet' WHERE d.source_id = $1 ORDER BY d.url, s.position`,
    [sourceId],
  );
  const out: Record<string, string[]> = {};
  for (const r of rows) (out[r.url] ??= []).push(...(r.code === null ? [] : [r.code]));
  return out;
}

function paths(s: TestSite): string[] {
  return [...new Set(s.log.filter((r) => r.path !== '/robots.txt').map((r) => r.path))].sort();
}

describe('llms-full.txt', () => {
  it('indexes each page of llms-full.txt at its own URL, and fetches none of the HTML pages it covers', async () => {
    const s = await site();
    const full = [
      'Preamble lines before the first page are not a page of their own unless they hold text.',
      '',
      markdownPage('Overview', 'overview_from_full()', '').replace('# Overview\n', `# Overview\nSource: ${s.url('/docs/')}\n`),
      markdownPage('Install', 'install_from_full()').replace('# Install\n', `# Install\n\nURL: ${s.url('/docs/install')}\n`),
      // A shell comment in a fence is not a page heading.
      markdownPage('Extra notes', 'notes_from_full()', '\n```bash\n# not a heading\necho hi\n```\n'),
    ].join('\n');
    s.set('/docs/llms-full.txt', { headers: TEXT, body: full });
    s.set('/docs/', { body: docPage({ title: 'Overview', code: 'overview_from_html()', links: ['/docs/install', '/docs/usage'] }) });
    s.set('/docs/install', { body: docPage({ title: 'Install', code: 'install_from_html()' }) });
    s.set('/docs/usage', { body: docPage({ title: 'Usage', code: 'usage_from_html()' }) });

    const job = await crawlToEnd(db, db.config, { name: 'llms-full', start_urls: [s.url('/docs/')] });
    expect(job.status).toBe('completed');
    const code = await storedCode(job.source_id);
    expect(Object.keys(code).sort()).toEqual([s.url('/docs/'), s.url('/docs/install'), s.url('/docs/llms-full.txt'), s.url('/docs/llms-full.txt#extra-notes')].sort());
    expect(code[s.url('/docs/')]).toEqual(['overview_from_full()']);
    expect(code[s.url('/docs/install')]).toEqual(['install_from_full()']);
    expect(code[s.url('/docs/llms-full.txt#extra-notes')]).toEqual(['notes_from_full()', '# not a heading\necho hi']);
    // The covered HTML pages were never requested; llms-full.txt was read once.
    expect(s.count('/docs/')).toBe(0);
    expect(s.count('/docs/install')).toBe(0);
    expect(s.count('/docs/llms-full.txt')).toBe(1);
    expect(job.routes).toEqual({ html: 0, markdown_twin: 0, llms_full: 4 });
  });
});

describe('llms-full.txt under max_pages', () => {
  it('admits its first pages up to max_pages and keeps the text of those alone', async () => {
    const s = await site();
    const pages = [1, 2, 3, 4, 5].map((n) => markdownPage(`Part ${n}`, `part_${n}()`).replace(`# Part ${n}\n`, `# Part ${n}\nSource: ${s.url(`/p${n}`)}\n`));
    s.set('/llms-full.txt', { headers: TEXT, body: pages.join('\n') });
    s.set('/', { body: docPage({ title: 'Home', code: 'home()' }) });
    const job = await crawlToEnd(db, db.config, { name: 'llms-full-cap', start_urls: [s.url('/')], max_pages: 3 });
    expect(job.status).toBe('completed');
    expect(Object.keys(await storedCode(job.source_id)).sort()).toEqual([s.url('/'), s.url('/p1'), s.url('/p2')]);
    const kept = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM crawl_llms_pages WHERE job_id = $1', [job.job_id]);
    expect(kept.rows[0]!.n).toBe(2);
    expect(job.routes).toEqual({ html: 1, markdown_twin: 0, llms_full: 2 });
  });
});

describe('llms.txt', () => {
  it("seeds the crawl with llms.txt's in-scope links and leaves an out-of-scope link alone", async () => {
    const s = await site();
    s.set('/llms.txt', {
      headers: TEXT,
      body: [
        '# Example library',
        '',
        '> A library for examples.',
        '',
        '## Docs',
        '',
        '- [Alpha](/alpha): the first page',
        `- [Beta](${s.url('/beta')})`,
        `- [Elsewhere](${s.url('/elsewhere', 'localhost')}): another host`,
        '',
      ].join('\n'),
    });
    s.set('/', { body: docPage({ title: 'Home', code: 'home()' }) });
    s.set('/alpha', { body: docPage({ title: 'Alpha', code: 'alpha()' }) });
    s.set('/beta', { body: docPage({ title: 'Beta', code: 'beta()' }) });
    s.set('/elsewhere', { body: docPage({ title: 'Elsewhere' }) });

    const job = await crawlToEnd(db, db.config, { name: 'llms-txt', start_urls: [s.url('/')] });
    expect(job.status).toBe('completed');
    expect(Object.keys(await storedCode(job.source_id)).sort()).toEqual([s.url('/'), s.url('/alpha'), s.url('/beta')]);
    expect(s.requests(undefined, 'localhost')).toHaveLength(0);
    const seeds = await db.pool.query<{ url: string }>(`SELECT url FROM crawl_frontier WHERE job_id = $1 AND discovered_from = 'llms.txt' ORDER BY url`, [job.job_id]);
    expect(seeds.rows.map((r) => r.url)).toEqual([s.url('/alpha'), s.url('/beta')]);
    expect(job.routes).toEqual({ html: 3, markdown_twin: 0, llms_full: 0 });
  });
});

/** A site whose pages declare markdown twins in their heads, and one whose llms.txt links `.md` twins. */
function twinSite(s: TestSite): void {
  s.set('/', { body: docPage({ title: 'Home', code: 'home_html()', links: ['/page', '/broken', '/shell'], head: '<link rel="alternate" type="text/markdown" href="/index.md">' }) });
  s.set('/index.md', { headers: MD, body: markdownPage('Home', 'home_twin()') });
  s.set('/page', { body: docPage({ title: 'Page', code: 'page_html()', head: `<link href='${s.url('/page.md')}' rel='alternate' type='text/markdown'>` }) });
  s.set('/page.md', { headers: TEXT, body: markdownPage('Page', 'page_twin()') });
  // A twin that is gone, and one answered with the site's HTML shell: both fall back to the HTML.
  s.set('/broken', { body: docPage({ title: 'Broken', code: 'broken_html()', head: '<link rel="alternate" type="text/markdown" href="/broken.md">' }) });
  s.set('/shell', { body: docPage({ title: 'Shell', code: 'shell_html()', head: '<link rel="alternate" type="text/markdown" href="/shell.md">' }) });
  s.set('/shell.md', { body: '<!doctype html><html><body><div id="app"></div></body></html>' });
}

describe('markdown twins', () => {
  it('indexes the twin a page declares instead of its HTML, at the HTML URL; a failed twin falls back to the HTML', async () => {
    const s = await site();
    twinSite(s);
    const job = await crawlToEnd(db, db.config, { name: 'twins-link', start_urls: [s.url('/')] });
    expect(job.status).toBe('completed');
    expect(await storedCode(job.source_id)).toEqual({
      [s.url('/')]: ['home_twin()'],
      [s.url('/broken')]: ['broken_html()'],
      [s.url('/page')]: ['page_twin()'],
      [s.url('/shell')]: ['shell_html()'],
    });
    expect(s.count('/broken.md')).toBe(1);
    expect(job.routes).toEqual({ html: 2, markdown_twin: 2, llms_full: 0 });
  });

  it("reads the `.md` twins the site's llms.txt links, without fetching their HTML, and HTML where a page has none", async () => {
    const s = await site();
    s.set('/llms.txt', { headers: TEXT, body: `# Lib\n\n- [Guide](/guide.md)\n- [Reference](${s.url('/ref.html.md')}): every call\n` });
    s.set('/', { body: docPage({ title: 'Home', code: 'home_html()', links: ['/guide'] }) });
    s.set('/guide', { body: docPage({ title: 'Guide', code: 'guide_html()' }) });
    s.set('/guide.md', { headers: MD, body: markdownPage('Guide', 'guide_twin()') });
    s.set('/ref.html', { body: docPage({ title: 'Reference', code: 'ref_html()' }) });
    s.set('/ref.html.md', { headers: TEXT, body: markdownPage('Reference', 'ref_twin()') });

    const job = await crawlToEnd(db, db.config, { name: 'twins-convention', start_urls: [s.url('/')] });
    expect(job.status).toBe('completed');
    expect(await storedCode(job.source_id)).toEqual({
      [s.url('/')]: ['home_html()'],
      [s.url('/guide')]: ['guide_twin()'],
      [s.url('/ref.html')]: ['ref_twin()'],
    });
    expect(s.count('/guide')).toBe(0);
    expect(s.count('/ref.html')).toBe(0);
    // The start page's twin was probed (the convention's `index.html.md`), was not there, and the HTML was read.
    expect(s.count('/index.html.md')).toBe(1);
    expect(job.routes).toEqual({ html: 1, markdown_twin: 2, llms_full: 0 });
  });

  it('prefer_markdown never reads only HTML: no llms files, no twins', async () => {
    const s = await site();
    twinSite(s);
    s.set('/llms.txt', { headers: TEXT, body: '# Lib\n\n- [Page](/page.md)\n' });
    s.set('/llms-full.txt', { headers: TEXT, body: markdownPage('Home', 'home_full()') });
    const job = await crawlToEnd(db, db.config, { name: 'twins-never', start_urls: [s.url('/')], prefer_markdown: 'never' });
    expect(job.status).toBe('completed');
    expect(job.prefer_markdown).toBe('never');
    expect(await storedCode(job.source_id)).toEqual({
      [s.url('/')]: ['home_html()'],
      [s.url('/broken')]: ['broken_html()'],
      [s.url('/page')]: ['page_html()'],
      [s.url('/shell')]: ['shell_html()'],
    });
    expect(paths(s)).toEqual(['/', '/broken', '/page', '/shell']);
    expect(job.routes).toEqual({ html: 4, markdown_twin: 0, llms_full: 0 });
  });
});

describe('routes on every surface', () => {
  it('crawl status, the REST job and MCP get_crawl_status count the pages of each route', async () => {
    const s = await site();
    twinSite(s);
    const job = await crawlToEnd(db, db.config, { name: 'routes-surfaces', start_urls: [s.url('/')] });
    const routes = { html: 2, markdown_twin: 2, llms_full: 0 };
    expect(job.routes).toEqual(routes);

    const text = await runCli(['crawl', 'status', job.job_id], { env: db.env });
    expect(String(text.stdout)).toContain('read:     2 HTML, 2 markdown twins');
    const json = JSON.parse(String((await runCli(['crawl', 'status', job.job_id, '--json'], { env: db.env })).stdout)) as CrawlJob;
    expect(json.routes).toEqual(routes);

    const daemon = await startTestDaemon(db.config, { routes: docsIndexRoutes });
    try {
      const res = await fetch(`${daemon.base}/api/crawl-jobs/${job.job_id}`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as CrawlJob).routes).toEqual(routes);
    } finally {
      await daemon.close();
    }

    const client = await connectMcpClient(db);
    try {
      const result = await client.callTool({ name: 'get_crawl_status', arguments: { job_id: job.job_id } });
      expect((result.structuredContent as { routes: unknown }).routes).toEqual(routes);
      expect(resultText(result)).toContain('Read from: 2 HTML, 2 markdown twins.');
    } finally {
      await client.close();
    }
  });

  it('crawl start --prefer-markdown never reads HTML only; a value other than auto or never is refused with a hint', async () => {
    const s = await site();
    twinSite(s);
    const r = await runCli(['crawl', 'start', s.url('/'), '--name', 'cli-never', '--prefer-markdown', 'never', '--wait', '--json'], { env: db.env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const job = JSON.parse(String(r.stdout)) as CrawlJob;
    expect(job.routes).toEqual({ html: 4, markdown_twin: 0, llms_full: 0 });
    expect(s.count('/index.md') + s.count('/page.md') + s.count('/llms.txt') + s.count('/llms-full.txt')).toBe(0);

    const bad = await runCli(['crawl', 'start', s.url('/'), '--name', 'cli-bad', '--prefer-markdown', 'sometimes'], { env: db.env });
    expect(bad.exitCode).not.toBe(0);
    expect(String(bad.stderr)).toMatch(/^Error: .*prefer_markdown|--prefer-markdown/m);
    expect(String(bad.stderr)).toMatch(/^Hint: .*auto or never/m);
  });
});
