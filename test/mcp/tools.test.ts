import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCrawlWorkers } from '../../src/core/crawl/index.js';
import type { CrawlWorkers } from '../../src/core/crawl/index.js';
import { createMcpServer } from '../../src/core/mcp/server.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { FAST_WORKERS, resultText, serveSite, ALL_TOOLS } from './helpers.js';

/**
 * Every tool through the official SDK Client over an in-memory transport pair, on a real database that the
 * tools themselves fill: init_crawl crawls the fixture site with the crawler's workers running in this
 * process, and get_crawl_status follows the crawl to its end.
 */

let db: TestDatabase;
let site: Awaited<ReturnType<typeof serveSite>>;
let workers: CrawlWorkers;
let client: Client;
let sourceId: string;

async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult & { text: string }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  return { ...result, text: resultText(result) };
}

interface JobStatus {
  job_id: string;
  status: string;
  source_id: string;
  pages_crawled: number;
  snippets_stored: number;
}

async function crawlThroughMcp(args: Record<string, unknown>): Promise<JobStatus> {
  const started = await call('init_crawl', args);
  if (started.isError) throw new Error(started.text);
  const { job_id } = started.structuredContent as unknown as JobStatus;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const status = (await call('get_crawl_status', { job_id })).structuredContent as unknown as JobStatus;
    if (status.status === 'completed') return status;
    if (status.status !== 'queued' && status.status !== 'running') throw new Error(`crawl ended ${status.status}`);
    if (Date.now() > deadline) throw new Error('crawl did not finish in 60 s');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  site = await serveSite();
  workers = await startCrawlWorkers(db, db.config, FAST_WORKERS);
  const server = createMcpServer({ pool: db.pool, info: db.info, config: db.config });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  client = new Client({ name: 'docdex-test', version: '1.0.0' });
  await client.connect(clientSide);
  const crawled = await crawlThroughMcp({
    name: 'quillstack',
    start_urls: [`${site.url}/`],
    max_depth: 2,
    metadata: { description: 'A made-up web toolkit used to test docdex.' },
  });
  expect(crawled.pages_crawled).toBe(4);
  sourceId = crawled.source_id;
  // A second library with a similar name, so "clearly best" has something to beat.
  await crawlThroughMcp({ name: 'quillstack-extras', start_urls: [`${site.url}/guide/install.html`], max_depth: 0 });
});

afterAll(async () => {
  await client?.close();
  await workers?.stop();
  await site?.close();
  await db?.drop();
});

describe('tools/list', () => {
  it('lists the tools with titles, descriptions, schemas and correct annotations', async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect([...byName.keys()].sort()).toEqual(ALL_TOOLS);
    for (const tool of tools) {
      expect(tool.title).toBeTruthy();
      expect(tool.description!.length).toBeGreaterThan(80);
      expect(tool.inputSchema.type).toBe('object');
    }
    for (const readOnly of ['search_libraries', 'get_content', 'get_page_markdown', 'get_crawl_status', 'get_project_libraries', 'search_project']) {
      expect(byName.get(readOnly)!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, openWorldHint: false });
    }
    expect(byName.get('init_crawl')!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true });
    expect(byName.get('cancel_crawl')!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.get('add_library')!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, openWorldHint: true });
    expect(byName.get('add_library')!.inputSchema.required).toEqual(['specs']);

    const props = (name: string) => byName.get(name)!.inputSchema.properties as Record<string, Record<string, unknown>>;
    expect(props('get_content').limit).toMatchObject({ default: 20, maximum: 100 });
    expect(props('get_content').page).toMatchObject({ default: 1, minimum: 1 });
    // library_id or project, exactly one: the tool checks it and says so (test/project/ask-mcp.test.ts).
    expect(byName.get('get_content')!.inputSchema.required).toBeUndefined();
    expect(byName.get('search_project')!.inputSchema.required).toEqual(['query']);
    expect(props('search_libraries').limit).toMatchObject({ default: 20, maximum: 100 });
    expect(byName.get('search_libraries')!.inputSchema.required ?? []).toEqual([]);
    expect(props('get_page_markdown').chunk_size).toMatchObject({ default: 4000 });
    expect(props('init_crawl').max_concurrent_crawls).toMatchObject({ default: 20, maximum: 20 });
    expect(props('init_crawl').max_depth).toMatchObject({ default: 1, minimum: 0, maximum: 3 });
    expect(byName.get('init_crawl')!.inputSchema.required).toEqual(['start_urls']);
  });
});

describe('search_libraries', () => {
  it('fuzzy-matches a misspelt name and marks the clear winner as selected', async () => {
    const r = await call('search_libraries', { query: 'Quillstak' });
    expect(r.isError).toBeFalsy();
    const s = r.structuredContent as { selected_id: string | null; libraries: Array<{ id: string; name: string; selected: boolean; snippet_count: number }> };
    expect(s.libraries[0]!.name).toBe('quillstack');
    expect(s.selected_id).toBe(sourceId);
    expect(s.libraries[0]!.selected).toBe(true);
    expect(s.libraries[0]!.snippet_count).toBeGreaterThanOrEqual(5);
    expect(r.text).toContain(`Selected: quillstack (id ${sourceId})`);
    expect(r.text).toMatch(/quillstack {2}\[selected\]/);
  });

  it('selects an exact name over a longer one that contains it', async () => {
    const r = await call('search_libraries', { query: 'QUILLSTACK' });
    const s = r.structuredContent as { selected_id: string | null; libraries: Array<{ name: string }> };
    expect(s.libraries.map((l) => l.name)).toEqual(['quillstack', 'quillstack-extras']);
    expect(s.selected_id).toBe(sourceId);
  });

  it('selects nothing when no library clearly wins', async () => {
    const r = await call('search_libraries', { query: 'stack' });
    const s = r.structuredContent as { selected_id?: string; libraries: unknown[] };
    expect(s.libraries.length).toBe(2);
    expect(s.selected_id).toBeUndefined();
    expect(r.text).toContain('No single library is a clear match');
  });

  it('lists everything without a query, with pagination', async () => {
    const all = await call('search_libraries', {});
    expect((all.structuredContent as { pagination: { total: number } }).pagination.total).toBe(2);
    const page2 = await call('search_libraries', { limit: 1, page: 2 });
    const p = page2.structuredContent as { libraries: Array<{ name: string }>; pagination: Record<string, unknown> };
    expect(p.libraries).toHaveLength(1);
    expect(p.pagination).toMatchObject({ page: 2, limit: 1, total: 2, total_pages: 2, has_more: false });
    expect(page2.text).toContain('page 2 of 2');
  });

  it('rejects a limit above 100 with an actionable isError result', async () => {
    const r = await call('search_libraries', { limit: 500 });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/Invalid arguments for search_libraries:\n- limit: .*100/);
    expect(r.text).toContain('Fix these arguments');
  });
});

describe('get_content', () => {
  it('returns formatted snippets: header with count and page, separators, fenced code with language, source URLs', async () => {
    const r = await call('get_content', { library_id: 'quillstack', query: 'route decorator path parameters', fresh: true });
    expect(r.isError).toBeFalsy();
    const [header] = r.text.split('\n');
    expect(header).toMatch(/^quillstack \(library_id [0-9a-f-]{36}\) — \d+ snippets? match(es)? "route decorator path parameters" — page 1 of \d+, showing 1–\d+\.$/);
    expect(r.text).toContain('----------------------------------------');
    expect(r.text).toMatch(/## 1\. .+\npython · quillstack · http:\/\/127\.0\.0\.1:\d+\/guide\/routing\.html/);
    expect(r.text).toContain('```python\nfrom quillstack import App, Response');
    expect(r.text).toContain('@app.route("/items/<item_id>", methods=["GET"])');
  });

  it('browses a library without a query and pages through it', async () => {
    const first = await call('get_content', { library_id: sourceId, limit: 2, fresh: true });
    expect(first.text).toMatch(/— \d+ snippets — page 1 of \d+, showing 1–2\./);
    expect(first.text).toContain(`More results: call get_content with library_id="${sourceId}", page=2.`);
    const second = await call('get_content', { library_id: sourceId, limit: 2, page: 2, fresh: true });
    expect(second.text).toContain('showing 3–4');
    const firstCode = first.text.match(/```\w*\n([\s\S]*?)\n```/g);
    const secondCode = second.text.match(/```\w*\n([\s\S]*?)\n```/g);
    expect(firstCode).not.toEqual(secondCode);
  });

  it('cuts long code at the token budget with a visible marker', async () => {
    const r = await call('get_content', { library_id: 'quillstack', query: 'configure_everything', limit: 1, fresh: true });
    expect(r.text).toContain('def configure_everything(app):');
    // The section that holds the code answers first (its heading and prose name it too); it is cut the same way
    // and points at itself.
    expect(r.text).toMatch(
      /\[… (code truncated: showing \d+ of \d+ tokens, \d+ more lines not shown\. Full code|section truncated: showing \d+ of \d+ tokens\. The whole section): call get_page_markdown with url="[^"]+\/api\/reference\.html[^"]*"\.\]/,
    );
    expect(r.text).not.toContain('app.method_400(');
  });

  it('resolves a misspelt library name and says so', async () => {
    const r = await call('get_content', { library_id: 'quilstack', query: 'install', fresh: true });
    expect(r.isError).toBeFalsy();
    expect(r.text).toContain('using the closest match, quillstack');
    expect(r.text).toContain('pip install quillstack');
  });

  it('answers an unknown library with the closest names', async () => {
    const r = await call('get_content', { library_id: 'zebrafish-orm' });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('No library matches "zebrafish-orm". Closest names: quillstack');
    expect(r.text).toContain('search_libraries');
  });

  it('reports a wrong argument type as an isError result naming the argument', async () => {
    const r = await call('get_content', { library_id: 42 });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/- library_id: .*string/i);
  });
});

describe('get_page_markdown', () => {
  it('finds a page from a snippet URL with a fragment and without the trailing slash', async () => {
    // The fragment names a section: that section alone (issue #49), and the page whole without it.
    const r = await call('get_page_markdown', { url: `${site.url}/guide/routing.html#decorators` });
    expect(r.isError).toBeFalsy();
    expect(r.text).toContain('Section: Routing requests › Route decorators');
    expect(r.text).toContain('Route decorators');
    expect(r.text).not.toContain('add_timing_header');
    const whole = await call('get_page_markdown', { url: `${site.url}/guide/routing.html` });
    expect(whole.text).toContain('Whole page');
    expect(whole.text).toContain('add_timing_header');
    const unknown = await call('get_page_markdown', { url: `${site.url}/guide/routing.html#no-such-anchor` });
    expect(unknown.text).toContain('No section of this page has the anchor #no-such-anchor; this is the page from its start.');
    expect(unknown.text).toContain('add_timing_header');
    const home = await call('get_page_markdown', { url: site.url });
    expect(home.isError).toBeFalsy();
    expect(home.text).toContain('Quick start');
  });

  it('pages through a long page in chunks that never split a code fence', async () => {
    const first = await call('get_page_markdown', { url: `${site.url}/api/reference.html`, chunk_size: 600 });
    const meta = first.structuredContent as { total_chunks: number; has_more: boolean; chunk_index: number; total_tokens: number; next_chunk_index: number };
    expect(meta.total_chunks).toBeGreaterThan(5);
    expect(meta).toMatchObject({ chunk_index: 0, has_more: true, next_chunk_index: 1 });
    expect(first.text).toContain(`Chunk 1 of ${meta.total_chunks} (chunk_index 0`);
    expect(first.text).toContain(`chunk_index=1, chunk_size=600`);
    let all = '';
    for (let i = 0; i < meta.total_chunks; i++) {
      const r = await call('get_page_markdown', { url: `${site.url}/api/reference.html`, chunk_index: i, chunk_size: 600 });
      const m = r.structuredContent as { tokens: number; has_more: boolean };
      expect(m.tokens).toBeLessThanOrEqual(600);
      expect(m.has_more).toBe(i < meta.total_chunks - 1);
      const body = r.text.split('\n\n---\n\n').slice(1).join('\n\n---\n\n');
      expect((body.match(/^```/gm) ?? []).length % 2).toBe(0);
      all += `${body}\n`;
    }
    expect(all).toContain('App.method_1');
    expect(all).toContain('App.method_40');
    expect(all).toContain('app.method_400(');
  });

  it('caps the text at max_tokens and says where to continue', async () => {
    const r = await call('get_page_markdown', { url: `${site.url}/api/reference.html`, max_tokens: 300 });
    const m = r.structuredContent as { tokens: number; has_more: boolean; next_chunk_index?: number };
    expect(m.tokens).toBeLessThanOrEqual(300);
    expect(m.has_more).toBe(true);
    expect(r.text).toContain('More follows: call get_page_markdown');
  });

  it('points max_tokens at the chunk that continues right after its text', async () => {
    const url = `${site.url}/api/reference.html`;
    const head = await call('get_page_markdown', { url, max_tokens: 300 });
    const m = head.structuredContent as { chunk_index: number; chunk_size: number; next_chunk_index?: number };
    expect(m).toMatchObject({ chunk_index: 0, chunk_size: 300, next_chunk_index: 1 });
    expect(head.text).toContain('chunk_index=1, chunk_size=300');
    const next = await call('get_page_markdown', { url, chunk_index: m.next_chunk_index, chunk_size: m.chunk_size });
    const bodyOf = (text: string) =>
      text
        .split('\n\n---\n\n')
        .slice(1)
        .join('\n\n---\n\n')
        .replace(/^<documentation source="third_party">\n/, '')
        .replace(/\n<\/documentation>$/, '');
    const first = bodyOf(head.text);
    const second = bodyOf(next.text);
    // Reading on neither repeats the text already returned nor skips any: the two parts are the page's start.
    expect(second.length).toBeGreaterThan(0);
    expect(first).not.toContain(second.slice(0, 80));
    const whole = bodyOf((await call('get_page_markdown', { url, chunk_size: 100_000 })).text);
    const end = whole.indexOf(first.slice(-60)) + 60;
    expect(whole.indexOf(first.slice(0, 60))).toBe(0);
    expect(whole.slice(end).trimStart().startsWith(second.slice(0, 200))).toBe(true);
  });

  it('serves the stored version of a page, not a cached chunking of an older one', async () => {
    const url = `${site.url}/guide/routing.html`;
    const before = await call('get_page_markdown', { url, chunk_size: 200 });
    expect(before.text).toContain('Route decorators');
    const { rows } = await db.pool.query<{ markdown: string }>('SELECT markdown FROM documents WHERE url = $1 AND source_id = $2', [url, sourceId]);
    try {
      await db.pool.query("UPDATE documents SET markdown = '# Rewritten\n\nNew text only.', updated_at = now() + interval '1 second' WHERE url = $1 AND source_id = $2", [url, sourceId]);
      const after = await call('get_page_markdown', { url, chunk_size: 200 });
      expect(after.text).toContain('New text only.');
      expect(after.text).not.toContain('Route decorators');
    } finally {
      await db.pool.query("UPDATE documents SET markdown = $1, updated_at = now() + interval '2 seconds' WHERE url = $2 AND source_id = $3", [rows[0]!.markdown, url, sourceId]);
    }
  });

  it('rejects a chunk index past the end, and an unknown URL with similar ones', async () => {
    const past = await call('get_page_markdown', { url: `${site.url}/guide/install.html`, chunk_index: 5 });
    expect(past.isError).toBe(true);
    expect(past.text).toContain('chunk_index 5 is out of range: this page has 1 chunk');
    const missing = await call('get_page_markdown', { url: `${site.url}/guide/instal.html` });
    expect(missing.isError).toBe(true);
    expect(missing.text).toContain(`${site.url}/guide/install.html`);
  });
});

/** A crawl job in its LLM stage, written straight into the database, through get_crawl_status and cancel_crawl. */
async function expectEnhancingJobReported(): Promise<void> {
  const { rows } = await db.pool.query<{ id: string }>(
    `INSERT INTO crawl_jobs (source_id, name, status, start_urls, llm_enhance, started_at) VALUES ($1, 'quillstack', 'enhancing', ARRAY['https://x.test/'], true, now()) RETURNING id`,
    [sourceId],
  );
  const jobId = rows[0]!.id;
  const status = await call('get_crawl_status', { job_id: jobId });
  expect(status.text).toContain(`Crawl job ${jobId} (quillstack): enhancing.`);
  expect(status.text).toContain(`get_crawl_status with job_id="${jobId}" again`);
  expect(status.structuredContent).toMatchObject({ status: 'enhancing', llm_pages_total: 0, llm_pages_done: 0 });
  const cancelled = await call('cancel_crawl', { job_id: jobId });
  expect(cancelled.isError).toBeFalsy();
  expect((await db.pool.query('SELECT status FROM crawl_jobs WHERE id = $1', [jobId])).rows[0]).toEqual({ status: 'cancelled' });
}

describe('crawl tools', () => {
  it('crawled the site through init_crawl with the MCP default concurrency', async () => {
    const jobs = await db.pool.query<{ id: string; max_concurrent: number; status: string }>('SELECT id, max_concurrent, status FROM crawl_jobs WHERE source_id = $1', [sourceId]);
    expect(jobs.rows.map((j) => [j.max_concurrent, j.status])).toEqual([[20, 'completed']]);
    const jobId = jobs.rows[0]!.id;
    const status = await call('get_crawl_status', { job_id: jobId.slice(0, 8) });
    expect(status.text).toContain(`Crawl job ${jobId} (quillstack): completed.`);
    expect(status.text).toMatch(/Pages: 4 crawled/);
    expect(status.text).toContain('get_content with library_id="quillstack"');
  });

  it("reports a job in its enhancing stage with the LLM stage's progress, and cancels it", expectEnhancingJobReported);

  it('starts a crawl, reports it while it runs, and cancels it once', async () => {
    const started = await call('init_crawl', { start_urls: [`${site.url}/slow/`], name: 'slow-docs', max_depth: 0 });
    expect(started.isError).toBeFalsy();
    const job = started.structuredContent as { job_id: string; status: string; name: string };
    expect(job.name).toBe('slow-docs');
    expect(started.text).toContain(`job_id ${job.job_id}`);
    expect(started.text).toContain(`get_crawl_status with job_id="${job.job_id}"`);
    expect(started.text).toContain(`cancel_crawl with job_id="${job.job_id}"`);
    expect(started.text).toContain('up to 20 pages at a time');

    const status = await call('get_crawl_status', { job_id: job.job_id });
    expect((status.structuredContent as { status: string }).status).toMatch(/^(queued|running)$/);

    const cancelled = await call('cancel_crawl', { job_id: job.job_id });
    expect(cancelled.isError).toBeFalsy();
    expect((cancelled.structuredContent as { status: string }).status).toBe('cancelled');
    expect(cancelled.text).toContain('docdex crawl resume');
    const again = await call('cancel_crawl', { job_id: job.job_id });
    expect(again.isError).toBe(true);
    expect(again.text).toContain('already cancelled');
  });

  it('leaves no library behind when a crawl stores nothing, and says so', async () => {
    const started = await call('init_crawl', { start_urls: [`${site.url}/no-such-page.html`], name: 'nothing-stored', max_depth: 0 });
    const { job_id } = started.structuredContent as { job_id: string };
    const deadline = Date.now() + 30_000;
    let status = await call('get_crawl_status', { job_id });
    while ((status.structuredContent as { status: string }).status !== 'failed') {
      if (Date.now() > deadline) throw new Error(`crawl did not fail: ${status.text}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      status = await call('get_crawl_status', { job_id });
    }
    expect(status.text).toContain('no library was created');
    expect(status.structuredContent).not.toHaveProperty('source_id');
    const libraries = await call('search_libraries', { query: 'nothing-stored' });
    expect((libraries.structuredContent as { libraries: Array<{ name: string }> }).libraries.map((l) => l.name)).not.toContain('nothing-stored');
  });

  it('refuses a crawl request the crawler would not accept', async () => {
    const bad = await call('init_crawl', { start_urls: ['ftp://example.com/'] });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain('start_urls');
    const tooMany = await call('init_crawl', { start_urls: ['https://example.com/'], max_concurrent_crawls: 21 });
    expect(tooMany.isError).toBe(true);
    expect(tooMany.text).toContain('max_concurrent_crawls');
  });

  it('reports an unknown job id as an isError result', async () => {
    const r = await call('get_crawl_status', { job_id: '00000000-0000-4000-8000-000000000000' });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('No crawl job 00000000-0000-4000-8000-000000000000');
  });
});

describe('protocol errors', () => {
  it('answers an unknown tool with JSON-RPC invalid params, and keeps serving', async () => {
    const error = await client.callTool({ name: 'get_everything', arguments: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((error as McpError).message).toContain('Unknown tool: get_everything. Available tools:');
    const ok = await call('search_libraries', {});
    expect(ok.isError).toBeFalsy();
  });
});
