import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { crawlWorkerService, uploadWorkerService } from '../../src/daemon/services.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { generatedSite, serveSite } from '../helpers/site.js';
import type { TestSite } from '../helpers/site.js';
import { ServerMessage } from '../../src/daemon/ws-protocol.js';

let db: TestDatabase;
let site: TestSite;
let daemon: Awaited<ReturnType<typeof startTestDaemon>>;

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${daemon.base}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function waitFor<T>(fn: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out; last value ${JSON.stringify(v).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  site = await serveSite(generatedSite(4));
  daemon = await startTestDaemon(db.config, { routes: docsIndexRoutes, services: [crawlWorkerService, uploadWorkerService] });
});
afterAll(async () => {
  await daemon?.close();
  await site?.close();
  await db?.drop();
});

describe('crawl routes', () => {
  it('rejects bad crawl requests with 422 and the zod issues, malformed JSON with 400, and creates nothing', async () => {
    const depth = await api('POST', '/api/crawl-jobs', { start_urls: [`${site.base}/`], max_depth: 4 });
    expect(depth.status).toBe(422);
    expect(depth.body).toMatchObject({ code: 'validation_error' });
    expect(depth.body.details.length).toBeGreaterThan(0);
    const url = await api('POST', '/crawl/init', { start_urls: ['not a url'] });
    expect(url.status).toBe(422);
    const conc = await api('POST', '/crawl/init', { start_urls: [`${site.base}/`], max_concurrent_crawls: 21 });
    expect(conc.status).toBe(422);
    const malformed = await api('POST', '/api/crawl-jobs', '{"start_urls": [');
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({ error: 'Malformed JSON body.', code: 'bad_request', details: [] });
    expect((await db.pool.query('SELECT count(*)::int AS n FROM crawl_jobs')).rows[0].n).toBe(0);
    expect((await api('GET', '/api/crawl-jobs/00000000-0000-0000-0000-000000000000')).status).toBe(404);
  });

  it('crawls a site end to end with live WebSocket events, then serves search, snippets and sources', async () => {
    const ws = new WebSocket(`${daemon.base.replace('http', 'ws')}/ws`);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const events: any[] = [];
    ws.on('message', (m) => events.push(JSON.parse(String(m))));

    const created = await api('POST', '/crawl/init', { start_urls: [`${site.base}/`], name: 'testlib', version: '1.0', max_depth: 1 });
    expect(created.status).toBe(202);
    const jobId = created.body.job_id as string;
    expect(created.body).toMatchObject({ status: expect.stringMatching(/queued|running/), name: 'testlib', max_depth: 1 });

    const done = await waitFor(
      () => api('GET', `/crawl/status/${jobId}`),
      (r) => ['completed', 'failed', 'cancelled'].includes(r.body.status),
    );
    expect(done.body).toMatchObject({ status: 'completed', pages_crawled: 5, pages_failed: 0 });
    expect(done.body.snippets_stored).toBe(9);
    await expect.poll(() => events.some((e) => e.type === 'job_complete' && e.job_id === jobId), { timeout: 10_000 }).toBe(true);
    expect(events.some((e) => e.type === 'crawl_progress' && e.job_id === jobId && typeof e.counters === 'object')).toBe(true);
    // What the daemon sends is what docs/websocket.md documents: the one schema of the protocol.
    for (const event of events) expect(ServerMessage.safeParse(event).error).toBeUndefined();
    ws.close();

    const list = await api('GET', '/api/crawl-jobs?limit=5');
    expect(list.body).toMatchObject({ total: 1, limit: 5, offset: 0 });
    expect(list.body.items[0].job_id).toBe(jobId);
    expect((await api('GET', '/crawl/jobs')).body.items).toHaveLength(1);
    expect((await api('GET', `/api/crawl-jobs/${jobId}`)).body.job_id).toBe(jobId);
    const cancelDone = await api('POST', `/crawl/cancel/${jobId}`);
    expect(cancelDone.status).toBe(409);

    const search = await api('GET', '/api/search?q=open%20widget&limit=3');
    expect(search.status).toBe(200);
    expect(search.body).toMatchObject({ limit: 3, offset: 0 });
    expect(search.body.items[0].code).toContain('open_widget');
    expect(search.body.items[0]).toMatchObject({ source_name: 'testlib', version: '1.0', match: 'snippet' });
    const post = await api('POST', '/search', { query: 'close_widget', language: 'py', limit: 2 });
    expect(post.status).toBe(200);
    expect(post.body.items.length).toBeGreaterThan(0);
    expect(post.body.items.every((i: any) => i.language === 'python')).toBe(true);
    expect((await api('POST', '/search', { query: 'x', limit: 101 })).status).toBe(422);
    expect((await api('GET', '/api/search')).status).toBe(422);
    // The search text under either name on both routes (issue #49: GET took only q, POST only query).
    const byQuery = await api('GET', '/api/search?query=open%20widget&limit=3');
    expect(byQuery.status).toBe(200);
    expect(byQuery.body.items.map((i: any) => i.id)).toEqual(search.body.items.map((i: any) => i.id));
    const postQ = await api('POST', '/search', { q: 'close_widget', language: 'py', limit: 2 });
    expect(postQ.status).toBe(200);
    expect(postQ.body.items.map((i: any) => i.id)).toEqual(post.body.items.map((i: any) => i.id));
    expect((await api('GET', '/api/search?q=open&query=open')).status).toBe(200);
    const conflicting = await api('GET', '/api/search?q=open&query=close');
    expect(conflicting.status).toBe(422);
    expect(JSON.stringify(conflicting.body)).toMatch(/once: as query or as q/);
    expect((await api('POST', '/search', { limit: 2 })).status).toBe(422);

    const snippet = await api('GET', `/snippets/${search.body.items[0].id}`);
    expect(snippet.status).toBe(200);
    expect(snippet.body).toMatchObject({ id: search.body.items[0].id, source_name: 'testlib', related: [] });

    const sources = await api('GET', '/api/sources');
    expect(sources.body).toMatchObject({ total: 1, items: [{ name: 'testlib', version: '1.0', snippet_count: 9 }] });
    const sourceId = sources.body.items[0].id as string;
    const details = await api('GET', `/api/sources/${sourceId}`);
    expect(details.body.crawl_config.max_depth).toBe(1);
    const snippets = await api('GET', `/api/sources/${sourceId}/snippets?limit=4`);
    expect(snippets.body).toMatchObject({ total: 9, limit: 4 });
    expect(snippets.body.items).toHaveLength(4);
    const renamed = await api('PUT', `/api/sources/${sourceId}`, { name: 'testlib-renamed', add_url_patterns: ['*/guide/*'] });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe('testlib-renamed');
    expect((await api('PUT', `/api/sources/${sourceId}`, { bogus: 1 })).status).toBe(422);

    const recrawl = await api('POST', `/api/sources/${sourceId}/recrawl`);
    expect(recrawl.status).toBe(202);
    const again = await waitFor(
      () => api('GET', `/api/crawl-jobs/${recrawl.body.job_id}`),
      (r) => ['completed', 'failed', 'cancelled'].includes(r.body.status),
    );
    expect(again.body.status).toBe('completed');
    expect(again.body.pages_skipped).toBeGreaterThan(0);

    const stats = await api('GET', '/api/statistics/dashboard');
    expect(stats.body.totals).toMatchObject({ sources: 1, snippets: 9 });
    expect(stats.body.jobs.crawl.completed).toBe(2);
    // Each recent job carries its failed count, so a text view can read a completed job with failures as partial.
    expect(stats.body.recent_jobs[0]).toMatchObject({ kind: 'crawl', status: 'completed', failed: 0 });

    const deleted = await api('DELETE', `/api/sources/${sourceId}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ snippets: 9 });
    expect((await api('GET', `/api/sources/${sourceId}`)).status).toBe(404);
    expect((await db.pool.query('SELECT count(*)::int AS n FROM snippets')).rows[0].n).toBe(0);
  });
});

describe('upload routes', () => {
  it('uploads markdown as JSON and a file as multipart, both searchable after processing', async () => {
    const md = await api('POST', '/upload/markdown', {
      content: '# Frobnicator\n\nFrobnicate a value.\n\n```python\nfrobnicate(value, level=3)\n```\n',
      source_url: 'https://example.com/frob.md',
      title: 'Frobnicator',
    });
    expect(md.status).toBe(202);
    const finished = await waitFor(
      () => api('GET', `/upload/status/${md.body.id}`),
      (r) => ['completed', 'failed'].includes(r.body.status),
    );
    expect(finished.body).toMatchObject({ status: 'completed', file_count: 1, processed_files: 1, snippets_extracted: 1 });

    const form = new FormData();
    form.append('file', new Blob(['# Gizmo\n\n    gizmo --spin fast\n'], { type: 'text/markdown' }), 'gizmo.md');
    form.append('source_url', 'https://example.com/gizmo.md');
    const file = await fetch(`${daemon.base}/upload/file`, { method: 'POST', body: form });
    expect(file.status).toBe(202);
    const fileJob = (await file.json()) as any;
    await waitFor(
      () => api('GET', `/upload/status/${fileJob.id}`),
      (r) => r.body.status === 'completed',
    );
    const found = await api('GET', '/api/search?q=frobnicate');
    expect(found.body.items[0].code).toContain('frobnicate(value');
    expect((await api('GET', '/api/search?q=gizmo%20spin')).body.items.length).toBeGreaterThan(0);
  });

  it('refuses an oversize multipart file with 413 and a missing file part with 422', async () => {
    const big = new FormData();
    big.append('file', new Blob([new Uint8Array(11 * 1024 * 1024).fill(97)]), 'big.md');
    const res = await fetch(`${daemon.base}/upload/file`, { method: 'POST', body: big });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ code: 'payload_too_large' });
    const none = new FormData();
    none.append('source_url', 'https://example.com/x.md');
    const missing = await fetch(`${daemon.base}/upload/file`, { method: 'POST', body: none });
    expect(missing.status).toBe(422);
    expect((await api('POST', '/upload/markdown', { content: '' })).status).toBe(422);
    expect((await api('GET', '/upload/status/not-a-uuid')).status).toBe(422);
  });
});
